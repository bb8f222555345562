/**
 * @module
 * Audit day appends whose data sync is left for later (docs/storage.md#fsync-policy): with
 * `FSYNC=audit`, the head holds every entry whose day is not known flushed (core/audit/chain.ts),
 * so a chained append waits for its head's flush only, and the days are flushed once every few
 * appends (`syncJsonArray`). Each pending file keeps its descriptor open until flushed, so a
 * write-back error is seen by the descriptor that wrote.
 */
import { closeSync } from "node:fs";
import { descriptors } from "./file-driver.ts";

/** The day files appended to without a data sync, each flushed by a {@link DeferredSyncs.flush} of its path. */
export class DeferredSyncs {
  // path -> a descriptor open on it, written through and not yet data-synced.
  #pending = new Map<string, number>();
  // path -> its data sync running (the file left #pending), so a flush of it meanwhile waits for that one.
  #flushing = new Map<string, Promise<void>>();
  // The first data sync that failed: every flush after it fails too (see flush).
  #failure: { error: unknown } | undefined;

  /** Keeps `fd` (open on `path`, just written) until a {@link DeferredSyncs.flush} of `path`; takes ownership of it. */
  defer(path: string, fd: number): void {
    const older = this.#pending.get(path);
    this.#pending.set(path, fd);
    // The same file: one data sync covers both. A file replaced since: the replacement was synced.
    if (older !== undefined) closeSync(older);
  }

  /** Throws the failure of an earlier data sync: no head may be written after one (see flush). */
  throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  /**
   * Data-syncs `fd` (a head just written), its failure sticking as a deferred one's does: a
   * later head could otherwise drop entries that only the unflushed one holds.
   */
  syncNow(fd: number): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure.error);
    return descriptors.dataSync(fd).catch((error: unknown) => {
      this.#failure ??= { error };
      throw error;
    });
  }

  /** True when a write to `path` awaits its flush. */
  isPending(path: string): boolean {
    return this.#pending.has(path);
  }

  /**
   * Data-syncs the pending files among `paths` (in parallel; another user's days are left for
   * their own flush) and waits for the flushes of those paths already running; the descriptors
   * are closed. Once a data sync has failed, this and every later flush reject with that error
   * until the process restarts: after a failed fsync the kernel may have marked the unwritten
   * pages clean, so a retry could succeed without the entries being on disk, and a head written
   * after it would drop entries a power cut then loses (as PostgreSQL since "fsyncgate": stop,
   * do not retry).
   */
  flush(paths: readonly string[]): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure.error);
    const waits: Promise<void>[] = [];
    for (const path of paths) {
      const fd = this.#pending.get(path);
      if (fd === undefined) {
        // Taken by a flush still running: this one is done when that one is.
        const running = this.#flushing.get(path);
        if (running !== undefined) waits.push(running);
        continue;
      }
      this.#pending.delete(path);
      const synced = descriptors.dataSync(fd).then(
        () => closeSync(fd),
        (error: unknown) => {
          closeSync(fd);
          this.#failure ??= { error };
          throw error;
        },
      );
      const settled = synced.catch(() => undefined).finally(() => {
        if (this.#flushing.get(path) === settled) this.#flushing.delete(path);
      });
      this.#flushing.set(path, settled);
      waits.push(synced);
    }
    return Promise.all(waits).then(() => {
      // A running flush of one of the paths may have failed: its failure is this one's too.
      if (this.#failure !== undefined) throw this.#failure.error;
    });
  }
}
