/**
 * @module
 * Record history of data-worker keys (docs/storage.md#record-history): every write and delete
 * keeps the version it replaces, in a hash chain that shows any rewriting.
 *
 * @example
 * ```ts
 * const histories = createKeyHistories(dataStore, { clock: systemClock });
 * await histories.write("u1/C-1/data.json", new TextEncoder().encode("{}"), "u1");
 * const pinned = await histories.current("u1/C-1/data.json"); // { version: 1, sha256, record }
 * const bytes = await histories.read("u1/C-1/data.json", 1);
 * const { valid } = await histories.verify("u1/C-1/data.json");
 * ```
 */
export { BEFORE_HISTORY, createKeyHistories } from "./key-history.ts";
export type { CurrentVersion, KeyHistories, KeyHistoriesOptions, KeyHistory } from "./key-history.ts";
export { EMPTY_SHA256, recordHash } from "./version-record.ts";
export type { VersionRecord } from "./version-record.ts";
export { verifyVersions } from "./verify-history.ts";
export type { HistoryFailure, HistoryVerification, StoredHistory } from "./verify-history.ts";
export { deletedImageKey, deletedImageMetadataKey, HISTORY_PARTS, HISTORY_ROOT, historyDataKey, historyKeys, historyPrefix, isHistoryKey } from "./history-keys.ts";
export type { HistoryKeys } from "./history-keys.ts";
