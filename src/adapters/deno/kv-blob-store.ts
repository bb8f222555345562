/**
 * @module
 * Stores on Deno KV (STORAGE=deno-kv, and Deno Deploy), lossless across isolates.
 * A KV value holds at most 64 KiB and one atomic commit about 800 KiB, so a blob is kept
 * as immutable chunks of one generation plus a small head naming that generation: a write
 * stores the new chunks first, then swaps the head in one atomic commit checked against
 * the head's versionstamp (compare-and-swap), then removes the old chunks. Readers follow
 * the head, so they never see half of a write, whatever the blob's size.
 */
import type { BlobStore, KvStore } from "../../core/ports.ts";
import { createVersionedBlobStore, createVersionedKvStore, type VersionedBackend } from "../../core/storage/versioned-store.ts";
import { chunksOf, piecesOf } from "../../core/storage/byte-stream.ts";

/** The parts of `Deno.Kv` used here (so this type-checks without Deno's types). */
export interface DenoKvLike {
  /** The entry at a key with its versionstamp (both null when absent). */
  get<T = unknown>(key: KvKey): Promise<{ value: T | null; versionstamp: string | null }>;
  /** Writes an entry. */
  set(key: KvKey, value: unknown): Promise<unknown>;
  /** Removes an entry. */
  delete(key: KvKey): Promise<void>;
  /** The entries under a key prefix. */
  list<T = unknown>(selector: { prefix: KvKey }): AsyncIterable<{ key: KvKey; value: T }>;
  /** An atomic operation: versionstamp checks, then sets and deletes committed together. */
  atomic(): {
    check(...checks: { key: KvKey; versionstamp: string | null }[]): ReturnType<DenoKvLike["atomic"]>;
    set(key: KvKey, value: unknown): ReturnType<DenoKvLike["atomic"]>;
    delete(key: KvKey): ReturnType<DenoKvLike["atomic"]>;
    commit(): Promise<{ ok: boolean }>;
  };
}

/** A Deno KV key. */
export type KvKey = readonly (string | number | bigint | boolean | Uint8Array)[];

interface Head {
  generation: string;
  chunks: number;
  size: number;
}

const CHUNK_BYTES = 60 * 1024;
// Key segments never hold control characters (storage/keys.ts), so these cannot collide.
const HEAD = "\u0000head";
const CHUNK = "\u0001chunk";

/** The compare-and-swap backend on Deno KV under `["fa", store]`. */
export function denoKvBackend(kv: DenoKvLike, store: string): VersionedBackend {
  const base = (key: string): KvKey => ["fa", store, ...key.split("/")];
  const headKey = (key: string): KvKey => [...base(key), HEAD];
  const chunkKey = (key: string, generation: string, index: number): KvKey => [...base(key), CHUNK, generation, index];

  async function writeChunks(key: string, value: Uint8Array): Promise<Head> {
    const generation = crypto.randomUUID();
    const chunks = Math.max(1, Math.ceil(value.length / CHUNK_BYTES));
    for (let i = 0; i < chunks; i++) {
      await kv.set(chunkKey(key, generation, i), value.slice(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
    }
    return { generation, chunks, size: value.length };
  }

  /** Writes the chunks of a stream of `size` bytes as they come; on failure removes those written. */
  async function writeStreamChunks(key: string, size: number, body: ReadableStream<Uint8Array>): Promise<Head> {
    const head: Head = { generation: crypto.randomUUID(), chunks: 0, size };
    try {
      for await (const chunk of chunksOf(piecesOf(body, size), size, CHUNK_BYTES)) {
        await kv.set(chunkKey(key, head.generation, head.chunks), chunk.slice());
        head.chunks++;
      }
    } catch (err) {
      await removeChunks(key, head);
      throw err;
    }
    return head;
  }

  async function removeChunks(key: string, head: Head): Promise<void> {
    for (let i = 0; i < head.chunks; i++) await kv.delete(chunkKey(key, head.generation, i));
  }

  async function swap(key: string, value: Uint8Array, expected: string | null | undefined): Promise<boolean> {
    const previous = await kv.get<Head>(headKey(key));
    if (expected !== undefined && previous.versionstamp !== expected) return false;
    const head = await writeChunks(key, value);
    const result = await kv.atomic().check({ key: headKey(key), versionstamp: previous.versionstamp }).set(headKey(key), head).commit();
    if (!result.ok) {
      await removeChunks(key, head);
      if (expected === undefined) return swap(key, value, undefined); // unconditional: try again
      return false;
    }
    if (previous.value) await removeChunks(key, previous.value);
    return true;
  }

  return {
    async get(key) {
      for (let attempt = 0; attempt < 10; attempt++) {
        const head = await kv.get<Head>(headKey(key));
        if (head.value === null || head.versionstamp === null) return null;
        const bytes = new Uint8Array(head.value.size);
        let complete = true;
        for (let i = 0; i < head.value.chunks && complete; i++) {
          const chunk = await kv.get<Uint8Array>(chunkKey(key, head.value.generation, i));
          if (chunk.value === null) complete = false; // replaced meanwhile: read the new head
          else bytes.set(chunk.value, i * CHUNK_BYTES);
        }
        if (complete) return { bytes, version: head.versionstamp };
      }
      throw new Error(`${key} changed during every read attempt`);
    },
    async put(key, value) {
      await swap(key, value, undefined);
    },
    async putStream(key, size, body) {
      const head = await writeStreamChunks(key, size, body);
      // The chunks are written once; only the head's swap is tried again on a conflict.
      for (;;) {
        const previous = await kv.get<Head>(headKey(key));
        const result = await kv.atomic().check({ key: headKey(key), versionstamp: previous.versionstamp }).set(headKey(key), head).commit();
        if (!result.ok) continue;
        if (previous.value) await removeChunks(key, previous.value);
        return;
      }
    },
    putIf: (key, value, expected) => swap(key, value, expected),
    async delete(key) {
      const head = await kv.get<Head>(headKey(key));
      if (head.value === null) return false;
      const result = await kv.atomic().check({ key: headKey(key), versionstamp: head.versionstamp }).delete(headKey(key)).commit();
      if (!result.ok) return this.delete(key);
      await removeChunks(key, head.value);
      return true;
    },
    async has(key) {
      return (await kv.get(headKey(key))).versionstamp !== null;
    },
    async list(prefix) {
      const folder = prefix.replace(/\/$/, "");
      const keys: string[] = [];
      for await (const entry of kv.list({ prefix: folder === "" ? ["fa", store] : base(folder) })) {
        if (entry.key[entry.key.length - 1] !== HEAD) continue;
        keys.push(entry.key.slice(2, -1).join("/"));
      }
      return keys;
    },
  };
}

/** A lossless `BlobStore` on Deno KV. */
export function createDenoKvBlobStore(kv: DenoKvLike, store: string): BlobStore {
  return createVersionedBlobStore(denoKvBackend(kv, store));
}

/** A `KvStore` on Deno KV (values of any length, as blobs). */
export function createDenoKvStore(kv: DenoKvLike, store: string): KvStore {
  return createVersionedKvStore(denoKvBackend(kv, store));
}
