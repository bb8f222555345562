/**
 * @module
 * Verification of one key's history (docs/storage.md#record-history): each version's bytes
 * against its record, each record against the one before it, the newest against the head (where one is stored), and
 * the key's value against the newest version. Pure computation over what was read.
 */
import { sha256Hex } from "../encoding/digest.ts";
import { bytesOf, isVersionRecord, plainRecord, recordHash, type VersionRecord } from "./version-record.ts";
import { canonicalJson } from "../encoding/canonical-json.ts";

/** Why a version does not verify. */
export type HistoryFailure =
  /** Its record is missing, unreadable, or not the version its place says. */
  | "record missing"
  /** Its `previous` is not the hash of the record before it (that one or this one was changed). */
  | "chain broken"
  /** Its stored bytes are missing or do not match its record's `sha256` and `size`. */
  | "bytes altered"
  /** The history ends before the version its head names (versions were dropped). */
  | "tail dropped"
  /** A record comes after the version the head names, or the head does not match its version's record. */
  | "head mismatch"
  /** The key's value is not the bytes of its current version (written around the history, or put back). */
  | "value differs";

/** The outcome of a verification. */
export interface HistoryVerification {
  /** True when every version, the chain and the key's value match. */
  valid: boolean;
  /** The first version that does not verify, when `valid` is false. */
  firstBadVersion?: number;
  /** Why it does not, when `valid` is false. */
  reason?: HistoryFailure;
}

/** What is read of one key's history. */
export interface StoredHistory {
  /** The stored head (newest record, its hash, its contents); null when none is stored (the log's last item is the newest). */
  head: { record: VersionRecord; hash: string; contents: unknown } | null;
  /** The versions' records, oldest first (the log items' `record`). */
  records: readonly unknown[];
  /** The versions' contents, oldest first (the log items' `contents`). */
  contents: readonly unknown[];
  /** The key's stored value (null: absent). */
  value: Uint8Array | null;
}

const bad = (firstBadVersion: number, reason: HistoryFailure): HistoryVerification => ({ valid: false, firstBadVersion, reason });

/** Checks a key's stored history; names the first version that does not verify. */
export async function verifyVersions(history: StoredHistory): Promise<HistoryVerification> {
  const { head } = history;
  if (head === null && history.records.length === 0 && history.contents.length === 0) return { valid: true };
  const newest = head?.record.version ?? Math.max(history.records.length, history.contents.length);
  // The head's own version may not be in the log yet (a write between its two steps).
  const records = history.records.slice();
  const contents = history.contents.slice();
  if (head !== null && records.length === newest - 1) records.push(head.record);
  if (head !== null && contents.length === newest - 1) contents.push(head.contents);
  let previous: string | null = null;
  // Pruned versions (docs/operations.md#history-retention) are a prefix: their records still chain, their bytes are gone.
  let prunedPrefix = true;
  for (let i = 0; i < records.length; i++) {
    const version = i + 1;
    const record = records[i];
    if (version > newest) return bad(version, "head mismatch");
    if (!isVersionRecord(record) || record.version !== version) return bad(version, "record missing");
    if (record.previous !== previous) return bad(version, "chain broken");
    const item = contents[i] as { v?: unknown; deleted?: unknown } | undefined;
    if (item === undefined || item === null || typeof item !== "object" || item.v !== version) return bad(version, "bytes altered");
    if (record.deleted) {
      if (item.deleted !== true) return bad(version, "bytes altered");
    } else if ((item as { pruned?: unknown }).pruned === true) {
      if (!prunedPrefix || version === newest) return bad(version, "bytes altered");
    } else {
      prunedPrefix = false;
      const bytes = bytesOf(item);
      if (bytes === null || bytes.length !== record.size || (await sha256Hex(bytes)) !== record.sha256) return bad(version, "bytes altered");
    }
    previous = await recordHash(record);
  }
  if (records.length < newest) return bad(records.length + 1, "tail dropped");
  const last = records[newest - 1] as VersionRecord;
  if (head !== null && (previous !== head.hash || canonicalJson(plainRecord(last)) !== canonicalJson(plainRecord(head.record)))) return bad(newest, "head mismatch");
  const valueSha = history.value === null ? null : await sha256Hex(history.value);
  if (last.deleted ? valueSha !== null : valueSha !== last.sha256) return bad(newest, "value differs");
  return { valid: true };
}
