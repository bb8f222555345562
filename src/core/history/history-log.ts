/**
 * @module
 * A data key's log (docs/storage.md#record-history): one JSON array, item N-1
 * `{"record", "contents"}` for version N, so that a version is one append to the store.
 * Histories written by an earlier release keep records and contents in two arrays
 * (`versions`, `contents`); they are read as they are and merged into a log by the key's next write.
 */
import type { BlobStore } from "../ports.ts";
import { encodeJsonArray, parseJsonArray, UnreadableJsonItem, useJsonText } from "../storage/json-array.ts";
import type { HistoryKeys } from "./history-keys.ts";
import type { VersionContents, VersionRecord } from "./version-record.ts";

/** One item of a log: a version's record and its stored contents. */
export interface LogItem {
  /** The version's record. */
  record: VersionRecord;
  /** Its bytes (as text or base64url), a deletion mark, or a pruned version's mark. */
  contents: VersionContents | { v: number; pruned: true };
}

/** A history as stored: its records and contents, oldest first, as read (not checked). */
export interface StoredVersions {
  /** Where they were read from: the log, the two arrays of an earlier release, or nothing. */
  layout: "log" | "arrays" | "none";
  /** The records, item N-1 for version N (anything, as stored). */
  records: unknown[];
  /** The contents, item N-1 for version N (anything, as stored). */
  contents: unknown[];
}

/** An unreadable item of a log: what the log holds in its place when the arrays it was merged from held something unreadable. */
interface UnreadablePart {
  unreadable: string;
  reason: string;
}

/**
 * The log item of a version, its JSON text made from the record's and contents' texts when
 * their writer lent them (json-array.ts), so a document is serialized once per version.
 */
export function logItemOf(record: VersionRecord, contents: VersionContents, texts?: { record: string; contents: string }): LogItem {
  const item: LogItem = { record, contents };
  if (texts !== undefined) useJsonText(item, `{"record":${texts.record},"contents":${texts.contents}}`);
  return item;
}

/** The record and contents a log item holds (each undefined when the item has not that shape). */
function partsOf(item: unknown): { record: unknown; contents: unknown } {
  if (item === null || typeof item !== "object" || item instanceof UnreadableJsonItem) return { record: undefined, contents: undefined };
  const { record, contents } = item as { record?: unknown; contents?: unknown };
  return { record, contents };
}

const readable = (part: unknown): unknown => (part instanceof UnreadableJsonItem ? { unreadable: part.raw, reason: part.reason } satisfies UnreadablePart : part);

/** The versions stored under `keys`: the log's, else the two arrays of an earlier release. */
export async function readStoredVersions(data: BlobStore, keys: HistoryKeys): Promise<StoredVersions> {
  const log = await data.get(keys.log);
  if (log !== null) {
    const items = parseJsonArray(log).items.map(partsOf);
    return { layout: "log", records: items.map((item) => item.record), contents: items.map((item) => item.contents) };
  }
  const [versions, contents] = await Promise.all([data.get(keys.versions), data.get(keys.contents)]);
  if (versions === null && contents === null) return { layout: "none", records: [], contents: [] };
  return {
    layout: "arrays",
    records: versions === null ? [] : parseJsonArray(versions).items,
    contents: contents === null ? [] : parseJsonArray(contents).items,
  };
}

/** Thrown inside an update that finds the log written already. */
const WRITTEN = new Error("log written");

/**
 * Merges the two arrays of an earlier release into a log, when the key has them and no log:
 * item by item (a part one array lacks is null), the stored head's version `newest` filling
 * what the arrays lack of it (its appends may not have landed) or coming next. The log is
 * created only where none is stored (another process may be merging too), then the arrays are
 * removed. Answers the versions as stored after.
 */
export async function mergeArraysIntoLog(data: BlobStore, keys: HistoryKeys, newest?: LogItem): Promise<StoredVersions> {
  const stored = await readStoredVersions(data, keys);
  if (stored.layout !== "arrays") return stored;
  const length = Math.max(stored.records.length, stored.contents.length);
  const items: unknown[] = [];
  for (let i = 0; i < length; i++) {
    const mine = newest !== undefined && newest.record.version === i + 1;
    const record = stored.records[i] ?? (mine ? newest.record : null);
    const contents = stored.contents[i] ?? (mine ? newest.contents : null);
    items.push({ record: readable(record), contents: readable(contents) });
  }
  if (newest !== undefined && newest.record.version === length + 1) items.push(newest);
  await data.update(keys.log, (log) => {
    if (log !== null) throw WRITTEN;
    return encodeJsonArray(items);
  }).catch((err: unknown) => {
    if (err !== WRITTEN) throw err;
  });
  await data.delete(keys.versions);
  await data.delete(keys.contents);
  return await readStoredVersions(data, keys);
}
