/**
 * @module
 * A `BlobStore` on an R2 binding, used directly so objects keep the `/` keys existing
 * buckets hold (unstorage's Cloudflare drivers would store `u1:case:data.json`). Updates
 * and audit appends are conditional writes on the object's ETag: lossless across isolates.
 */
import type { BlobStore } from "../../core/ports.ts";
import { createVersionedBlobStore, type VersionedBackend } from "../../core/storage/versioned-store.ts";
import { type ArrayBlockOptions, createArrayBlockStore } from "../../core/storage/array-blocks.ts";
import { createSomeArraysInBlocksStore } from "../../core/storage/some-arrays-in-blocks.ts";
import { isHistoryArrayKey } from "../../core/history/history-keys.ts";
import type { R2BucketLike } from "./bindings.ts";
import { joinStream } from "../../core/storage/byte-stream.ts";

/** The compare-and-swap backend over one bucket. */
export function r2Backend(bucket: R2BucketLike): VersionedBackend {
  async function putIfVersion(key: string, value: Uint8Array, expected: string | null): Promise<string | null> {
    // `etagDoesNotMatch: "*"` is If-None-Match: * (create only when absent).
    const onlyIf = expected === null ? { etagDoesNotMatch: "*" } : { etagMatches: expected };
    return (await bucket.put(key, value, { onlyIf }))?.etag ?? null;
  }

  return {
    async get(key) {
      const object = await bucket.get(key);
      return object === null ? null : { bytes: new Uint8Array(await object.arrayBuffer()), version: object.etag };
    },
    async put(key, value) {
      await bucket.put(key, value);
    },
    async putStream(key, size, body) {
      // R2 takes a stream only of known length; outside workerd there is no such stream, so it is joined.
      const Fixed = (globalThis as { FixedLengthStream?: new (length: number) => TransformStream<Uint8Array, Uint8Array> }).FixedLengthStream;
      if (Fixed === undefined) return void (await bucket.put(key, await joinStream(body, size)));
      const { readable, writable } = new Fixed(size);
      await Promise.all([bucket.put(key, readable), body.pipeTo(writable)]);
    },
    putIf: async (key, value, expected) => (await putIfVersion(key, value, expected)) !== null,
    putIfVersion,
    async delete(key) {
      if ((await bucket.head(key)) === null) return false;
      await bucket.delete(key);
      return true;
    },
    async has(key) {
      return (await bucket.head(key)) !== null;
    },
    async list(prefix) {
      const keys: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await bucket.list({ prefix, cursor });
        keys.push(...page.objects.map((object) => object.key));
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor !== undefined);
      return keys;
    },
  };
}

/** Options of {@link createR2BlobStore}. */
export interface R2BlobStoreOptions {
  /**
   * Keep JSON arrays (audit days) in blocks of a bounded number of items, so an append moves
   * one block rather than the day (docs/storage.md#audit-days). For the audit bucket only.
   */
  arrayBlocks?: ArrayBlockOptions;
  /**
   * Keep the record histories' arrays in blocks, every other key one object, so appending a
   * version moves one block rather than the history (docs/storage.md#record-history). For the
   * data bucket; ignored with `arrayBlocks`.
   */
  historyBlocks?: ArrayBlockOptions;
}

/** A `BlobStore` on an R2 bucket binding. */
export function createR2BlobStore(bucket: R2BucketLike, options: R2BlobStoreOptions = {}): BlobStore {
  const backend = r2Backend(bucket);
  if (options.arrayBlocks !== undefined) return createArrayBlockStore(backend, options.arrayBlocks);
  if (options.historyBlocks !== undefined) return createSomeArraysInBlocksStore(backend, isHistoryArrayKey, options.historyBlocks);
  return createVersionedBlobStore(backend);
}
