/**
 * @module
 * The envelope one object is stored in when encryption at rest is on: a header that says how
 * to read it, then the body in chunks, each sealed with AES-256-GCM under the object's own
 * data key. The data key is stored wrapped by a key-encryption key of the {@link Keyring}.
 * Layout (integers big-endian):
 *
 *     "\0FAENC" version (1) | kid length (1) | kid | wrapped key length (1) | wrapped key
 *     | base IV (12) | chunk size (4) | plaintext length (8) | chunk 0 + tag | chunk 1 + tag ...
 *
 * Version 2 (every new envelope) wraps the data key with AES-256-GCM (RFC 7518 §4.7: IV |
 * ciphertext | tag, 60 bytes), which Node's OpenSSL unwraps in less than half the time of
 * AES-KW; version 1 wrapped it with AES-KW (RFC 3394, 40 bytes) and is read forever, and
 * re-wrapped into version 2 by a rotation. The body is the same in both.
 *
 * Every chunk's additional data binds the store key, what the envelope holds (a whole object,
 * one JSON-array item, a KV record), the chunk's index, whether it is the last, the chunk size
 * and the plaintext length: an envelope moved to another key, truncated, extended or with
 * chunks reordered fails to open. The wrapped key is outside the additional data, so a key
 * rotation re-wraps it without touching the body.
 */
import type { Bytes } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import type { Keyring } from "./keyring.ts";
import { GCM_WRAPPED_BYTES, type KeyWrap } from "./cipher-suite.ts";
import { chunksOf } from "../storage/byte-stream.ts";

/** What an envelope holds; part of the additional data, so one kind never passes for another. */
export type EnvelopeKind = "object" | "item" | "record";

/** "\0FAENC" then the version of new envelopes. */
const MAGIC = [0x00, 0x46, 0x41, 0x45, 0x4e, 0x43, 0x02] as const;
/** Where the version byte is. */
const VERSION_AT = MAGIC.length - 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Chunk size of new envelopes: what a streamed delivery holds per step. */
export const CHUNK_BYTES = 64 * 1024;
/** The largest chunk size an envelope may declare (a hostile header cannot ask for more). */
const MAX_CHUNK_BYTES = 16 * 1024 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** IVs drawn per pool: one call to the random source for many envelopes. */
const IV_POOL = 256;
let ivPool: Bytes = new Uint8Array(0);
let ivAt = 0;

/**
 * A fresh random IV, a view of a pool filled by one `getRandomValues` call (a call costs as
 * much as the rest of a small seal in Node). A pool is never refilled, so an IV handed out
 * stays as it was; a used one is never handed out again.
 */
function randomIv(): Bytes {
  if (ivAt === ivPool.length) {
    ivPool = crypto.getRandomValues(new Uint8Array(IV_POOL * IV_BYTES));
    ivAt = 0;
  }
  return ivPool.subarray(ivAt, ivAt += IV_BYTES);
}

/** True when the bytes start like an envelope (plaintext JSON, images and mail never do). */
export function isEnvelope(bytes: Uint8Array): boolean {
  if (bytes.length < MAGIC.length) return false;
  for (let i = 0; i < VERSION_AT; i++) if (bytes[i] !== MAGIC[i]) return false;
  return bytes[VERSION_AT] === 0x02 || bytes[VERSION_AT] === 0x01;
}

/**
 * True when the bytes start like an envelope altered in one byte of its magic, or of a version
 * this code does not know. No plaintext a store holds starts so (JSON cannot, nor an image):
 * such an object is damaged, to be refused rather than served as plaintext.
 */
export function isDamagedEnvelope(bytes: Uint8Array): boolean {
  if (bytes.length < MAGIC.length || isEnvelope(bytes)) return false;
  let differing = 0;
  for (let i = 0; i < VERSION_AT; i++) if (bytes[i] !== MAGIC[i]) differing++;
  return differing === 0 || (differing === 1 && (bytes[VERSION_AT] === 0x02 || bytes[VERSION_AT] === 0x01));
}

/** An envelope's header, read and bounds-checked. */
export interface EnvelopeHeader {
  /** The id of the key-encryption key the data key is wrapped with. */
  kid: string;
  /** How the data key is wrapped: AES-GCM in version 2, AES-KW in version 1. */
  wrap: KeyWrap;
  /** Where the wrapped data key starts (a view is made only to unwrap it). */
  wrappedStart: number;
  /** Where the wrapped data key ends. */
  wrappedEnd: number;
  /** The IV the chunks' IVs derive from. */
  iv: Bytes;
  /** Plaintext bytes per chunk (the last may be shorter). */
  chunkSize: number;
  /** The plaintext's length. */
  plaintextLength: number;
  /** Where the first chunk starts. */
  bodyOffset: number;
  /** Number of chunks (at least one; an empty plaintext is one empty chunk). */
  chunks: number;
}

const chunkCount = (length: number, chunkSize: number): number => Math.max(1, Math.ceil(length / chunkSize));

const damaged = (key: string, why: string): ServiceError =>
  ServiceError.integrity(`Stored object ${key} failed its integrity check: ${why}`, { key });

/** Reads an envelope's header; an integrity failure when it is cut short or inconsistent. */
export function readHeader(bytes: Bytes, key: string): EnvelopeHeader {
  // Byte by byte, no DataView or TextDecoder: the header is read on every read of an object.
  const length = bytes.length;
  const wrap: KeyWrap = bytes[VERSION_AT] === 0x01 ? "kw" : "gcm";
  let at = MAGIC.length;
  if (at + 1 > length) throw damaged(key, "its encryption header is cut short");
  const kidLength = bytes[at++]!;
  if (at + kidLength + 1 > length) throw damaged(key, "its encryption header is cut short");
  const kid = kidOf(bytes, at, kidLength);
  at += kidLength;
  const wrappedLength = bytes[at++]!;
  if (wrap === "gcm" && wrappedLength !== GCM_WRAPPED_BYTES) throw damaged(key, "its wrapped data key has the wrong length");
  if (at + wrappedLength + IV_BYTES + 12 > length) throw damaged(key, "its encryption header is cut short");
  const wrappedStart = at;
  at += wrappedLength;
  const iv = bytes.subarray(at, at + IV_BYTES);
  at += IV_BYTES;
  const chunkSize = uint32At(bytes, at);
  const plaintextLength = uint32At(bytes, at + 4) * 2 ** 32 + uint32At(bytes, at + 8);
  at += 12;
  if (chunkSize === 0 || chunkSize > MAX_CHUNK_BYTES) throw damaged(key, "its encryption header names an impossible chunk size");
  const chunks = chunkCount(plaintextLength, chunkSize);
  if (length - at !== plaintextLength + chunks * TAG_BYTES) throw damaged(key, "its length does not match its encryption header");
  return { kid, wrap, wrappedStart, wrappedEnd: wrappedStart + wrappedLength, iv, chunkSize, plaintextLength, bodyOffset: at, chunks };
}

const uint32At = (bytes: Uint8Array, at: number): number => ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;

/** The key id at `at`: ASCII (every valid kid) char by char, anything else through the UTF-8 decoder. */
function kidOf(bytes: Uint8Array, at: number, length: number): string {
  let kid = "";
  for (let i = at; i < at + length; i++) {
    const byte = bytes[i]!;
    if (byte >= 0x80) return decoder.decode(bytes.subarray(at, at + length));
    kid += String.fromCharCode(byte);
  }
  return kid;
}

/** The start of the additional data per kind: `fa-enc/1/{kind}/` (version 1's, kept by version 2: the body is the same). */
const AAD_PREFIX: Readonly<Record<EnvelopeKind, Uint8Array>> = {
  object: encoder.encode("fa-enc/1/object/"),
  item: encoder.encode("fa-enc/1/item/"),
  record: encoder.encode("fa-enc/1/record/"),
};

/**
 * The additional data of every chunk of one envelope, less the chunk's index and last flag:
 * `fa-enc/1/{kind}/{key}\0`, the chunk size, the plaintext length, 5 bytes for the chunk.
 * Written into `scratch` when it is given and large enough (a view of it is returned), else
 * into a new array.
 */
function baseAad(kind: EnvelopeKind, key: string, chunkSize: number, plaintextLength: number, scratch?: Uint8Array): Bytes {
  const prefix = AAD_PREFIX[kind];
  // ASCII (every key the workers make) char by char into one exact array: a typed array made
  // costs more than the encoding of a key, so TextEncoder's spare room and views are avoided.
  let length = prefix.length + key.length + 1 + 17;
  let out: Bytes = scratch !== undefined && length <= scratch.length ? scratch.subarray(0, length) as Bytes : new Uint8Array(length);
  out.set(prefix);
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    if (code >= 0x80) {
      const encoded = encoder.encode(key);
      length = prefix.length + encoded.length + 1 + 17;
      out = new Uint8Array(length);
      out.set(prefix);
      out.set(encoded, prefix.length);
      break;
    }
    out[prefix.length + i] = code;
  }
  const at = length - 18;
  out[at] = 0;
  setUint32At(out, at + 1, chunkSize);
  setUint32At(out, at + 5, Math.floor(plaintextLength / 2 ** 32));
  setUint32At(out, at + 9, plaintextLength >>> 0);
  return out;
}

/**
 * Where an open of one chunk with a suite that decrypts at once builds its additional data:
 * built, read by the suite and done with before the open goes on, so no two opens share it.
 */
const aadScratch = new Uint8Array(1024);

function setUint32At(out: Uint8Array, at: number, value: number): void {
  out[at] = value >>> 24;
  out[at + 1] = (value >>> 16) & 0xff;
  out[at + 2] = (value >>> 8) & 0xff;
  out[at + 3] = value & 0xff;
}

/** Chunk `index`'s IV and additional data (the additional data's buffer is reused for every chunk). */
function chunkParams(base: Bytes, iv: Bytes, index: number, last: boolean): { iv: Bytes; aad: Bytes } {
  // Byte by byte, big-endian: no views made per chunk; chunk 0's IV is the base IV itself.
  let chunkIv = iv;
  if (index !== 0) {
    chunkIv = iv.slice();
    for (let i = 0; i < 4; i++) chunkIv[IV_BYTES - 1 - i]! ^= (index >>> (8 * i)) & 0xff;
  }
  const at = base.length - 5;
  base[at] = index >>> 24;
  base[at + 1] = (index >>> 16) & 0xff;
  base[at + 2] = (index >>> 8) & 0xff;
  base[at + 3] = index & 0xff;
  base[at + 4] = last ? 1 : 0;
  return { iv: chunkIv, aad: base };
}

const asBytes = (value: Uint8Array): Bytes => value.buffer instanceof ArrayBuffer ? (value as Bytes) : new Uint8Array(value);

/** Writes a new envelope's header at the start of `out`; returns where the first chunk goes. */
function writeHeader(out: Uint8Array, kidBytes: Uint8Array, wrapped: Uint8Array, iv: Uint8Array, chunkSize: number, plaintextLength: number): number {
  let at = writeKeyHeader(out, kidBytes, wrapped);
  out.set(iv, at);
  at += IV_BYTES;
  setUint32At(out, at, chunkSize);
  setUint32At(out, at + 4, Math.floor(plaintextLength / 2 ** 32));
  setUint32At(out, at + 8, plaintextLength >>> 0);
  return at + 12;
}

const headerLength = (kidBytes: Uint8Array, wrapped: Uint8Array): number => MAGIC.length + 1 + kidBytes.length + 1 + wrapped.length + IV_BYTES + 12;

/** The length of the envelope of a plaintext of `length` bytes (chunks of `chunkSize`), less its header. */
const bodyLength = (length: number, chunkSize: number): number => length + chunkCount(length, chunkSize) * TAG_BYTES;

/** Seals `plaintext` stored under `key`, with a fresh data key wrapped by the keyring's current key. */
export async function seal(keyring: Keyring, kind: EnvelopeKind, key: string, plaintext: Uint8Array, chunkSize = CHUNK_BYTES): Promise<Bytes> {
  const kid = keyring.currentKid;
  const { key: dataKey, wrapped } = await keyring.suite.newDataKey(keyring.kek(kid, key));
  const iv = randomIv();
  const kidBytes = encoder.encode(kid);
  const chunks = chunkCount(plaintext.length, chunkSize);
  const out = new Uint8Array(headerLength(kidBytes, wrapped) + bodyLength(plaintext.length, chunkSize));
  let at = writeHeader(out, kidBytes, wrapped, iv, chunkSize, plaintext.length);
  const aad = baseAad(kind, key, chunkSize, plaintext.length);
  const source = asBytes(plaintext);
  // One chunk at a time: web crypto copies its input, so a chunk is all it holds beyond the output.
  for (let index = 0; index < chunks; index++) {
    const start = index * chunkSize;
    const end = Math.min(start + chunkSize, plaintext.length);
    const params = chunkParams(aad, iv, index, index === chunks - 1);
    const sealed = await keyring.suite.encrypt(dataKey, params.iv, params.aad, source.subarray(start, end));
    out.set(sealed, at);
    at += sealed.byteLength;
  }
  return out;
}

/**
 * Seals a plaintext of `size` bytes as a stream: the same envelope {@link seal} makes, yielded
 * as its header then one sealed chunk per read, each sealed only when the reader asks for it,
 * so sealing holds one chunk beyond what the source holds. The data key is made before this
 * resolves; the stream fails when `source` does not hold `size` bytes.
 */
export async function sealStream(
  keyring: Keyring,
  kind: EnvelopeKind,
  key: string,
  size: number,
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  chunkSize = CHUNK_BYTES,
): Promise<{ size: number; body: ReadableStream<Uint8Array> }> {
  const kid = keyring.currentKid;
  const { key: dataKey, wrapped } = await keyring.suite.newDataKey(keyring.kek(kid, key));
  const iv = randomIv();
  const kidBytes = encoder.encode(kid);
  const header = new Uint8Array(headerLength(kidBytes, wrapped));
  writeHeader(header, kidBytes, wrapped, iv, chunkSize, size);
  const aad = baseAad(kind, key, chunkSize, size);
  const chunks = chunkCount(size, chunkSize);
  const plaintext = chunksOf(source, size, chunkSize);
  let index = -1;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (index < 0) {
        controller.enqueue(header);
      } else {
        const next = await plaintext.next();
        if (next.done) throw new Error(`the plaintext of ${key} ended before its last chunk`);
        const params = chunkParams(aad, iv, index, index === chunks - 1);
        controller.enqueue(await keyring.suite.encrypt(dataKey, params.iv, params.aad, asBytes(next.value)));
        // Past the last chunk the source must be done: this runs its length check.
        if (index === chunks - 1 && !(await plaintext.next()).done) throw new Error(`the plaintext of ${key} holds more than its last chunk`);
      }
      if (++index === chunks) controller.close();
    },
    async cancel() {
      await plaintext.return(undefined);
    },
  }, { highWaterMark: 0 });
  return { size: header.length + bodyLength(size, chunkSize), body };
}

const wrongKey = (key: string, kid: string): ServiceError =>
  ServiceError.integrity(
    `Stored object ${key} cannot be decrypted: key "${kid}" of DATA_ENCRYPTION_KEYS is not the key it was encrypted with, or its wrapped data key was altered in the store`,
    { key, kid },
  );

/** How many unwrapped data keys a keyring keeps (about 100 bytes each). */
const DATA_KEY_CACHE_SIZE = 4096;

/** A data key in a keyring's cache: its unwrapping, and the key once that has finished. */
interface CachedDataKey {
  /** The id of the key-encryption key that wrapped it. */
  kid: string;
  /** How it is wrapped. */
  wrap: KeyWrap;
  /** The wrapped key as stored (a copy of at most 64 bytes: V8 keeps it in its heap, with no buffer of its own to allocate and free). */
  wrapped: Uint8Array;
  /** The unwrapping (rejects when the key-encryption key did not wrap it); none when the suite unwrapped at once. */
  unwrapping?: Promise<unknown>;
  /** The unwrapped key, set when the unwrapping succeeded. */
  key?: unknown;
}

/**
 * Data keys already unwrapped, per keyring, so an object read again costs one decryption
 * instead of two (the oldest go first past {@link DATA_KEY_CACHE_SIZE}). Safe to keep: the
 * key-encryption keys that unwrap them are in this process's memory anyway. Keyed by the
 * first 48 bits of the wrapping (a random IV, or AES-KW output: random-looking), and an entry
 * is used only when its kid, kind of wrapping and whole wrapping equal the envelope's, byte for
 * byte: a number key and a 60-byte compare cost less than a string made of the wrapping on
 * every read.
 */
const unwrappedKeys = new WeakMap<Keyring, DataKeys>();

/**
 * A keyring's data keys by id, and the ids in the order they came in, as a ring: the next new
 * id takes the oldest one's place. (A Map's own oldest entry is found by skipping every deleted
 * entry before it: with the oldest deleted on every cold read, thousands of them, 4.7k
 * instructions per read.)
 */
interface DataKeys {
  keys: Map<number, CachedDataKey>;
  order: number[];
  next: number;
}

function dataKeysOf(keyring: Keyring): DataKeys {
  let keys = unwrappedKeys.get(keyring);
  if (keys === undefined) unwrappedKeys.set(keyring, keys = { keys: new Map(), order: [], next: 0 });
  return keys;
}

/** Keeps `entry` under `id`; a new id pushes out the oldest once the cache is full. */
function keepDataKey(dataKeys: DataKeys, id: number, entry: CachedDataKey, isNew: boolean): void {
  if (isNew) {
    // The id in the oldest place may have been dropped (a failed unwrap) or set again since: deleting it early costs one unwrap.
    if (dataKeys.order.length < DATA_KEY_CACHE_SIZE) dataKeys.order.push(id);
    else {
      dataKeys.keys.delete(dataKeys.order[dataKeys.next]!);
      dataKeys.order[dataKeys.next] = id;
      dataKeys.next = (dataKeys.next + 1) % DATA_KEY_CACHE_SIZE;
    }
  }
  dataKeys.keys.set(id, entry);
}

/** Whether `bytes[start, end)` equals `same`. */
function equalAt(bytes: Uint8Array, start: number, end: number, same: Uint8Array): boolean {
  if (end - start !== same.length) return false;
  for (let i = 0; i < same.length; i++) if (bytes[start + i] !== same[i]) return false;
  return true;
}

/** The cache id of an envelope's wrapping: its first 48 bits (short wrappings, refused by the unwrap, read past their end as zeros: only a miss). */
function dataKeyId(bytes: Bytes, header: EnvelopeHeader): number {
  const at = header.wrappedStart;
  return header.wrappedEnd - at >= 6 ? uint32At(bytes, at) * 65536 + ((bytes[at + 4]! << 8) | bytes[at + 5]!) : -1;
}

/** Whether `cached` is the data key of this envelope's wrapping: same kid, kind and wrapped bytes. */
function isWrappingOf(cached: CachedDataKey, bytes: Bytes, header: EnvelopeHeader): boolean {
  return cached.kid === header.kid && cached.wrap === header.wrap && equalAt(bytes, header.wrappedStart, header.wrappedEnd, cached.wrapped);
}

/** The data key the keyring already unwrapped for this envelope's wrapping (an object read lately), or undefined. */
function knownDataKey(keyring: Keyring, bytes: Bytes, header: EnvelopeHeader): unknown {
  const cached = dataKeysOf(keyring).keys.get(dataKeyId(bytes, header));
  return cached !== undefined && isWrappingOf(cached, bytes, header) ? cached.key : undefined;
}

/**
 * The data key of an envelope, unwrapped with the keyring or found among those it unwrapped
 * before: the key itself once its unwrapping has finished (no await on a read of a known
 * object), a promise until then.
 */
function dataKeyOf(keyring: Keyring, bytes: Bytes, header: EnvelopeHeader, key: string): unknown {
  const id = dataKeyId(bytes, header);
  const dataKeys = dataKeysOf(keyring);
  let cached = dataKeys.keys.get(id);
  if (cached === undefined || !isWrappingOf(cached, bytes, header)) {
    const kek = keyring.kek(header.kid, key);
    const unwrapNow = keyring.suite.unwrapNow;
    if (unwrapNow !== undefined) {
      // At once: no promise, no handlers, no view kept (the suite reads the wrapping before it returns).
      let unwrapped: unknown;
      try {
        unwrapped = unwrapNow(kek, bytes.subarray(header.wrappedStart, header.wrappedEnd), header.wrap);
      } catch {
        throw wrongKey(key, header.kid);
      }
      keepDataKey(dataKeys, id, { kid: header.kid, wrap: header.wrap, wrapped: bytes.slice(header.wrappedStart, header.wrappedEnd), key: unwrapped }, cached === undefined);
      return unwrapped;
    }
    // One copy for the unwrap and the cache: neither changes it.
    const wrapped = bytes.slice(header.wrappedStart, header.wrappedEnd);
    const unwrapping = keyring.suite.unwrap(kek, wrapped, header.wrap);
    const entry: CachedDataKey = { kid: header.kid, wrap: header.wrap, wrapped, unwrapping };
    unwrapping.then(
      (unwrapped) => {
        entry.key = unwrapped;
      },
      // Only successes stay: a failed unwrap is tried again on the next read.
      () => {
        if (dataKeys.keys.get(id) === entry) dataKeys.keys.delete(id);
      },
    );
    keepDataKey(dataKeys, id, entry, cached === undefined);
    cached = entry;
  }
  if (cached.key !== undefined) return cached.key;
  return cached.unwrapping!.catch(() => {
    throw wrongKey(key, header.kid);
  });
}

/** Opens chunk `index` of an envelope: at once when the suite can (a promise only when it cannot). */
function openChunk(keyring: Keyring, dataKey: unknown, header: EnvelopeHeader, aad: Bytes, bytes: Bytes, index: number, key: string): Uint8Array | Promise<Uint8Array> {
  const start = header.bodyOffset + index * (header.chunkSize + TAG_BYTES);
  const length = Math.min(header.chunkSize, header.plaintextLength - index * header.chunkSize) + TAG_BYTES;
  const params = chunkParams(aad, header.iv, index, index === header.chunks - 1);
  const sealed = bytes.subarray(start, start + length);
  const decryptNow = keyring.suite.decryptNow;
  if (decryptNow === undefined) return keyring.suite.decrypt(dataKey, params.iv, params.aad, sealed).catch(() => Promise.reject(notUnderThisKey(key)));
  try {
    return decryptNow(dataKey, params.iv, params.aad, sealed);
  } catch {
    throw notUnderThisKey(key);
  }
}

const notUnderThisKey = (key: string): ServiceError => damaged(key, "it was not written under this key (swapped or altered in the store)");

/** Opens an envelope stored under `key`; an integrity failure when it was not sealed for that key, or was altered. */
export async function open(keyring: Keyring, kind: EnvelopeKind, key: string, stored: Uint8Array): Promise<Bytes> {
  const bytes = asBytes(stored);
  // Not items: the items of one array share its key, so they would only push each other out.
  const kept = kind === "item" ? undefined : keyring.opened.plaintextOf(kind, key, bytes);
  if (kept !== undefined) return kept;
  const header = readHeader(bytes, key);
  const known = knownDataKey(keyring, bytes, header);
  // A known data key: this very wrapping was opened before, so the object is being read again.
  const readBefore = known !== undefined;
  let dataKey = known ?? dataKeyOf(keyring, bytes, header, key);
  if (dataKey instanceof Promise) dataKey = await dataKey;
  // One chunk (every document up to 64 KiB): its plaintext is the object's, no copy needed.
  if (header.chunks === 1) {
    // Opened at once (no await between), the additional data needs no array of its own.
    const aad = baseAad(kind, key, header.chunkSize, header.plaintextLength, keyring.suite.decryptNow === undefined ? undefined : aadScratch);
    let plain = openChunk(keyring, dataKey, header, aad, bytes, 0, key);
    if (plain instanceof Promise) plain = await plain;
    // A plain view (a suite may answer a Node Buffer, whose slice() shares memory).
    const view = plain.buffer instanceof ArrayBuffer ? new Uint8Array(plain.buffer, plain.byteOffset, plain.byteLength) : new Uint8Array(plain);
    // Kept from the second read on: objects read once (a scan, an export) cost no copies and do not push out the rest.
    if (readBefore && kind !== "item") keyring.opened.keep(kind, key, bytes, view);
    return view;
  }
  const aad = baseAad(kind, key, header.chunkSize, header.plaintextLength);
  const out = new Uint8Array(header.plaintextLength);
  for (let index = 0; index < header.chunks; index++) {
    out.set(await openChunk(keyring, dataKey, header, aad, bytes, index, key), index * header.chunkSize);
  }
  return out;
}

/**
 * Opens an envelope chunk by chunk as it is read: the delivery of a large image holds the
 * stored bytes and one open chunk, never a second copy of the whole image. The first chunk is
 * opened before this resolves, so a wrong key or a swapped object is an error, not a cut stream.
 */
export async function openStream(keyring: Keyring, kind: EnvelopeKind, key: string, stored: Uint8Array): Promise<{ size: number; body: ReadableStream<Uint8Array> }> {
  const bytes = asBytes(stored);
  const header = readHeader(bytes, key);
  let dataKey = dataKeyOf(keyring, bytes, header, key);
  if (dataKey instanceof Promise) dataKey = await dataKey;
  const aad = baseAad(kind, key, header.chunkSize, header.plaintextLength);
  let first: Uint8Array | undefined = await openChunk(keyring, dataKey, header, aad, bytes, 0, key);
  let next = 1;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (first !== undefined) {
        controller.enqueue(first);
        first = undefined;
      } else if (next < header.chunks) {
        controller.enqueue(await openChunk(keyring, dataKey, header, aad, bytes, next++, key));
      }
      if (first === undefined && next >= header.chunks) controller.close();
    },
  }, { highWaterMark: 0 });
  return { size: header.plaintextLength, body };
}

/**
 * The envelope with its data key re-wrapped (AES-GCM, version 2) under the keyring's current
 * key, the body as it was; null when it already is a version 2 envelope under the current key.
 */
export async function rewrap(keyring: Keyring, key: string, stored: Uint8Array): Promise<Bytes | null> {
  const bytes = asBytes(stored);
  const header = readHeader(bytes, key);
  if (header.kid === keyring.currentKid && header.wrap === "gcm") return null;
  const from = keyring.kek(header.kid, key);
  let wrapped: Uint8Array;
  try {
    wrapped = await keyring.suite.rewrap(from, keyring.kek(keyring.currentKid, key), bytes.subarray(header.wrappedStart, header.wrappedEnd), header.wrap);
  } catch {
    throw wrongKey(key, header.kid);
  }
  const kidBytes = encoder.encode(keyring.currentKid);
  const tail = bytes.subarray(header.bodyOffset - IV_BYTES - 12);
  const out = new Uint8Array(MAGIC.length + 1 + kidBytes.length + 1 + wrapped.length + tail.length);
  out.set(tail, writeKeyHeader(out, kidBytes, wrapped));
  return out;
}

/** Writes the magic, the key id and the wrapped data key at the start of `out`; returns where the IV goes. */
function writeKeyHeader(out: Uint8Array, kidBytes: Uint8Array, wrapped: Uint8Array): number {
  out.set(MAGIC);
  let at = MAGIC.length;
  out[at++] = kidBytes.length;
  out.set(kidBytes, at);
  at += kidBytes.length;
  out[at++] = wrapped.length;
  out.set(wrapped, at);
  return at + wrapped.length;
}
