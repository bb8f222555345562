/**
 * @module
 * The locks of a store one process holds (`BlobStore.soleWriter`), with a mark of the store's
 * latest write of each key: a record history that moved a key's head can tell, without reading
 * the head again, that nothing wrote it since (core/history/key-history.ts).
 */
import { KeyedMutex } from "./keyed-mutex.ts";

/** How many keys' marks are kept; past it the oldest is forgotten (then read as unknown). */
const MAX_MARKS = 10_000;

/** The per-key locks of a sole-writer store, and the marks of its writes. */
export class SoleWriterLocks extends KeyedMutex {
  readonly #marks = new Map<string, number>();
  readonly #listeners = new Set<(key: string) => void>();
  // One sequence for every key: a key forgotten then written again never gets a mark it had.
  #sequence = 0;

  /** Called by the store as each write of `key` (put, putStream, update, delete) starts and as it ends, whether it succeeded or not. */
  wrote(key: string): void {
    for (const listener of this.#listeners) listener(key);
    this.#marks.delete(key);
    this.#marks.set(key, ++this.#sequence);
    if (this.#marks.size > MAX_MARKS) this.#marks.delete(this.#marks.keys().next().value ?? key);
  }

  /**
   * Calls `listener` with the key as each write of it (put, putStream, update, delete; not an
   * append) starts and as it ends: what a reader keeps of a key in memory is dropped then.
   */
  onWrite(listener: (key: string) => void): void {
    this.#listeners.add(listener);
  }

  /** A number that changes whenever the store writes `key`; undefined when no write of it is known. */
  lastWrite(key: string): number | undefined {
    return this.#marks.get(key);
  }
}

/**
 * Runs `write` of `key` marked on a store's sole-writer locks (when they are these) as it starts
 * and as it ends: a write in flight already reads as a change.
 */
export function markedWrite<T>(soleWriter: unknown, key: string, write: () => Promise<T>): Promise<T> {
  if (!(soleWriter instanceof SoleWriterLocks)) return write();
  soleWriter.wrote(key);
  const ended = () => soleWriter.wrote(key);
  let written: Promise<T>;
  try {
    written = write();
  } catch (err) {
    ended();
    throw err;
  }
  // Registered before the caller's own await: the end is marked before the caller goes on.
  written.then(ended, ended);
  return written;
}
