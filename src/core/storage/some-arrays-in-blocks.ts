/**
 * @module
 * A store on a compare-and-swap object store (S3, R2) that keeps only some keys' JSON arrays in
 * blocks (storage/array-blocks.ts): the record histories' append-only arrays
 * (docs/storage.md#record-history), so that appending a version moves one bounded block, not the
 * whole history. Every other key (a document, a head) is one object, read and written as the
 * plain versioned store does, with no request more (no listing of blocks on a `put`).
 */
import type { BlobStore } from "../ports.ts";
import { type ArrayBlockOptions, BLOCK_SEPARATOR, createArrayBlockStore } from "./array-blocks.ts";
import { createVersionedBlobStore, type VersionedBackend } from "./versioned-store.ts";

/** A later block's key: `{key}#{first index}`, the index 1 or more. */
const LATER_BLOCK = new RegExp(`${BLOCK_SEPARATOR}[1-9]\\d*$`);

/** `backend` as one store whose keys for which `inBlocks` holds keep their arrays in blocks. */
export function createSomeArraysInBlocksStore(backend: VersionedBackend, inBlocks: (key: string) => boolean, options: ArrayBlockOptions = {}): BlobStore {
  const blocks = createArrayBlockStore(backend, options);
  const plain = createVersionedBlobStore(backend);
  const of = (key: string): BlobStore => (inBlocks(key) ? blocks : plain);
  return {
    get: (key) => of(key).get(key),
    put: (key, value) => of(key).put(key, value),
    putStream: (key, size, body) => of(key).putStream!(key, size, body),
    delete: (key) => of(key).delete(key),
    has: (key) => of(key).has(key),
    // A later block names its array's key (the keys' own `#` may come first: `#history/...`).
    list: async (prefix) => {
      const keys = new Set<string>();
      for (const key of await plain.list(prefix)) {
        const base = key.replace(LATER_BLOCK, "");
        if (base === key || inBlocks(base)) keys.add(base);
        else keys.add(key);
      }
      return [...keys].filter((key) => key.startsWith(prefix)).sort();
    },
    update: (key, change) => of(key).update(key, change),
    appendToJsonArray: (key, item, atIndex, appendOptions) => of(key).appendToJsonArray(key, item, atIndex, appendOptions),
  };
}
