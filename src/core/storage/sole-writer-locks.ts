/**
 * @module
 * The locks of a store one process holds (`BlobStore.soleWriter`), and word of the store's
 * writes: a record history keeps each key's newest version in memory and drops it when the
 * store replaces one of the key's history keys (a restore, a prune: core/history/newest-versions.ts).
 */
import { KeyedMutex } from "./keyed-mutex.ts";

/** The per-key locks of a sole-writer store, and the listeners told of its writes. */
export class SoleWriterLocks extends KeyedMutex {
  readonly #listeners = new Set<(key: string) => void>();

  /** Called by the store as each write of `key` (put, putStream, update, delete) starts and as it ends, whether it succeeded or not. */
  wrote(key: string): void {
    for (const listener of this.#listeners) listener(key);
  }

  /**
   * Calls `listener` with the key as each write of it (put, putStream, update, delete; not an
   * append) starts and as it ends: what a reader keeps of a key in memory is dropped then.
   */
  onWrite(listener: (key: string) => void): void {
    this.#listeners.add(listener);
  }
}

/**
 * Runs `write` of `key` told to a store's sole-writer locks (when they are these) as it starts
 * and as it ends: a write in flight already counts as a change.
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
