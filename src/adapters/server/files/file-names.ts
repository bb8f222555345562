/**
 * @module
 * The on-disk names of documents in the file store. A key's folders are folders of the same
 * name; its last segment is a file named as the segment (the layout existing data folders
 * hold) unless that cannot be:
 *
 * - the name is taken by a folder (`x.json` and `x.json/y.json` are both documents): the
 *   document is `x.json#`;
 * - the name is longer than a file name may be (255 bytes; an audit day of a 255-byte
 *   user id is 271): the document is `{prefix}#{hash}` and a side record
 *   `{prefix}#{hash}#key` holds the real name, so listings return it;
 * - the name has a temporary file's shape (`.{name}.{uuid}.tmp`, below): the document is
 *   `{name}#`, so listings and the leftover sweep never take it for one.
 *
 * Key segments never contain `#` (storage/keys.ts), so these names never meet a real one.
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";

/** The longest file name ext4, XFS, APFS and NTFS hold, in bytes. */
export const MAX_NAME_BYTES = 255;
/** Bytes of a long name kept readable in its hashed form. */
const HASHED_PREFIX_BYTES = 180;
/** Bytes of the target's name kept in a temporary file's name. */
const TEMPORARY_PREFIX_BYTES = 150;
const MARK = "#";
const RECORD_SUFFIX = `${MARK}key`;
const HASHED = /#[0-9a-f]{32}$/;

// Counted without encoding a copy (a lone surrogate counts 3, as its encoding U+FFFD).
const byteLength = (text: string): number => Buffer.byteLength(text, "utf8");

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, never splitting a character. */
export function utf8Prefix(text: string, maxBytes: number): string {
  // A UTF-16 unit is at most 3 bytes: a short text fits whole.
  if (text.length * 3 <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = byteLength(char);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}

// What temporaryName makes: a dot, the target's name cut short, a random UUID, `.tmp`.
const TEMPORARY = /^\.[\s\S]*\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/;

/**
 * Temporary files are `.{name}.{uuid}.tmp` (the name cut short so that it always fits);
 * listings skip them, and `serve` removes those a stopped process left. A document whose
 * segment has that shape is stored under its escaped name (`{segment}#`), so none is taken for one.
 */
export const isTemporary = (name: string): boolean => name.endsWith(".tmp") && TEMPORARY.test(name);

/** Where one document may be on disk. */
export interface DocumentNames {
  /** The segment itself, when it fits a file name. */
  plain: string | undefined;
  /** The name used when `plain` is a folder, does not fit, or has a temporary file's shape. */
  escaped: string;
  /** The side record holding the real name, when `escaped` is hashed. */
  record: string | undefined;
}

/** The possible on-disk names of a document whose last key segment is `segment`. */
export function documentNames(segment: string): DocumentNames {
  const bytes = byteLength(segment);
  // A segment shaped like a temporary file's name would be skipped by listings and removed as a leftover.
  const plain = bytes <= MAX_NAME_BYTES && !isTemporary(segment) ? segment : undefined;
  if (bytes + MARK.length <= MAX_NAME_BYTES) return { plain, escaped: `${segment}${MARK}`, record: undefined };
  const hash = createHash("sha256").update(segment).digest("hex").slice(0, 32);
  const escaped = `${utf8Prefix(segment, HASHED_PREFIX_BYTES)}${MARK}${hash}`;
  return { plain, escaped, record: `${escaped}${RECORD_SUFFIX}` };
}

/** A temporary name beside `name`, unique per call. */
export function temporaryName(name: string): string {
  return `.${utf8Prefix(name, TEMPORARY_PREFIX_BYTES)}.${crypto.randomUUID()}.tmp`;
}

/** What a file found in a folder is. */
export type ListedFile =
  /** A document; `segment` is its key segment. */
  | { kind: "document"; segment: string }
  /** A document under a hashed name: its segment is in the side record `record`. */
  | { kind: "hashed"; record: string }
  /** A temporary file or a side record: not a document. */
  | { kind: "other" };

/** Tells what a file name found in the store is. */
export function listedFile(name: string): ListedFile {
  if (isTemporary(name)) return { kind: "other" };
  if (!name.includes(MARK)) return { kind: "document", segment: name };
  if (name.endsWith(MARK)) return { kind: "document", segment: name.slice(0, -MARK.length) };
  if (HASHED.test(name)) return { kind: "hashed", record: `${name}${RECORD_SUFFIX}` };
  return { kind: "other" };
}
