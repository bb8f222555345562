/**
 * @module
 * Where a data key's history is kept in the data store (docs/storage.md#record-history). Every
 * history key starts with the segment `#history`, which no data key can start with (`#` is
 * refused in every key segment: storage/keys.ts), so no document written through the data
 * worker is ever taken for a history, and listing a user's folder (`{uid}/`: case listing,
 * account deletion) never meets one. The last segments (`head`, `versions`, `contents`) do not
 * end in `.json`, so they cannot be a data key's folder-mates either.
 */

/** The first segment of every history key. */
export const HISTORY_ROOT = "#history";

/** The keys of one data key's history. */
export interface HistoryKeys {
  /** The newest version's record and bytes, rewritten by every write (a compare-and-swap `update`). */
  head: string;
  /** The JSON array of version records, oldest first, appended to. */
  versions: string;
  /** The JSON array of version contents (bytes or a deletion mark), item N-1 for version N, appended to. */
  contents: string;
}

/** The history keys of a checked data key (`u1/C-1/data.json` → `#history/u1/C-1/data.json/head`...). */
export function historyKeys(key: string): HistoryKeys {
  const base = `${HISTORY_ROOT}/${key}/`;
  return { head: `${base}head`, versions: `${base}versions`, contents: `${base}contents` };
}

/** The prefix that lists the histories of every key under a data-key prefix (`u1/` → `#history/u1/`). */
export function historyPrefix(dataPrefix: string): string {
  return `${HISTORY_ROOT}/${dataPrefix}`;
}

/** Whether a key of the data store belongs to a history (not a document). */
export function isHistoryKey(key: string): boolean {
  return key.startsWith(`${HISTORY_ROOT}/`);
}

/** Whether a key of the data store is one of a history's append-only arrays (`versions`, `contents`): kept in blocks on S3 and R2. */
export function isHistoryArrayKey(key: string): boolean {
  return isHistoryKey(key) && (key.endsWith("/versions") || key.endsWith("/contents"));
}

/** Where a deleted image's bytes are kept in the image store (`#history/images/{id}`): its deletion mark's bytes. */
export function deletedImageKey(imageKey: string): string {
  return `${HISTORY_ROOT}/${imageKey}`;
}

/** Where a deleted image's metadata is kept, with `deleted: true` and `deletedAt`: its deletion mark. */
export function deletedImageMetadataKey(imageKey: string): string {
  return `${HISTORY_ROOT}/${imageKey}.json`;
}
