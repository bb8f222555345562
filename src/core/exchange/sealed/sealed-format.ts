/**
 * @module
 * The layout of a sealed package (docs/exchange.md#sealed-packages): a prefix, a JSON header,
 * then the plaintext in chunks, each sealed with AES-256-GCM under a fresh content key. A
 * chunk's nonce and additional data bind its index and whether it is the last, and the
 * additional data binds the digest of everything before the first chunk, so a changed, cut,
 * reordered or extended package fails to open. Integers are big-endian.
 *
 *     "FASEALED" (8) | version (1) | header length (4) | header JSON | chunk 0 | chunk 1 | ...
 */
import * as z from "zod";
import type { Bytes } from "../../ports.ts";

/** The first eight bytes of every sealed package: ASCII `FASEALED`. */
export const SEALED_MAGIC: readonly number[] = [0x46, 0x41, 0x53, 0x45, 0x41, 0x4c, 0x45, 0x44];
/** The format version this code writes and reads. */
export const SEALED_VERSION = 1;
/** Bytes before the header JSON: magic, version, header length. */
export const PREFIX_BYTES = SEALED_MAGIC.length + 1 + 4;
/** The longest header accepted (an RSA-4096 recipient's header is under 2 KiB). */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Plaintext bytes per chunk of packages this code seals. */
export const DEFAULT_CHUNK_BYTES = 64 * 1024;
/** The smallest and largest chunk sizes a header may declare (a hostile header cannot ask for more). */
export const MIN_CHUNK_BYTES = 64;
/** The largest chunk size a header may declare. */
export const MAX_CHUNK_BYTES = 1024 * 1024;
/** Bytes of the AES-GCM tag after each chunk's ciphertext. */
export const TAG_BYTES = 16;
/** Bytes of the content key (AES-256). */
export const CONTENT_KEY_BYTES = 32;

/** The header JSON: who it is for, the wrapped content key, the chunk size, what it holds. */
export interface SealedHeader {
  /** RFC 7638 SHA-256 thumbprint (base64url) of the recipient's public key. */
  recipient: string;
  /** A compact JWE (ECDH-ES+A256KW or RSA-OAEP-256, A256GCM) whose plaintext is the 32-byte content key. */
  key: string;
  /** Plaintext bytes of every chunk but the last. */
  chunkBytes: number;
  /** The media type of the plaintext, `application/zip` for a case package. */
  contentType: string;
}

/** The schema of {@link SealedHeader}: what an opener accepts (members it does not know are ignored). */
export const SealedHeaderSchema: z.ZodType<SealedHeader> = z.object({
  recipient: z.string().regex(/^[A-Za-z0-9_-]{43}$/, "must be an RFC 7638 SHA-256 thumbprint (43 base64url characters)"),
  key: z.string().min(1).max(MAX_HEADER_BYTES),
  chunkBytes: z.number().int().min(MIN_CHUNK_BYTES).max(MAX_CHUNK_BYTES),
  contentType: z.string().min(1).max(255),
});

/** Whether `bytes` start like a sealed package (the magic; the version is checked when opened). */
export function isSealedPackage(bytes: Uint8Array): boolean {
  return bytes.length >= SEALED_MAGIC.length && SEALED_MAGIC.every((byte, at) => bytes[at] === byte);
}

/** Magic, version and header length, then the header JSON: what the chunks' additional data digests. */
export function headerBytes(header: SealedHeader): Bytes {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(PREFIX_BYTES + json.length);
  out.set(SEALED_MAGIC, 0);
  out[SEALED_MAGIC.length] = SEALED_VERSION;
  new DataView(out.buffer).setUint32(SEALED_MAGIC.length + 1, json.length);
  out.set(json, PREFIX_BYTES);
  return out;
}

/** Chunk `index`'s nonce: the index as an 11-byte integer, then 1 for the last chunk, else 0. */
export function chunkNonce(index: number, last: boolean): Bytes {
  const nonce = new Uint8Array(12);
  const view = new DataView(nonce.buffer);
  view.setUint32(3, Math.floor(index / 2 ** 32));
  view.setUint32(7, index >>> 0);
  nonce[11] = last ? 1 : 0;
  return nonce;
}

/** Chunk `index`'s additional data: the SHA-256 of the header bytes, the index (8 bytes), 1 for the last chunk, else 0. */
export function chunkAdditionalData(headerDigest: Uint8Array, index: number, last: boolean): Bytes {
  const aad = new Uint8Array(headerDigest.length + 9);
  aad.set(headerDigest, 0);
  const view = new DataView(aad.buffer);
  view.setUint32(headerDigest.length, Math.floor(index / 2 ** 32));
  view.setUint32(headerDigest.length + 4, index >>> 0);
  aad[headerDigest.length + 8] = last ? 1 : 0;
  return aad;
}

/** The SHA-256 of the header bytes (prefix and JSON). */
export async function headerDigest(bytes: Bytes): Promise<Bytes> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}
