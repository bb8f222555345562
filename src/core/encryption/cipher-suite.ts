/**
 * @module
 * The primitives an envelope needs: AES-256-GCM for bodies and for wrapping data keys (RFC 7518
 * §4.7, A256GCMKW), and AES-KW (RFC 3394) to unwrap the data keys of version 1 envelopes.
 * Web Crypto is the default on every runtime; a server adapter may pass a faster suite with
 * the same output (Node's Web Crypto costs tens of microseconds per call, several calls per
 * object). Every suite must open what any other sealed.
 */
import type { Bytes } from "../ports.ts";

/** One key-encryption key: its id and its 32 bytes. */
export interface KeyEncryptionKey {
  /** The key's id, stored in every envelope it wraps. */
  readonly kid: string;
  /** The AES-256 key bytes. */
  readonly bytes: Bytes;
}

/**
 * How a data key is wrapped: `"kw"` AES-KW (RFC 3394; 40 bytes, envelopes of version 1, read
 * only), `"gcm"` AES-256-GCM under the key-encryption key with a random 96-bit IV and no
 * additional data (RFC 7518 §4.7, A256GCMKW; IV | ciphertext | 128-bit tag, 60 bytes).
 */
export type KeyWrap = "kw" | "gcm";

/** Bytes of a data key wrapped with AES-256-GCM: IV (12), the key (32), tag (16). */
export const GCM_WRAPPED_BYTES = 60;

/** AES-256-GCM and AES-KW over one kind of data-key handle `K`. */
export interface CipherSuite<K = unknown> {
  /** A fresh random data key and its AES-256-GCM wrapping (`"gcm"`) under `kek`. */
  newDataKey(kek: KeyEncryptionKey): Promise<{ key: K; wrapped: Uint8Array }>;
  /** The data key a wrapping of kind `wrap` holds; rejects when `kek` is not the key that wrapped it, or the wrapping was altered. */
  unwrap(kek: KeyEncryptionKey, wrapped: Uint8Array, wrap: KeyWrap): Promise<K>;
  /** The data key of a wrapping of kind `wrap` under `from`, wrapped anew with AES-256-GCM (`"gcm"`) under `to`; rejects when `from` did not wrap it. */
  rewrap(from: KeyEncryptionKey, to: KeyEncryptionKey, wrapped: Uint8Array, wrap: KeyWrap): Promise<Uint8Array>;
  /** AES-256-GCM: the ciphertext followed by the 16-byte tag. Reads `aad` before it returns. */
  encrypt(key: K, iv: Bytes, aad: Bytes, plaintext: Bytes): Promise<Uint8Array>;
  /** Opens what {@link CipherSuite.encrypt} sealed; rejects when the tag does not match. Reads `aad` before it returns. */
  decrypt(key: K, iv: Bytes, aad: Bytes, sealed: Bytes): Promise<Uint8Array>;
  /** {@link CipherSuite.unwrap} answered at once, for a suite whose work is done before it returns: a read of an object waits on no promise. Throws where the other rejects. */
  unwrapNow?(kek: KeyEncryptionKey, wrapped: Uint8Array, wrap: KeyWrap): K;
  /** {@link CipherSuite.decrypt} answered at once (see {@link CipherSuite.unwrapNow}). Throws where the other rejects. */
  decryptNow?(key: K, iv: Bytes, aad: Bytes, sealed: Bytes): Uint8Array;
  /** Whether two arrays hold the same bytes (a stored envelope and one opened before), when the runtime has a faster compare than a loop. */
  equal?(a: Uint8Array, b: Uint8Array): boolean;
}

/** The suite on Web Crypto (every runtime; the one Cloudflare Workers use). */
export function webCryptoSuite(): CipherSuite<CryptoKey> {
  const subtle = crypto.subtle;
  // By the key object, not its id: two keyrings may hold different keys under one id.
  const imported = new WeakMap<KeyEncryptionKey, Record<KeyWrap, Promise<CryptoKey> | undefined>>();
  const kekOf = (kek: KeyEncryptionKey, wrap: KeyWrap): Promise<CryptoKey> => {
    let keys = imported.get(kek);
    if (keys === undefined) imported.set(kek, keys = { kw: undefined, gcm: undefined });
    return keys[wrap] ??= subtle.importKey("raw", kek.bytes, wrap === "kw" ? "AES-KW" : "AES-GCM", false, ["wrapKey", "unwrapKey"]);
  };
  const wrapWith = async (key: CryptoKey, kek: KeyEncryptionKey): Promise<Uint8Array> => {
    const out = new Uint8Array(GCM_WRAPPED_BYTES);
    // Typed, not a literal: Deno's own types leave AesGcmParams out of wrapKey's (TS2353 on tagLength).
    const params: AesGcmParams = { name: "AES-GCM", iv: crypto.getRandomValues(out.subarray(0, WRAP_IV_BYTES)), tagLength: 128 };
    out.set(new Uint8Array(await subtle.wrapKey("raw", key, await kekOf(kek, "gcm"), params)), WRAP_IV_BYTES);
    return out;
  };
  const unwrapWith = async (kek: KeyEncryptionKey, wrapped: Uint8Array, wrap: KeyWrap, extractable: boolean): Promise<CryptoKey> => {
    const usages: KeyUsage[] = extractable ? ["encrypt"] : ["decrypt"];
    if (wrap === "kw") return subtle.unwrapKey("raw", asBytes(wrapped), await kekOf(kek, "kw"), "AES-KW", "AES-GCM", extractable, usages);
    if (wrapped.length !== GCM_WRAPPED_BYTES) throw new Error("not an AES-GCM key wrapping");
    const bytes = asBytes(wrapped);
    const params = { name: "AES-GCM", iv: bytes.subarray(0, WRAP_IV_BYTES), tagLength: 128 };
    return subtle.unwrapKey("raw", bytes.subarray(WRAP_IV_BYTES), await kekOf(kek, "gcm"), params, "AES-GCM", extractable, usages);
  };
  return {
    async newDataKey(kek) {
      // Random bytes imported (one call) cost less than generateKey in Node.
      const key = await subtle.importKey("raw", crypto.getRandomValues(new Uint8Array(32)), "AES-GCM", true, ["encrypt", "decrypt"]);
      return { key, wrapped: await wrapWith(key, kek) };
    },
    unwrap: (kek, wrapped, wrap) => unwrapWith(kek, wrapped, wrap, false),
    rewrap: async (from, to, wrapped, wrap) => wrapWith(await unwrapWith(from, wrapped, wrap, true), to),
    encrypt: async (key, iv, aad, plaintext) => new Uint8Array(await subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad, tagLength: 128 }, key, plaintext)),
    decrypt: async (key, iv, aad, sealed) => new Uint8Array(await subtle.decrypt({ name: "AES-GCM", iv, additionalData: aad, tagLength: 128 }, key, sealed)),
  };
}

/** Bytes of the IV at the start of an AES-256-GCM key wrapping. */
const WRAP_IV_BYTES = 12;

const asBytes = (value: Uint8Array): Bytes => (value.buffer instanceof ArrayBuffer ? (value as Bytes) : new Uint8Array(value));
