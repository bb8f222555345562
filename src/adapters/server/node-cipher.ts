/**
 * @module
 * The envelope primitives on `node:crypto` for `serve` and the commands (Node, Bun, Deno):
 * the same AES-256-GCM (bodies, and data keys wrapped as RFC 7518's A256GCMKW) and AES-KW
 * unwrap (RFC 3394, version 1 envelopes) as Web Crypto, byte for byte, without Web Crypto's
 * per-call cost in Node (tens of microseconds a call, a few calls per object). Where the
 * runtime lacks OpenSSL's AES-KW, it is built on one AES block at a time, as the RFC states
 * it, so it needs only `aes-256-ecb`. When this runtime lacks what it needs, or disagrees with
 * the RFC's test vector or Web Crypto, Web Crypto is used instead.
 */
import { createCipheriv, createDecipheriv, randomBytes, randomFillSync } from "node:crypto";
import type { Bytes } from "../../core/ports.ts";
import { type CipherSuite, GCM_WRAPPED_BYTES, type KeyEncryptionKey, type KeyWrap, webCryptoSuite } from "../../core/encryption/mod.ts";

const IV = Buffer.alloc(8, 0xa6);
const TAG_BYTES = 16;
const WRAP_IV_BYTES = 12;

/** Whether this runtime's node:crypto has AES-KW itself (Node does; Bun and Deno do not). */
const NATIVE_WRAP = (() => {
  try {
    createCipheriv("id-aes256-wrap", Buffer.alloc(32), IV);
    return true;
  } catch {
    return false;
  }
})();

/** AES-KW unwrap: OpenSSL's own where the runtime has it (it throws on a wrong key), else {@link blockUnwrap}. */
function unwrap(kek: Uint8Array, wrapped: Uint8Array): Buffer {
  if (!NATIVE_WRAP) return blockUnwrap(kek, wrapped);
  if (wrapped.length < 24 || wrapped.length % 8 !== 0) throw new Error("not an AES-KW wrapping");
  const decipher = createDecipheriv("id-aes256-wrap", kek, IV);
  return Buffer.concat([decipher.update(wrapped), decipher.final()]);
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
 * Data keys made per batch: their random bytes and their wrappings' IVs drawn by one call (a
 * call to the random source costs as much as a wrap), handed out in turn and never again.
 */
const KEY_BATCH = 256;
const KEY_BYTES = 32;

/** A KEK's data keys made ahead and their AES-GCM wrappings (60 bytes each). */
interface KeyBatch {
  keys: Buffer;
  wrapped: Buffer;
  at: number;
}

// By the key object, as Web Crypto's suite: two keyrings may hold different keys under one id.
const keyBatches = new WeakMap<KeyEncryptionKey, KeyBatch>();

/** RFC 7518 §4.7 (A256GCMKW): `key` wrapped under `kek` with the IV `iv`, into `out` as IV | ciphertext | tag. */
function gcmWrapInto(kek: Uint8Array, iv: Uint8Array, key: Uint8Array, out: Buffer, at: number): void {
  const cipher = createCipheriv("aes-256-gcm", kek, iv, { authTagLength: TAG_BYTES });
  out.set(iv, at);
  const sealed = cipher.update(key);
  out.set(sealed, at + WRAP_IV_BYTES);
  const tail = cipher.final(); // empty for GCM
  out.set(tail, at + WRAP_IV_BYTES + sealed.length);
  out.set(cipher.getAuthTag(), at + WRAP_IV_BYTES + KEY_BYTES);
}

/** The data key an AES-GCM wrapping holds; throws when `kek` did not wrap it or it was altered. */
function gcmUnwrap(kek: Uint8Array, wrapped: Uint8Array): Buffer {
  if (wrapped.length !== GCM_WRAPPED_BYTES) throw new Error("not an AES-GCM key wrapping");
  const decipher = createDecipheriv("aes-256-gcm", kek, wrapped.subarray(0, WRAP_IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAuthTag(wrapped.subarray(WRAP_IV_BYTES + KEY_BYTES));
  const key = decipher.update(wrapped.subarray(WRAP_IV_BYTES, WRAP_IV_BYTES + KEY_BYTES));
  decipher.final(); // checks the tag; empty for GCM
  return key;
}

/** The data key a wrapping of kind `wrap` holds. */
const unwrapAny = (kek: Uint8Array, wrapped: Uint8Array, wrap: KeyWrap): Buffer => (wrap === "gcm" ? gcmUnwrap(kek, wrapped) : unwrap(kek, wrapped));

/** `key` wrapped anew with AES-GCM under `kek`, with a fresh random IV. */
function gcmWrap(kek: Uint8Array, key: Uint8Array): Buffer {
  const out = Buffer.alloc(GCM_WRAPPED_BYTES);
  gcmWrapInto(kek, randomBytes(WRAP_IV_BYTES), key, out, 0);
  return out;
}

/** A fresh random data key and its wrapping under `kek`: views of a batch that is never refilled, so a key handed out never changes or repeats. */
function newDataKey(kek: KeyEncryptionKey): { key: Uint8Array; wrapped: Uint8Array } {
  let batch = keyBatches.get(kek);
  if (batch === undefined || batch.at === KEY_BATCH) {
    const random = randomFillSync(Buffer.allocUnsafeSlow(KEY_BATCH * (KEY_BYTES + WRAP_IV_BYTES)));
    const keys = random.subarray(0, KEY_BATCH * KEY_BYTES);
    const wrapped = Buffer.allocUnsafeSlow(KEY_BATCH * GCM_WRAPPED_BYTES);
    for (let k = 0; k < KEY_BATCH; k++) {
      const iv = random.subarray(KEY_BATCH * KEY_BYTES + k * WRAP_IV_BYTES, KEY_BATCH * KEY_BYTES + (k + 1) * WRAP_IV_BYTES);
      gcmWrapInto(kek.bytes, iv, keys.subarray(k * KEY_BYTES, (k + 1) * KEY_BYTES), wrapped, k * GCM_WRAPPED_BYTES);
    }
    batch = { keys, wrapped, at: 0 };
    keyBatches.set(kek, batch);
  }
  const at = batch.at++;
  // Views made by the constructor: a Buffer's subarray costs several times more (a species lookup, a Buffer made).
  return {
    key: new Uint8Array(batch.keys.buffer, batch.keys.byteOffset + at * KEY_BYTES, KEY_BYTES),
    wrapped: new Uint8Array(batch.wrapped.buffer, batch.wrapped.byteOffset + at * GCM_WRAPPED_BYTES, GCM_WRAPPED_BYTES),
  };
}

/** AES-256-GCM: opens `sealed` (ciphertext then tag); throws when the tag does not match. */
function decrypt(key: Uint8Array, iv: Bytes, aad: Bytes, sealed: Bytes): Uint8Array {
  const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  const head = decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES));
  const tail = decipher.final(); // checks the tag; empty for GCM, so no copy is made
  return tail.length === 0 ? head : Buffer.concat([head, tail]);
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
    unwrap(kek, wrapped, wrap) {
      try {
        return Promise.resolve(unwrapAny(kek.bytes, wrapped, wrap));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    unwrapNow: (kek, wrapped, wrap) => unwrapAny(kek.bytes, wrapped, wrap),
    rewrap(from, to, wrapped, wrap) {
      try {
        return Promise.resolve(gcmWrap(to.bytes, unwrapAny(from.bytes, wrapped, wrap)));
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
        return Promise.resolve(decrypt(key, iv, aad, sealed));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    decryptNow: decrypt,
    // Native memcmp: a 2 KB envelope in about a tenth of a JS loop's instructions.
    equal: (a, b) => Buffer.compare(a, b) === 0,
  };
}

// RFC 3394 §4.6: 256 bits of key data wrapped with a 256-bit KEK.
const RFC_KEK = Buffer.from("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F", "hex");
const RFC_DATA = Buffer.from("00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F", "hex");
const RFC_WRAPPED = Buffer.from("28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21", "hex");

let chosen: CipherSuite | undefined;

/**
 * The suite `serve` and the commands seal with: `node:crypto` when this runtime has AES-256-ECB
 * and AES-256-GCM, unwraps the RFC's AES-KW vector, wraps a data key as Web Crypto does and
 * passes a GCM round trip, else Web Crypto.
 */
export async function serverCipherSuite(): Promise<CipherSuite> {
  if (chosen !== undefined) return chosen;
  try {
    const suite = nodeCipherSuite();
    for (const u of [unwrap, blockUnwrap]) if (!u(RFC_KEK, RFC_WRAPPED).equals(RFC_DATA)) throw new Error("AES-KW disagrees with RFC 3394");
    // A data key wrapped here, unwrapped by Web Crypto: the same A256GCMKW on both sides.
    const wrapped = gcmWrap(RFC_KEK, RFC_DATA);
    const kek = await crypto.subtle.importKey("raw", RFC_KEK, "AES-GCM", false, ["decrypt"]);
    const params = { name: "AES-GCM", iv: wrapped.slice(0, WRAP_IV_BYTES), tagLength: 128 };
    const viaWeb = new Uint8Array(await crypto.subtle.decrypt(params, kek, wrapped.slice(WRAP_IV_BYTES)));
    if (!Buffer.from(viaWeb).equals(RFC_DATA) || !gcmUnwrap(RFC_KEK, wrapped).equals(RFC_DATA)) throw new Error("the AES-GCM key wrapping disagrees with Web Crypto");
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
