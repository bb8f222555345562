/**
 * @module
 * Encryption at rest as a wrapper of any `BlobStore` or `KvStore` (docs/storage.md#encryption-at-rest):
 * every backend gets it by being wrapped, below the workers and the audit trail, so those see
 * plaintext and the store sees only envelopes. Each method maps onto the same method of the
 * store it wraps: writes seal, reads open, `update` opens and seals inside the store's own
 * compare-and-swap, and an append seals the one item it appends. A method added to the ports
 * is wrapped the same way: values it writes go through `sealValue` (or `sealItem` for one
 * item of an append-only array), values it reads through `openValue`, keys and counts pass
 * through as they are.
 */
import type { BlobStore, Bytes, KvStore } from "../ports.ts";
import { CHUNK_BYTES, isEnvelope, openStream, readHeader, sealStream } from "./envelope.ts";
import type { Keyring } from "./keyring.ts";
import { openItemValue, openRecord, openValue, type OpenOptions, type SealOptions, sealItem, sealRecord, sealValue, startsArray } from "./stored-value.ts";
import { joinStream, piecesOf } from "../storage/byte-stream.ts";

/** The key of a blob store's canary: one segment, which no case, audit or image key is. */
export const BLOB_CANARY_KEY = "encryption-canary";
/** The key of a KV store's canary: two segments, which no user id is. */
export const KV_CANARY_KEY = "encryption/canary";

/** A blob store that seals what it writes, and can hand an object out or take it in chunk by chunk. */
export interface EncryptedBlobStore extends BlobStore {
  /** The stored object's plaintext as a stream and its length, opened one chunk at a time; null when absent. */
  getStream(key: string): Promise<{ size: number; body: ReadableStream<Uint8Array> } | null>;
  /** Seals a plaintext of `size` bytes one chunk at a time into the wrapped store's own streaming write. */
  putStream(key: string, size: number, body: ReadableStream<Uint8Array>): Promise<void>;
}

/** Which store a wrapper is: the name its canary is checked under (see `Keyring.sealedStores`). */
export interface StoreName {
  /** The store's name (`data`, `STRIAE_DATA`...); without one, plaintext is always served as it is. */
  store?: string;
}

/** Wraps `inner` so every value is sealed with `keyring` (see {@link SealOptions} for arrays). */
export function encryptedBlobStore(inner: BlobStore, keyring: Keyring, options: SealOptions & StoreName = {}): EncryptedBlobStore {
  // Asked when each value is opened: the canary check that may mark the store comes after the wrapping.
  const refusing = () => keyring.refusesPlaintext(options.store);
  // Reads of an append-only log serve the items that open; a rewrite (update) still refuses a damaged one.
  // Both forms made once: a read picks one instead of building an object.
  const keepUnopenedItems = options.appendLog === true;
  const readableAs = [{ keepUnopenedItems, refusePlaintext: false }, { keepUnopenedItems, refusePlaintext: true }] as const;
  const readable = (): OpenOptions => readableAs[refusing() ? 1 : 0];
  const reveal = (key: string, stored: Bytes | null, open: OpenOptions = { refusePlaintext: refusing() }) =>
    stored === null ? null : openValue(keyring, key, stored, open);
  const underCurrentKey = (key: string, stored: Bytes): boolean => {
    try {
      return isEnvelope(stored) && readHeader(stored, key).kid === keyring.currentKid;
    } catch {
      return false;
    }
  };
  const put = async (key: string, value: Uint8Array): Promise<void> => {
    // Not needed to stay right (a kept plaintext serves only its own envelope): so the old plaintext is not kept for nothing.
    keyring.opened.forget(key);
    // More than a chunk, and not an array sealed item by item: sealed into the store as it
    // is written, so a large image costs one chunk beside its plaintext, not a sealed copy.
    if (inner.putStream !== undefined && value.length > CHUNK_BYTES && !startsArray(value)) {
      const sealed = await sealStream(keyring, "object", key, value.length, [value]);
      return inner.putStream(key, sealed.size, sealed.body);
    }
    return inner.put(key, await sealValue(keyring, key, value, options));
  };
  return {
    ...(inner.soleWriter === undefined ? {} : { soleWriter: inner.soleWriter }),
    get: async (key) => reveal(key, await inner.get(key), readable()),
    async getStream(key) {
      const stored = await inner.get(key);
      if (stored === null) return null;
      if (isEnvelope(stored)) return openStream(keyring, "object", key, stored);
      const bytes = await openValue(keyring, key, stored, readable());
      return { size: bytes.length, body: new Response(bytes).body! };
    },
    put,
    async putStream(key, size, body) {
      // An append-only log is sealed item by item, which needs the whole array.
      if (options.appendLog || inner.putStream === undefined) return put(key, await joinStream(body, size));
      const sealed = await sealStream(keyring, "object", key, size, piecesOf(body, size));
      return inner.putStream(key, sealed.size, sealed.body);
    },
    delete: (key) => {
      keyring.opened.forget(key);
      return inner.delete(key);
    },
    has: (key) => inner.has(key),
    list: async (prefix) => (await inner.list(prefix)).filter((key) => key !== BLOB_CANARY_KEY),
    async update(key, change, updateOptions) {
      // In place, the value replaced may stay stored beside the new one (files: a head's other
      // slot): only when it is sealed under the current key, so no plaintext or retired key's value stays.
      const asked = updateOptions?.inPlace;
      const inPlace = asked === undefined || asked === false
        ? undefined
        : { inPlace: (stored: Bytes) => underCurrentKey(key, stored) && (asked === true || asked(stored)) };
      let next: Uint8Array | undefined;
      await inner.update(key, async (current) => {
        next = await change(await reveal(key, current));
        return sealValue(keyring, key, next, options);
      }, inPlace);
      return next!;
    },
    ...(inner.jsonArrayItem === undefined ? {} : {
      jsonArrayItem: async (key: string, index: number) => openItemValue(keyring, key, await inner.jsonArrayItem!(key, index)),
    }),
    // Sealed appends are flushed before they resolve (no deferSync); whether one was skipped is passed on.
    appendToJsonArray: async (key, item, atIndex, appendOptions) =>
      inner.appendToJsonArray(key, await sealItem(keyring, key, item), atIndex, appendOptions?.skipped === undefined ? undefined : { skipped: appendOptions.skipped }),
  };
}

/** Wraps a KV store so every record is sealed with `keyring`. */
export function encryptedKvStore(inner: KvStore, keyring: Keyring, options: StoreName = {}): KvStore {
  const refusing = () => keyring.refusesPlaintext(options.store);
  return {
    async get(key) {
      const stored = await inner.get(key);
      return stored === null ? null : openRecord(keyring, key, stored, refusing());
    },
    put: async (key, value) => {
      keyring.opened.forget(key);
      return inner.put(key, await sealRecord(keyring, key, value));
    },
    delete: (key) => {
      keyring.opened.forget(key);
      return inner.delete(key);
    },
    list: async (prefix) => (await inner.list(prefix)).filter((key) => key !== KV_CANARY_KEY),
    ...(inner.replaceIf === undefined ? {} : {
      // Sealing is not deterministic, so `expected` cannot be sealed again to compare: the stored
      // string is read and opened, and the inner compare-and-set is made on that sealed string.
      async replaceIf(key: string, expected: string | null, value: string): Promise<boolean> {
        const stored = await inner.get(key);
        if ((stored === null ? null : await openRecord(keyring, key, stored, refusing())) !== expected) return false;
        keyring.opened.forget(key);
        return inner.replaceIf!(key, stored, await sealRecord(keyring, key, value));
      },
    }),
  };
}
