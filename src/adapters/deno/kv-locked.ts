/**
 * @module
 * Deno KV on a database file that several processes open (two `serve` on one `kv.sqlite3`):
 * SQLite refuses a call while another connection holds the file, with "database is locked",
 * where the other backends wait their turn. A refused call changed nothing (SQLite took no
 * lock for it), so each call is tried again after a short pause until it goes through; past
 * {@link LOCKED_WAIT_MS} the store is reported as not answering, the 500 every backend gives.
 */
import { ServiceError } from "../../core/errors.ts";
import type { DenoKvLike, KvKey } from "./deno-kv-like.ts";

/** How long a call waits for the file at most. */
export const LOCKED_WAIT_MS = 10_000;

const LOCKED = /database (table )?is locked/i;

/** Whether `err` is SQLite refusing a call because another connection holds the database. */
const isLocked = (err: unknown): boolean => err instanceof Error && LOCKED.test(err.message);

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * After the `attempt`-th try failed with `err`: passes on any failure but a locked database,
 * reports the store as not answering once `until` has passed, else pauses (1 ms growing to
 * 50 ms, jittered) before the next try.
 */
async function beforeNextTry(err: unknown, attempt: number, until: number): Promise<void> {
  if (!isLocked(err)) throw err;
  if (Date.now() >= until) throw ServiceError.storeNotAnswering("Deno KV");
  await pause(Math.min(50, 1 + 2 * attempt) * (0.5 + Math.random()));
}

/** Runs `call` until the database lets it through. */
async function whenUnlocked<T>(call: () => Promise<T>): Promise<T> {
  const until = Date.now() + LOCKED_WAIT_MS;
  for (let attempt = 0;; attempt++) {
    try {
      return await call();
    } catch (err) {
      await beforeNextTry(err, attempt, until);
    }
  }
}

type Atomic = ReturnType<DenoKvLike["atomic"]>;

/** An atomic operation written down, so each try commits it anew (a committed or failed one cannot be reused). */
function atomicWhenUnlocked(kv: DenoKvLike): Atomic {
  const steps: ((operation: Atomic) => Atomic)[] = [];
  const recorder: Atomic = {
    check: (...checks) => (steps.push((operation) => operation.check(...checks)), recorder),
    set: (key, value) => (steps.push((operation) => operation.set(key, value)), recorder),
    delete: (key) => (steps.push((operation) => operation.delete(key)), recorder),
    commit: () => whenUnlocked(() => steps.reduce((operation, step) => step(operation), kv.atomic()).commit()),
  };
  return recorder;
}

/** A listing tried again while it has handed out nothing; a refusal after that is passed on. */
async function* listWhenUnlocked<T>(kv: DenoKvLike, selector: { prefix: KvKey }): AsyncGenerator<{ key: KvKey; value: T }> {
  const until = Date.now() + LOCKED_WAIT_MS;
  for (let attempt = 0;; attempt++) {
    let yielded = false;
    try {
      for await (const entry of kv.list<T>(selector)) {
        yielded = true;
        yield entry;
      }
      return;
    } catch (err) {
      if (yielded) throw err;
      await beforeNextTry(err, attempt, until);
    }
  }
}

/** `kv` with every call tried again while another connection holds its database file. */
export function retryingWhenLocked(kv: DenoKvLike): DenoKvLike {
  return {
    get: (key) => whenUnlocked(() => kv.get(key)),
    set: (key, value) => whenUnlocked(() => kv.set(key, value)),
    delete: (key) => whenUnlocked(() => kv.delete(key)),
    list: (selector) => listWhenUnlocked(kv, selector),
    atomic: () => atomicWhenUnlocked(kv),
  };
}
