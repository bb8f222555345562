/**
 * @module
 * Every storage key is built and checked here (docs/storage.md#keys). unstorage
 * turns `/` into `:` and cuts keys at `?`, and drivers called directly do no traversal
 * check, so a segment may hold none of those characters, nor `..`, `\`, `#` or controls.
 *
 * Lengths: a segment is at most 255 bytes (a file name), a data key at most 1000 bytes, so
 * that with a store's folder prefix (`data/` on S3) it fits the 1024-byte object keys of S3
 * and R2; user records (`{uid}`, at most 255) fit Cloudflare KV's 512-byte keys, and no key
 * comes near Deno KV's 2048 bytes. Names built from a segment (an audit day
 * `{userId}-YYYY-MM-DD.json` is up to 271 bytes) may be longer than a file name: the file
 * store maps them to a bounded on-disk name (src/adapters/server/files/file-names.ts).
 */
import { ServiceError } from "../errors.ts";
import { codePointName } from "../encoding/code-point.ts";

/** The longest key segment, in UTF-8 bytes (a file name's limit). */
export const MAX_SEGMENT_BYTES = 255;
/** The longest data key, in UTF-8 bytes: 1024 (S3, R2) less room for a store's prefix. */
export const MAX_KEY_BYTES = 1000;
// Control characters (C0, DEL, C1), the characters that change a key's meaning downstream, and
// U+FFFD: a runtime that decodes a path's bytes that are not UTF-8 into it (Bun) would file \xFF and \xFE under one key.
// deno-lint-ignore no-control-regex
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f/\\:?#\ufffd]/;
const encoder = new TextEncoder();
// In a whole raw path: what {@link FORBIDDEN} refuses in a segment but `/`, and `%` (something to decode).
// deno-lint-ignore no-control-regex
const FORBIDDEN_IN_PATH = /[\u0000-\u001f\u007f-\u009f\\:?#%\ufffd]/;
// An empty, `.` or `..` segment of a raw path.
const EMPTY_OR_DOTS = /(?:^|\/)\.{0,2}(?:\/|$)/;

/** Whether `text` is longer than `bytes` in UTF-8; encoded only when it may be (a UTF-16 unit is at most 3 bytes). */
function utf8Longer(text: string, bytes: number): boolean {
  return text.length * 3 > bytes && encoder.encode(text).length > bytes;
}

/** Checks one decoded key segment; `what` names it in the 400. */
export function checkSegment(segment: string, what = "key segment"): string {
  if (segment === "") throw ServiceError.validation(`${what} is empty`);
  if (segment === "." || segment === "..") throw ServiceError.validation(`${what} may not be "${segment}"`);
  const bad = FORBIDDEN.exec(segment);
  if (bad) {
    const char = bad[0];
    const shown = char.charCodeAt(0) < 0x20 || char.charCodeAt(0) >= 0x7f ? codePointName(char.charCodeAt(0)) : `"${char}"`;
    throw ServiceError.validation(`${what} contains a forbidden character ${shown}`, { [what]: segment });
  }
  if (utf8Longer(segment, MAX_SEGMENT_BYTES)) {
    throw ServiceError.validation(`${what} is longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
  return segment;
}

/** Decodes one percent-encoded path segment exactly once, then checks it. */
export function decodeSegment(raw: string, what = "key segment"): string {
  // Without a `%` there is nothing to decode (decodeURIComponent is a runtime call).
  if (!raw.includes("%")) return checkSegment(raw, what);
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw ServiceError.validation(`${what} has invalid percent-encoding`);
  }
  return checkSegment(decoded, what);
}

/**
 * Turns a raw (still percent-encoded) request path such as `u1/case%201/data.json` into a
 * checked storage key `u1/case 1/data.json`. Empty segments (`a//b`, a leading `/`) are refused.
 */
export function keyFromRawPath(rawPath: string): string {
  if (rawPath === "") throw ServiceError.validation("Storage key is missing");
  // The usual key: short, nothing to decode, nothing refused. It is its own key, checked whole
  // (what the segments' checks below would find); anything else takes them, for the same answer.
  if (rawPath.length * 3 <= MAX_SEGMENT_BYTES && !FORBIDDEN_IN_PATH.test(rawPath) && !EMPTY_OR_DOTS.test(rawPath)) return rawPath;
  const key = rawPath.split("/").map((raw) => decodeSegment(raw)).join("/");
  if (utf8Longer(key, MAX_KEY_BYTES)) {
    throw ServiceError.validation(
      `Storage key is longer than ${MAX_KEY_BYTES} bytes (object stores hold keys of 1024 bytes, their folder prefix included)`,
    );
  }
  return key;
}

/** A `YYYY-MM-DD` UTC day. */
export type AuditDay = string;

/** The keys of docs/storage.md#keys; each argument is checked as one segment. */
export const storageKeys = {
  /** KV: the user record. */
  user: (userUid: string): string => checkSegment(userUid, "userUid"),
  /** Blob: a case document. */
  case: (userUid: string, caseNumber: string): string =>
    `${checkSegment(userUid, "userUid")}/${checkSegment(caseNumber, "caseNumber")}/data.json`,
  /** Blob: the annotations of one file. */
  annotations: (userUid: string, caseNumber: string, fileId: string): string =>
    `${checkSegment(userUid, "userUid")}/${checkSegment(caseNumber, "caseNumber")}/${
      checkSegment(fileId, "fileId")
    }/data.json`,
  /** Audit store: one user's day (docs/api.md#audit). */
  auditDay: (userId: string, day: AuditDay): string =>
    `audit-trails/${checkSegment(userId, "userId")}-${checkSegment(day, "date")}.json`,
  /** Audit store: the day as existing deployments wrote it (docs/configuration.md). */
  legacyAuditDay: (userId: string, day: AuditDay): string =>
    `audit-trails/${checkSegment(userId, "userId")}/${checkSegment(day, "date")}.json`,
  /** Audit store: the head of one user's hash chain (docs/storage.md#audit-chain). */
  auditHead: (userId: string): string => `audit-heads/${checkSegment(userId, "userId")}.json`,
  /** Audit store: a review, its conclusions and signatures (docs/storage.md#reviews). */
  review: (reviewId: string): string => `reviews/${checkSegment(reviewId, "reviewId")}/review.json`,
  /** Audit store: the annotations of one file as they were when the review opened. */
  reviewPinned: (reviewId: string, fileId: string): string => `reviews/${checkSegment(reviewId, "reviewId")}/files/${checkSegment(fileId, "fileId")}.json`,
  /** Audit store: the case document as it was when the review opened. */
  reviewCase: (reviewId: string): string => `reviews/${checkSegment(reviewId, "reviewId")}/case.json`,
  /** Audit store: the reviews assigned to a reviewer, one marker each. */
  reviewInbox: (reviewer: string, reviewId?: string): string =>
    `review-index/inbox/${checkSegment(reviewer, "userId")}/${reviewId === undefined ? "" : checkSegment(reviewId, "reviewId")}`,
  /** Audit store: the reviews of one case, one marker each. */
  reviewsOfCase: (owner: string, caseNumber: string, reviewId?: string): string =>
    `review-index/cases/${checkSegment(owner, "userId")}/${checkSegment(caseNumber, "caseNumber")}/${reviewId === undefined ? "" : checkSegment(reviewId, "reviewId")}`,
  /** Audit store: the lab and roles a user's last identity token stated, so an owner can name them as reviewer. */
  reviewMember: (userId: string): string => `review-members/${checkSegment(userId, "userId")}.json`,
  /** Image store: a hosted image. */
  image: (imageId: string): string => `images/${checkSegment(imageId, "imageId")}`,
} as const;
