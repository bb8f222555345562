/**
 * @module
 * One version of a data key (docs/storage.md#record-history): its record, the hash that chains
 * the next record to it, and its stored contents (the bytes, or a deletion mark).
 */
import { canonicalJson } from "../encoding/canonical-json.ts";
import { sha256Hex } from "../encoding/digest.ts";
import { decodeBase64Url, encodeBase64Url } from "../encoding/base64url.ts";
import type { Bytes } from "../ports.ts";

/** What one version records. */
export interface VersionRecord {
  /** 1 for the key's first version, then 2, 3... without gaps. */
  version: number;
  /** Lower-case hex SHA-256 of the version's bytes (of no bytes, for a deletion mark). */
  sha256: string;
  /** The bytes' length (0 for a deletion mark). */
  size: number;
  /** ISO 8601 time on the server's clock when the version was recorded. */
  writtenAt: string;
  /** Who wrote it: the identity token's `sub`, `"data-key"` in key-only mode, `"admin"` with the admin key, `"before-history"` for a value stored before history was kept. */
  writtenBy: string;
  /** True for a deletion mark: the key read as missing from this version on. */
  deleted: boolean;
  /** Hex SHA-256 of the previous version's record in canonical JSON (RFC 8785); null for version 1. */
  previous: string | null;
}

/** The stored contents of one version: its bytes as text (valid UTF-8) or base64url, or a deletion mark. */
export type VersionContents =
  | { v: number; text: string }
  | { v: number; base64url: string }
  | { v: number; deleted: true };

/** Hex SHA-256 of the empty byte string: the `sha256` of a deletion mark. */
export const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** The hash that the next record's `previous` names: SHA-256 of the record's canonical JSON. */
export async function recordHash(record: VersionRecord): Promise<string> {
  return await sha256Hex(canonicalJson(record));
}

/**
 * `canonicalJson(record)` of a record holding only its own fields ({@link plainRecord}), written
 * in the members' sorted order without sorting them (a record is hashed on every write).
 */
export function canonicalRecordJson(record: VersionRecord): string {
  const { deleted, previous, sha256, size, version, writtenAt, writtenBy } = record;
  return `{"deleted":${deleted},"previous":${previous === null ? "null" : JSON.stringify(previous)},"sha256":${JSON.stringify(sha256)},"size":${size},"version":${version},"writtenAt":${JSON.stringify(writtenAt)},"writtenBy":${JSON.stringify(writtenBy)}}`;
}

/** The contents item of version `v` holding `bytes` (as text when they are UTF-8, which every JSON document is). */
export function contentsOf(v: number, bytes: Uint8Array): VersionContents {
  try {
    return { v, text: strictUtf8.decode(bytes) };
  } catch {
    return { v, base64url: encodeBase64Url(bytes) };
  }
}

/** The bytes a contents item holds; null for a deletion mark or an item that is not a contents item. */
export function bytesOf(contents: unknown): Bytes | null {
  if (contents === null || typeof contents !== "object") return null;
  if ("text" in contents && typeof contents.text === "string") return encoder.encode(contents.text);
  if ("base64url" in contents && typeof contents.base64url === "string") return decodeBase64Url(contents.base64url);
  return null;
}

/** Whether a stored value has the shape of a version record (a reader checks before trusting its fields). */
export function isVersionRecord(value: unknown): value is VersionRecord {
  if (value === null || typeof value !== "object") return false;
  const r = value as Record<string, unknown>;
  return Number.isSafeInteger(r.version) && (r.version as number) >= 1 && typeof r.sha256 === "string" && Number.isSafeInteger(r.size) &&
    typeof r.writtenAt === "string" && typeof r.writtenBy === "string" && typeof r.deleted === "boolean" &&
    (r.previous === null || typeof r.previous === "string");
}

/** Only the record's own fields, in their order (a stored record may carry more; the hash covers these). */
export function plainRecord(record: VersionRecord): VersionRecord {
  const { version, sha256, size, writtenAt, writtenBy, deleted, previous } = record;
  return { version, sha256, size, writtenAt, writtenBy, deleted, previous };
}
