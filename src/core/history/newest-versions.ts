/**
 * @module
 * The newest version of each data key, kept in memory for a store one process holds
 * (`BlobStore.soleWriter`: files under the data folder's lock, memory), in place of a stored
 * head: there every write of a key runs under the process's lock for it, so the log's last
 * item is the newest version, and a version is one append (docs/storage.md#record-history).
 * One set per store, shared by every history over it (the service, a prune), and dropped for a
 * key whenever the store replaces or deletes one of its history keys (a restore, a prune).
 */
import type { BlobStore } from "../ports.ts";
import { historyDataKey } from "./history-keys.ts";
import type { VersionContents, VersionRecord } from "./version-record.ts";

/** The newest version of a key: its record, the record's hash, and its contents. */
export interface NewestVersion {
  record: VersionRecord;
  /** The hash that the next record's `previous` names. */
  hash: string;
  contents: VersionContents;
}

/** How many keys, and how many of their bytes, are kept; past either the least recently used goes (read from its log again). */
const MAX_KEYS = 8_192;
const MAX_BYTES = 32 * 1024 * 1024;

/** The newest versions kept for one store. */
export class NewestVersions {
  readonly #kept = new Map<string, NewestVersion>();
  #bytes = 0;
  #changes = 0;

  /** A number that changes whenever the store writes a history key other than by an append (a write may then keep nothing it read before). */
  get changes(): number {
    return this.#changes;
  }

  /** The store wrote (or is writing) a history key of `key` other than by an append. */
  changed(key: string): void {
    this.#changes++;
    this.forget(key);
  }

  /** The newest version of `key`, when kept. */
  get(key: string): NewestVersion | undefined {
    return this.#kept.get(key);
  }

  /** Keeps `newest` as the newest version of `key`. */
  set(key: string, newest: NewestVersion): void {
    this.forget(key);
    this.#kept.set(key, newest);
    this.#bytes += newest.record.size;
    for (const [old, kept] of this.#kept) {
      if (this.#kept.size <= MAX_KEYS && this.#bytes <= MAX_BYTES) break;
      this.#kept.delete(old);
      this.#bytes -= kept.record.size;
    }
  }

  /** Forgets what is kept of `key` (read from its log when next asked). */
  forget(key: string): void {
    const kept = this.#kept.get(key);
    if (kept === undefined) return;
    this.#kept.delete(key);
    this.#bytes -= kept.record.size;
  }
}

const byStore = new WeakMap<object, NewestVersions>();

/** The newest versions kept for a store one process holds; undefined for a store several processes may write (no `soleWriter`). */
export function newestVersionsOf(data: BlobStore): NewestVersions | undefined {
  const soleWriter = data.soleWriter;
  if (soleWriter === undefined) return undefined;
  let newest = byStore.get(soleWriter);
  if (newest === undefined) {
    const created = new NewestVersions();
    soleWriter.onWrite((key) => {
      const dataKey = historyDataKey(key);
      if (dataKey !== undefined) created.changed(dataKey);
    });
    byStore.set(soleWriter, newest = created);
  }
  return newest;
}
