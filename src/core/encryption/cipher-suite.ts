/**
 * @module
 * The primitives an envelope needs: AES-256-GCM for bodies, AES-KW (RFC 3394) for data keys.
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

/** AES-256-GCM and AES-KW over one kind of data-key handle `K`. */
export interface CipherSuite<K = unknown> {
  /** A fresh random data key and its AES-KW wrapping under `kek`. */
  newDataKey(kek: KeyEncryptionKey): Promise<{ key: K; wrapped: Uint8Array }>;
  /** The data key a wrapping holds; rejects when `kek` is not the key that wrapped it. */
  unwrap(kek: KeyEncryptionKey, wrapped: Uint8Array): Promise<K>;
  /** The data key re-wrapped from `from` to `to`; rejects when `from` did not wrap it. */
  rewrap(from: KeyEncryptionKey, to: KeyEncryptionKey, wrapped: Uint8Array): Promise<Uint8Array>;
  /** AES-256-GCM: the ciphertext followed by the 16-byte tag. Reads `aad` before it returns. */
  encrypt(key: K, iv: Bytes, aad: Bytes, plaintext: Bytes): Promise<Uint8Array>;
  /** Opens what {@link CipherSuite.encrypt} sealed; rejects when the tag does not match. Reads `aad` before it returns. */
  decrypt(key: K, iv: Bytes, aad: Bytes, sealed: Bytes): Promise<Uint8Array>;
  /** Whether two arrays hold the same bytes (a stored envelope and one opened before), when the runtime has a faster compare than a loop. */
  equal?(a: Uint8Array, b: Uint8Array): boolean;
}

/** The suite on Web Crypto (every runtime; the one Cloudflare Workers use). */
export function webCryptoSuite(): CipherSuite<CryptoKey> {
  const subtle = crypto.subtle;
  // By the key object, not its id: two keyrings may hold different keys under one id.
  const imported = new WeakMap<KeyEncryptionKey, Promise<CryptoKey>>();
  const kekOf = (kek: KeyEncryptionKey): Promise<CryptoKey> => {
    let key = imported.get(kek);
    if (key === undefined) {
      key = subtle.importKey("raw", kek.bytes, "AES-KW", false, ["wrapKey", "unwrapKey"]);
      imported.set(kek, key);
    }
    return key;
  };
  return {
    async newDataKey(kek) {
      // Random bytes imported (one call) cost less than generateKey in Node.
      const key = await subtle.importKey("raw", crypto.getRandomValues(new Uint8Array(32)), "AES-GCM", true, ["encrypt", "decrypt"]);
      return { key, wrapped: new Uint8Array(await subtle.wrapKey("raw", key, await kekOf(kek), "AES-KW")) };
    },
    async unwrap(kek, wrapped) {
      return subtle.unwrapKey("raw", asBytes(wrapped), await kekOf(kek), "AES-KW", "AES-GCM", false, ["decrypt"]);
    },
    async rewrap(from, to, wrapped) {
      const key = await subtle.unwrapKey("raw", asBytes(wrapped), await kekOf(from), "AES-KW", "AES-GCM", true, ["encrypt"]);
      return new Uint8Array(await subtle.wrapKey("raw", key, await kekOf(to), "AES-KW"));
    },
    encrypt: async (key, iv, aad, plaintext) => new Uint8Array(await subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad, tagLength: 128 }, key, plaintext)),
    decrypt: async (key, iv, aad, sealed) => new Uint8Array(await subtle.decrypt({ name: "AES-GCM", iv, additionalData: aad, tagLength: 128 }, key, sealed)),
  };
}

const asBytes = (value: Uint8Array): Bytes => (value.buffer instanceof ArrayBuffer ? (value as Bytes) : new Uint8Array(value));
