/**
 * @module
 * Timely collection of dropped buffers under Deno and Bun (docs/exchange.md#memory-over-http).
 * Deno's V8 collects array buffers only once about 64 MiB of them were allocated since its last
 * collection, and Bun's JavaScriptCore collects the buffers a large export passes through later
 * than V8 in Node does, so any work that passes bytes through buffers (an export, an import, an
 * upload) grows the process by tens of megabytes of garbage before it holds anything. The
 * `forensic-annotation` command on Deno and Bun (`serve` and the others) starts a watcher that reads a figure of the process's memory every {@link CHECK_MS} and, once
 * it grew by {@link RECLAIM_BYTES} since the last collection, collects (a full collection of the
 * small heap the service keeps: a few milliseconds, at most once per 24 MiB passed through).
 * Written here: no library hints a runtime's collector.
 */
import process from "node:process";
import v8 from "node:v8";
import vm from "node:vm";

/** Growth of the watched figure that starts a collection. */
export const RECLAIM_BYTES = 24 * 1024 * 1024;
/** How often the watcher looks (reading the figure costs 10 to 25 microseconds). */
const CHECK_MS = 50;

/** What the watcher reads and how it collects. */
export interface ReclaimOptions {
  /** The figure watched, in bytes. */
  measure: () => number;
  /** A full collection; undefined where the runtime offers none (nothing is watched). */
  collect: (() => void) | undefined;
  /** Growth that starts a collection; default {@link RECLAIM_BYTES}. */
  every?: number;
}

/**
 * V8's collector, exposed at run time through node:v8's `--expose-gc` (Node, Deno), so no
 * command-line flag is needed; undefined where the runtime refuses it (Bun).
 */
export function v8Collector(): (() => void) | undefined {
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc: unknown = vm.runInNewContext("gc");
    return typeof gc === "function" ? () => void gc() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts the watcher; answers a function that stops it. Never keeps the process alive, and a
 * failure to read the figure or to collect stops it quietly.
 */
export function reclaimMemory(options: ReclaimOptions): () => void {
  const { measure, collect } = options;
  if (collect === undefined) return () => {};
  const every = options.every ?? RECLAIM_BYTES;
  let after = measure();
  const timer = setInterval(() => {
    try {
      const now = measure();
      // Collected meanwhile by the runtime itself: count from there.
      if (now < after) after = now;
      if (now - after < every) return;
      collect();
      after = measure();
    } catch {
      clearInterval(timer);
    }
  }, CHECK_MS);
  // Deno's, Bun's and Node's timers all offer unref: the watcher never holds a finished command open.
  (timer as unknown as { unref?: () => void }).unref?.();
  if (typeof timer === "number") (globalThis as { Deno?: { unrefTimer?: (id: number) => void } }).Deno?.unrefTimer?.(timer);
  return () => clearInterval(timer);
}

/** Deno: the bytes held outside V8's heap (array buffers), collected with V8's collector. */
export function reclaimArrayBuffersOnDeno(): () => void {
  return reclaimMemory({ measure: () => process.memoryUsage().external, collect: v8Collector() });
}

/**
 * Bun: the resident set (Bun's count of memory outside its heap misses most buffers), collected
 * with `Bun.gc(true)`.
 */
export function reclaimOnBun(): () => void {
  const bun = (globalThis as { Bun?: { gc?: (force: boolean) => void } }).Bun;
  const gc = bun?.gc;
  return reclaimMemory({ measure: () => process.memoryUsage().rss, collect: gc === undefined ? undefined : () => gc.call(bun, true) });
}
