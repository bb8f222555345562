/**
 * @module
 * Where a data key's history is kept in the data store (docs/storage.md#record-history). Every
 * history key starts with the segment `#history`, which no data key can start with (`#` is
 * refused in every key segment: storage/keys.ts), so no document written through the data
 * worker is ever taken for a history, and listing a user's folder (`{uid}/`: case listing,
 * account deletion) never meets one. The last segments (`head`, `log`, `versions`, `contents`) do not
 * end in `.json`, so they cannot be a data key's folder-mates either.
 */

/** The first segment of every history key. */
export const HISTORY_ROOT = "#history";

/** The keys of one data key's history. */
export interface HistoryKeys {
  /**
   * The newest version's record and bytes, rewritten by every write (a compare-and-swap
   * `update`) on a store several processes share; a store one process holds keeps it in memory
   * and has none (newest-versions.ts).
   */
  head: string;
  /** The JSON array of versions, oldest first, item N-1 `{"record", "contents"}` for version N, appended to. */
  log: string;
  /** Before the log (a history written by an earlier release): the JSON array of version records, read and merged into the log. */
  versions: string;
  /** Before the log: the JSON array of version contents, item N-1 for version N. */
  contents: string;
}

/** The history keys of a checked data key (`u1/C-1/data.json` → `#history/u1/C-1/data.json/log`...). */
export function historyKeys(key: string): HistoryKeys {
  const base = `${HISTORY_ROOT}/${key}/`;
  return { head: `${base}head`, log: `${base}log`, versions: `${base}versions`, contents: `${base}contents` };
}

/** The last segments of a history's keys. */
export const HISTORY_PARTS = ["head", "log", "versions", "contents"] as const;

/** The data key whose history `key` is one of the keys of (`#history/u1/C-1/data.json/log` → `u1/C-1/data.json`); undefined for another key. */
export function historyDataKey(key: string): string | undefined {
  if (!isHistoryKey(key)) return undefined;
  const slash = key.lastIndexOf("/");
  return (HISTORY_PARTS as readonly string[]).includes(key.slice(slash + 1)) ? key.slice(HISTORY_ROOT.length + 1, slash) : undefined;
}

/** The prefix that lists the histories of every key under a data-key prefix (`u1/` → `#history/u1/`). */
export function historyPrefix(dataPrefix: string): string {
  return `${HISTORY_ROOT}/${dataPrefix}`;
}

/** Whether a key of the data store belongs to a history (not a document). */
export function isHistoryKey(key: string): boolean {
  return key.startsWith(`${HISTORY_ROOT}/`);
}

/** Whether a key of the data store is one of a history's append-only arrays (`log`, and `versions`, `contents` before it): kept in blocks on S3 and R2. */
export function isHistoryArrayKey(key: string): boolean {
  return isHistoryKey(key) && (key.endsWith("/log") || key.endsWith("/versions") || key.endsWith("/contents"));
}

/** Where a deleted image's bytes are kept in the image store (`#history/images/{id}`): its deletion mark's bytes. */
export function deletedImageKey(imageKey: string): string {
  return `${HISTORY_ROOT}/${imageKey}`;
}

/** Where a deleted image's metadata is kept, with `deleted: true` and `deletedAt`: its deletion mark. */
export function deletedImageMetadataKey(imageKey: string): string {
  return `${HISTORY_ROOT}/${imageKey}.json`;
}
