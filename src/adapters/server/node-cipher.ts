/**
 * @module
 * The envelope primitives on `node:crypto` for `serve` and the commands (Node, Bun, Deno):
 * the same AES-256-GCM and AES-KW (RFC 3394) as Web Crypto, byte for byte, without Web
 * Crypto's per-call cost in Node (tens of microseconds a call, a few calls per object). AES-KW
 * is built on one AES block at a time, as the RFC states it, so it needs only `aes-256-ecb`.
 * When this runtime lacks what it needs, or disagrees with the RFC's test vector, Web Crypto
 * is used instead.
 */
import { type Cipher, createCipheriv, createDecipheriv, randomBytes, randomFillSync } from "node:crypto";
import type { Bytes } from "../../core/ports.ts";
import { type CipherSuite, type KeyEncryptionKey, webCryptoSuite } from "../../core/encryption/mod.ts";

const IV = Buffer.alloc(8, 0xa6);
const TAG_BYTES = 16;

/** Whether this runtime's node:crypto has AES-KW itself (Node does; Bun and Deno do not). */
const NATIVE_WRAP = (() => {
  try {
    createCipheriv("id-aes256-wrap", Buffer.alloc(32), IV);
    return true;
  } catch {
    return false;
  }
})();

/** AES-KW wrap: OpenSSL's own where the runtime has it, else {@link blockWrap}. */
function wrap(kek: Uint8Array, plain: Uint8Array): Buffer {
  if (!NATIVE_WRAP) return blockWrap(kek, plain);
  const cipher = createCipheriv("id-aes256-wrap", kek, IV);
  return Buffer.concat([cipher.update(plain), cipher.final()]);
}

/** AES-KW unwrap: OpenSSL's own where the runtime has it (it throws on a wrong key), else {@link blockUnwrap}. */
function unwrap(kek: Uint8Array, wrapped: Uint8Array): Buffer {
  if (!NATIVE_WRAP) return blockUnwrap(kek, wrapped);
  if (wrapped.length < 24 || wrapped.length % 8 !== 0) throw new Error("not an AES-KW wrapping");
  const decipher = createDecipheriv("id-aes256-wrap", kek, IV);
  return Buffer.concat([decipher.update(wrapped), decipher.final()]);
}

/** RFC 3394 §2.2.1: wraps `plain` (a multiple of 8 bytes) under `kek`. */
function blockWrap(kek: Uint8Array, plain: Uint8Array): Buffer {
  const n = plain.length / 8;
  const aes = createCipheriv("aes-256-ecb", kek, null).setAutoPadding(false);
  const a = Buffer.from(IV);
  const r = Buffer.from(plain);
  const block = Buffer.alloc(16);
  for (let j = 0; j <= 5; j++) {
    for (let i = 1; i <= n; i++) {
      a.copy(block, 0);
      r.copy(block, 8, (i - 1) * 8, i * 8);
      const b = aes.update(block);
      b.copy(a, 0, 0, 8);
      a.writeUInt32BE((a.readUInt32BE(4) ^ (n * j + i)) >>> 0, 4);
      b.copy(r, (i - 1) * 8, 8, 16);
    }
  }
  return Buffer.concat([a, r]);
}

/** RFC 3394 §2.2.2: the key `wrapped` holds, or an error when its check value is wrong. */
function blockUnwrap(kek: Uint8Array, wrapped: Uint8Array): Buffer {
  if (wrapped.length < 24 || wrapped.length % 8 !== 0) throw new Error("not an AES-KW wrapping");
  const n = wrapped.length / 8 - 1;
  const aes = createDecipheriv("aes-256-ecb", kek, null).setAutoPadding(false);
  const a = Buffer.from(wrapped.subarray(0, 8));
  const r = Buffer.from(wrapped.subarray(8));
  const block = Buffer.alloc(16);
  for (let j = 5; j >= 0; j--) {
    for (let i = n; i >= 1; i--) {
      a.writeUInt32BE((a.readUInt32BE(4) ^ (n * j + i)) >>> 0, 4);
      a.copy(block, 0);
      r.copy(block, 8, (i - 1) * 8, i * 8);
      const b = aes.update(block);
      b.copy(a, 0, 0, 8);
      b.copy(r, (i - 1) * 8, 8, 16);
    }
  }
  if (!a.equals(IV)) throw new Error("AES-KW integrity check failed");
  return r;
}

/**
 * Data keys made per batch: their random bytes drawn by one call, and all wrapped together
 * by {@link wrapBatch} (each step of RFC 3394 one AES call for the whole batch), where one
 * wrap of its own costs a cipher set-up, two calls and a copy (about 25k instructions).
 */
const KEY_BATCH = 256;
const KEY_BYTES = 32;
const WRAPPED_BYTES = KEY_BYTES + 8;

/** A KEK's data keys made ahead and their wrappings, handed out in turn and never again. */
interface KeyBatch {
  /** AES-256-ECB under the KEK, without padding: AES blocks in, AES blocks out, no state kept between calls. */
  aes: Cipher;
  keys: Buffer;
  wrapped: Buffer;
  at: number;
}

// By the key object, as Web Crypto's suite: two keyrings may hold different keys under one id.
const keyBatches = new WeakMap<KeyEncryptionKey, KeyBatch>();

/** A Uint32Array over `bytes` (a copy when they do not start on a 4-byte boundary). */
const words = (bytes: Buffer): Uint32Array =>
  bytes.byteOffset % 4 === 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2) : new Uint32Array(Uint8Array.from(bytes).buffer);

/** `t` big-endian, as the 32-bit word this platform reads those 4 bytes as. */
const bigEndianWord = (t: number): number => {
  const word = new Uint32Array(1);
  new DataView(word.buffer).setUint32(0, t, false);
  return word[0]!;
};

/**
 * RFC 3394 §2.2.1 for `count` 32-byte keys at once, `keys` back to back: each of the 24 steps
 * of the RFC is one `aes.update` of one block per key (the keys' steps do not depend on each
 * other). Returns the wrappings back to back (40 bytes each), as {@link wrap} makes them.
 */
export function wrapBatch(aes: Cipher, keys: Buffer, count: number): Buffer {
  const n = KEY_BYTES / 8;
  const a = new Uint32Array(2 * count).fill(0xa6a6a6a6);
  const r = words(Buffer.from(keys.subarray(0, count * KEY_BYTES)));
  const input = Buffer.alloc(count * 16);
  const blocks = words(input);
  for (let j = 0; j <= 5; j++) {
    for (let i = 1; i <= n; i++) {
      const at = 2 * (i - 1);
      for (let k = 0; k < count; k++) {
        blocks[4 * k] = a[2 * k]!;
        blocks[4 * k + 1] = a[2 * k + 1]!;
        blocks[4 * k + 2] = r[2 * n * k + at]!;
        blocks[4 * k + 3] = r[2 * n * k + at + 1]!;
      }
      const out = aes.update(input);
      if (out.length !== input.length) throw new Error("AES-256-ECB held back blocks");
      const b = words(out);
      const t = bigEndianWord(n * j + i);
      for (let k = 0; k < count; k++) {
        a[2 * k] = b[4 * k]!;
        a[2 * k + 1] = b[4 * k + 1]! ^ t;
        r[2 * n * k + at] = b[4 * k + 2]!;
        r[2 * n * k + at + 1] = b[4 * k + 3]!;
      }
    }
  }
  const out = Buffer.allocUnsafeSlow(count * WRAPPED_BYTES);
  const wrapped = words(out);
  // Each wrapping is A then R[1..n].
  for (let k = 0; k < count; k++) {
    const at = (WRAPPED_BYTES / 4) * k;
    wrapped[at] = a[2 * k]!;
    wrapped[at + 1] = a[2 * k + 1]!;
    for (let w = 0; w < 2 * n; w++) wrapped[at + 2 + w] = r[2 * n * k + w]!;
  }
  return out;
}

/** A fresh random data key and its wrapping under `kek`: views of a batch that is never refilled, so a key handed out never changes or repeats. */
function newDataKey(kek: KeyEncryptionKey): { key: Uint8Array; wrapped: Uint8Array } {
  let batch = keyBatches.get(kek);
  if (batch === undefined || batch.at === KEY_BATCH) {
    const aes = batch?.aes ?? createCipheriv("aes-256-ecb", kek.bytes, null).setAutoPadding(false);
    const keys = randomFillSync(Buffer.allocUnsafeSlow(KEY_BATCH * KEY_BYTES));
    batch = { aes, keys, wrapped: wrapBatch(aes, keys, KEY_BATCH), at: 0 };
    keyBatches.set(kek, batch);
  }
  const at = batch.at++;
  // Views made by the constructor: a Buffer's subarray costs several times more (a species lookup, a Buffer made).
  return {
    key: new Uint8Array(batch.keys.buffer, batch.keys.byteOffset + at * KEY_BYTES, KEY_BYTES),
    wrapped: new Uint8Array(batch.wrapped.buffer, batch.wrapped.byteOffset + at * WRAPPED_BYTES, WRAPPED_BYTES),
  };
}

/** The suite on `node:crypto`; data keys are their 32 bytes (Uint8Array views, or Buffers once unwrapped). Every call works before it returns. */
export function nodeCipherSuite(): CipherSuite<Uint8Array> {
  return {
    newDataKey(kek: KeyEncryptionKey) {
      try {
        return Promise.resolve(newDataKey(kek));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    unwrap(kek, wrapped) {
      try {
        return Promise.resolve(unwrap(kek.bytes, wrapped));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    rewrap(from, to, wrapped) {
      try {
        return Promise.resolve(wrap(to.bytes, unwrap(from.bytes, wrapped)));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    encrypt(key, iv, aad, plaintext) {
      const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(aad);
      const head = cipher.update(plaintext);
      const tail = cipher.final();
      return Promise.resolve(Buffer.concat([head, tail, cipher.getAuthTag()]));
    },
    decrypt(key, iv, aad, sealed) {
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(aad);
        decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
        const head = decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES));
        const tail = decipher.final(); // checks the tag; empty for GCM, so no copy is made
        return Promise.resolve(tail.length === 0 ? head : Buffer.concat([head, tail]));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    // Native memcmp: a 2 KB envelope in about a tenth of a JS loop's instructions.
    equal: (a, b) => Buffer.compare(a, b) === 0,
  };
}

// RFC 3394 §4.6: 256 bits of key data wrapped with a 256-bit KEK.
const RFC_KEK = Buffer.from("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F", "hex");
const RFC_DATA = Buffer.from("00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F", "hex");
const RFC_WRAPPED = "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21";

let chosen: CipherSuite | undefined;

/**
 * The suite `serve` and the commands seal with: `node:crypto` when this runtime has AES-256-ECB
 * and AES-256-GCM and matches the RFC's AES-KW vector and a GCM round trip, else Web Crypto.
 */
export async function serverCipherSuite(): Promise<CipherSuite> {
  if (chosen !== undefined) return chosen;
  try {
    const suite = nodeCipherSuite();
    for (const [w, u] of [[wrap, unwrap], [blockWrap, blockUnwrap]] as const) {
      if (w(RFC_KEK, RFC_DATA).toString("hex").toUpperCase() !== RFC_WRAPPED || !u(RFC_KEK, Buffer.from(RFC_WRAPPED, "hex")).equals(RFC_DATA)) {
        throw new Error("AES-KW disagrees with RFC 3394");
      }
    }
    // The batch: the vector twice, beside keys whose wrapping the one-at-a-time wrap gives.
    const others = randomBytes(2 * KEY_BYTES);
    const batch = wrapBatch(createCipheriv("aes-256-ecb", RFC_KEK, null).setAutoPadding(false), Buffer.concat([RFC_DATA, others, RFC_DATA]), 4);
    const expected = Buffer.concat([Buffer.from(RFC_WRAPPED, "hex"), blockWrap(RFC_KEK, others.subarray(0, 32)), blockWrap(RFC_KEK, others.subarray(32)), Buffer.from(RFC_WRAPPED, "hex")]);
    if (!batch.equals(expected)) throw new Error("the batched AES-KW disagrees with RFC 3394");
    const key = randomBytes(32);
    const iv = randomBytes(12) as Bytes;
    const aad = Buffer.from("check") as Bytes;
    const opened = await suite.decrypt(key, iv, aad, (await suite.encrypt(key, iv, aad, RFC_DATA as Bytes)) as Bytes);
    if (!Buffer.from(opened).equals(RFC_DATA)) throw new Error("AES-GCM round trip failed");
    chosen = suite;
  } catch {
    chosen = webCryptoSuite();
  }
  return chosen;
}
