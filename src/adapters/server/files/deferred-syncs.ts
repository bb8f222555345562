/**
 * @module
 * Audit day appends whose data sync waits for the next head write (docs/storage.md#fsync-policy):
 * with `FSYNC=audit`, a chained append used to flush its head, then its day, one after the other.
 * The head holds the newest two entries (core/audit/chain.ts), so the day's append may stay
 * unflushed until the next head write, whose flush runs beside the day's: one round of flushes
 * per append instead of two in a row. Each pending file keeps its descriptor open until flushed.
 */
import { closeSync } from "node:fs";
import { descriptors } from "./file-driver.ts";

/** The day files appended to without a data sync, flushed together with the next head write. */
export class DeferredSyncs {
  // path -> a descriptor open on it, written through and not yet data-synced.
  #pending = new Map<string, number>();
  // Every flush started, so a later one also waits for those still running (their files left the map).
  #flushing: Promise<void> = Promise.resolve();

  /** Keeps `fd` (open on `path`, just written) until the next {@link DeferredSyncs.flush}; takes ownership of it. */
  defer(path: string, fd: number): void {
    const older = this.#pending.get(path);
    this.#pending.set(path, fd);
    // The same file: one data sync covers both. A file replaced since: the replacement was synced.
    if (older !== undefined) closeSync(older);
  }

  /** True when a write to `path` awaits its flush. */
  isPending(path: string): boolean {
    return this.#pending.has(path);
  }

  /**
   * Data-syncs every pending file (in parallel) and waits for the flushes started before; the
   * descriptors are closed. A file whose sync fails stays pending (retried by the next flush)
   * and the flush rejects, so the write it went with is not acknowledged.
   */
  flush(): Promise<void> {
    const before = this.#flushing;
    if (this.#pending.size === 0) return before;
    const files = [...this.#pending];
    this.#pending.clear();
    const synced = Promise.all(files.map(([path, fd]) =>
      descriptors.dataSync(fd).then(
        () => closeSync(fd),
        (err: unknown) => {
          if (this.#pending.has(path)) closeSync(fd);
          else this.#pending.set(path, fd);
          throw err;
        },
      )
    ));
    const mine = Promise.all([synced, before]).then(() => undefined);
    this.#flushing = mine.catch(() => undefined);
    return mine;
  }
}
