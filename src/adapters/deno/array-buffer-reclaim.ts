/**
 * @module
 * Timely collection of dropped array buffers under Deno (docs/exchange.md#memory-over-http).
 * Deno's V8 collects array buffers only once about 64 MiB of them were allocated since its
 * last collection, so any work that passes bytes through buffers (an export, an import, an
 * upload) grows the process by +64 MiB of garbage before it holds anything. While `serve`
 * runs, a watcher reads the bytes held outside V8's heap every {@link CHECK_MS} and, once they
 * grew by {@link RECLAIM_BYTES} since the last collection, collects (a full collection of the
 * small heap the service keeps: a few milliseconds, at most once per 24 MiB passed through).
 * The collector is node:v8's `--expose-gc`, set at run time, so no command-line flag is needed;
 * where the runtime refuses it, nothing is done.
 */
import process from "node:process";
import v8 from "node:v8";
import vm from "node:vm";

/** Growth of the bytes outside V8's heap that starts a collection. */
export const RECLAIM_BYTES = 24 * 1024 * 1024;
/** How often the watcher looks (reading the figure costs about 25 microseconds). */
const CHECK_MS = 50;

/** V8's collector, exposed at run time; undefined where the runtime does not allow it. */
function collector(): (() => void) | undefined {
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
 * failure to read the figure or to collect stops it quietly. `every`, `external` and `collect`
 * replace the threshold, the figure read and the collector (tests).
 */
export function reclaimArrayBuffers(options: { every?: number; external?: () => number; collect?: () => void } = {}): () => void {
  const collect = options.collect ?? collector();
  if (collect === undefined) return () => {};
  const every = options.every ?? RECLAIM_BYTES;
  const external = options.external ?? (() => process.memoryUsage().external);
  let after = external();
  const timer = setInterval(() => {
    try {
      const now = external();
      // Collected meanwhile by V8 itself: count from there.
      if (now < after) after = now;
      if (now - after < every) return;
      collect();
      after = external();
    } catch {
      clearInterval(timer);
    }
  }, CHECK_MS);
  // Deno's and Node's timers both offer unref: the watcher never holds a finished command open.
  (timer as unknown as { unref?: () => void }).unref?.();
  if (typeof timer === "number") (globalThis as { Deno?: { unrefTimer?: (id: number) => void } }).Deno?.unrefTimer?.(timer);
  return () => clearInterval(timer);
}
