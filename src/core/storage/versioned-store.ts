/**
 * @module
 * A `BlobStore` over a backend with compare-and-swap (R2 conditional writes, Redis
 * WATCH/MULTI, Deno KV versionstamps, S3 If-Match): the backend does raw versioned reads
 * and conditional writes; this layer owns serialization in the process and the bounded
 * retry loop, so updates and appends stay lossless across processes and isolates.
 */
import type { BlobStore, Bytes, KvStore } from "../ports.ts";
import { KeyedMutex } from "./keyed-mutex.ts";
import { encodeJsonArray, parseJsonArray } from "./json-array.ts";
import { joinStream } from "./byte-stream.ts";
import { CONFLICT, retryOnConflict } from "./conflict-retry.ts";

/** A stored value and the version a conditional write must name. */
export interface Versioned {
  /** The stored bytes. */
  bytes: Bytes;
  /** The backend's version tag (R2 etag, Deno KV versionstamp...). */
  version: string;
}

/** What a compare-and-swap backend provides. */
export interface VersionedBackend {
  /** The value and its version, or null when the key is absent. */
  get(key: string): Promise<Versioned | null>;
  /** Writes unconditionally. */
  put(key: string, value: Uint8Array): Promise<void>;
  /**
   * Writes unconditionally the `size` bytes of `body` without holding them all (an upload of
   * known length, chunks behind a head); rejects, writing nothing, when the body fails or
   * holds another length. Without it, the store joins the body and calls `put`.
   */
  putStream?(key: string, size: number, body: ReadableStream<Uint8Array>): Promise<void>;
  /** Writes only if the current version is `expected` (null: only if absent); false on conflict. */
  putIf(key: string, value: Uint8Array, expected: string | null): Promise<boolean>;
  /**
   * As `putIf`, answering the written value's new version (null on conflict; "" when the
   * backend did not say), so a writer that keeps what it wrote can write again without reading
   * it back (the array-block store's last block).
   */
  putIfVersion?(key: string, value: Uint8Array, expected: string | null): Promise<string | null>;
  /** Removes a key; true when it existed. */
  delete(key: string): Promise<boolean>;
  /** True when the key exists. */
  has(key: string): Promise<boolean>;
  /** Keys that start with `prefix` (the store filters and sorts them again). */
  list(prefix: string): Promise<string[]>;
  /**
   * Appends one item to the JSON array at `key` as `BlobStore.appendToJsonArray` does (with
   * `atIndex`, nothing is written when the array holds more items), touching only the array's
   * end when the backend can; null when a concurrent write won (the store tries again).
   * Without it, the store reads, parses and rewrites the array under `putIf`.
   */
  appendToJsonArray?(key: string, item: unknown, atIndex: number | undefined, skipped?: () => void): Promise<number | null>;
}

/** Options of {@link createVersionedBlobStore}. */
export interface VersionedStoreOptions {
  /** Conditional-write attempts before giving up (default 50). */
  maxAttempts?: number;
}

/** A lossless `BlobStore` over a compare-and-swap backend. */
export function createVersionedBlobStore(backend: VersionedBackend, options: VersionedStoreOptions = {}): BlobStore {
  const mutex = new KeyedMutex();
  const maxAttempts = options.maxAttempts ?? 50;

  const swap = (key: string, change: (current: Bytes | null) => Uint8Array | Promise<Uint8Array>) =>
    retryOnConflict(key, maxAttempts, async () => {
      const current = await backend.get(key);
      const next = await change(current?.bytes ?? null);
      return (await backend.putIf(key, next, current?.version ?? null)) ? next : CONFLICT;
    });

  /** One try of an append that rewrites the whole array: its count, or null when another write won. */
  async function rewriteAppend(key: string, item: unknown, atIndex: number | undefined, skipped?: () => void): Promise<number | null> {
    const current = await backend.get(key);
    const items = current === null ? [] : parseJsonArray(current.bytes).items;
    // Appended before (by this writer or another one finishing its work): nothing to write.
    if (atIndex !== undefined && items.length > atIndex) {
      skipped?.();
      return items.length;
    }
    items.push(item);
    return (await backend.putIf(key, encodeJsonArray(items), current?.version ?? null)) ? items.length : null;
  }

  return {
    get: async (key) => (await backend.get(key))?.bytes ?? null,
    put: (key, value) => mutex.run(key, () => backend.put(key, value)),
    putStream: (key, size, body) =>
      mutex.run(key, async () => (backend.putStream ? backend.putStream(key, size, body) : backend.put(key, await joinStream(body, size)))),
    delete: (key) => mutex.run(key, () => backend.delete(key)),
    has: (key) => backend.has(key),
    list: (prefix) => backend.list(prefix).then((keys) => keys.filter((key) => key.startsWith(prefix)).sort()),
    update: (key, change) => mutex.run(key, () => swap(key, change)),
    appendToJsonArray: (key, item, atIndex, appendOptions) =>
      mutex.run(key, () =>
        retryOnConflict(key, maxAttempts, async () => {
          const skipped = appendOptions?.skipped;
          return (backend.appendToJsonArray ? await backend.appendToJsonArray(key, item, atIndex, skipped) : await rewriteAppend(key, item, atIndex, skipped)) ??
            CONFLICT;
        })
      ),
  };
}

/**
 * A `KvStore` (strings, such as user records) over the same backend: values stored as UTF-8.
 * Its compare-and-set compares the stored text, then writes conditioned on the version read
 * with it, so a write in between (by any process) makes it answer false.
 */
export function createVersionedKvStore(backend: VersionedBackend): KvStore {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return {
    get: async (key) => {
      const stored = await backend.get(key);
      return stored === null ? null : decoder.decode(stored.bytes);
    },
    put: (key, value) => backend.put(key, encoder.encode(value)),
    async replaceIf(key, expected, value) {
      const stored = await backend.get(key);
      if (stored === null ? expected !== null : expected === null || decoder.decode(stored.bytes) !== expected) return false;
      return backend.putIf(key, encoder.encode(value), stored?.version ?? null);
    },
    delete: (key) => backend.delete(key),
    // Backends may list more than the prefix (Deno KV lists by key parts).
    list: async (prefix) => (await backend.list(prefix)).filter((key) => key.startsWith(prefix)).sort(),
  };
}
