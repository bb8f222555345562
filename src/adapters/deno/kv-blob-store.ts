/**
 * @module
 * Stores on Deno KV (STORAGE=deno-kv, and Deno Deploy), lossless across isolates.
 * A KV value holds at most 64 KiB and one atomic commit about 800 KiB, so a blob is kept
 * as immutable chunks of one generation plus a small head naming that generation: a write
 * stores the new chunks first, then swaps the head in one atomic commit checked against
 * the head's versionstamp (compare-and-swap), then removes the old chunks. Readers follow
 * the head, so they never see half of a write, whatever the blob's size.
 *
 * A chunk that holds any of the value's last two bytes is keyed by the value's size as well, so
 * an append to a JSON array (an audit day), which writes over the closing `\n]`, rewrites only
 * those one or two chunks, under new keys, and the head (with the array's item count) in one
 * atomic commit: it moves the item's bytes and a chunk, not the day's.
 */
import type { BlobStore, KvStore } from "../../core/ports.ts";
import { createVersionedBlobStore, createVersionedKvStore, type VersionedBackend } from "../../core/storage/versioned-store.ts";
import { chunksOf, piecesOf } from "../../core/storage/byte-stream.ts";
import { encodeAppendedItem, encodeJsonArray, JSON_ARRAY_TAIL, parseJsonArray } from "../../core/storage/json-array.ts";
import { retryingWhenLocked } from "./kv-locked.ts";
import type { DenoKvLike, KvKey } from "./deno-kv-like.ts";

export type { DenoKvLike, KvKey } from "./deno-kv-like.ts";


interface Head {
  generation: string;
  chunks: number;
  size: number;
  /** 2: the chunks holding the last two bytes are keyed by `size` too (absent on heads written before). */
  layout?: 2;
  /** Items of the JSON array the value holds, when an append wrote it. */
  count?: number;
}

const CHUNK_BYTES = 60 * 1024;
// An append writes its chunks in the head's commit (at most 800 KiB): a larger item rewrites the value.
const MAX_APPENDED_CHUNKS = 8;
const TAIL = new TextEncoder().encode(JSON_ARRAY_TAIL);
// Key segments never hold control characters (storage/keys.ts), so these cannot collide.
const HEAD = "\u0000head";
const CHUNK = "\u0001chunk";

/** The compare-and-swap backend on Deno KV under `["fa", store]`. */
export function denoKvBackend(kv: DenoKvLike, store: string): VersionedBackend {
  const base = (key: string): KvKey => ["fa", store, ...key.split("/")];
  const headKey = (key: string): KvKey => [...base(key), HEAD];
  // A chunk an append may rewrite (it holds one of the last two bytes) is keyed by the size too.
  const chunkKey = (key: string, head: Head, index: number): KvKey =>
    head.layout === 2 && (index + 1) * CHUNK_BYTES > head.size - 2
      ? [...base(key), CHUNK, head.generation, index, head.size]
      : [...base(key), CHUNK, head.generation, index];

  async function writeChunks(key: string, value: Uint8Array, count?: number): Promise<Head> {
    const chunks = Math.max(1, Math.ceil(value.length / CHUNK_BYTES));
    const head: Head = { generation: crypto.randomUUID(), chunks, size: value.length, layout: 2, ...(count === undefined ? {} : { count }) };
    for (let i = 0; i < chunks; i++) {
      await kv.set(chunkKey(key, head, i), value.slice(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
    }
    return head;
  }

  /** Writes the chunks of a stream of `size` bytes as they come; on failure removes those written. */
  async function writeStreamChunks(key: string, size: number, body: ReadableStream<Uint8Array>): Promise<Head> {
    const head: Head = { generation: crypto.randomUUID(), chunks: 0, size, layout: 2 };
    try {
      for await (const chunk of chunksOf(piecesOf(body, size), size, CHUNK_BYTES)) {
        await kv.set(chunkKey(key, head, head.chunks), chunk.slice());
        head.chunks++;
      }
    } catch (err) {
      await removeChunks(key, head);
      throw err;
    }
    return head;
  }

  async function removeChunks(key: string, head: Head): Promise<void> {
    for (let i = 0; i < head.chunks; i++) await kv.delete(chunkKey(key, head, i));
  }

  async function swap(key: string, value: Uint8Array, expected: string | null | undefined, count?: number): Promise<boolean> {
    const previous = await kv.get<Head>(headKey(key));
    if (expected !== undefined && previous.versionstamp !== expected) return false;
    const head = await writeChunks(key, value, count);
    const result = await kv.atomic().check({ key: headKey(key), versionstamp: previous.versionstamp }).set(headKey(key), head).commit();
    if (!result.ok) {
      await removeChunks(key, head);
      if (expected === undefined) return swap(key, value, undefined, count); // unconditional: try again
      return false;
    }
    if (previous.value) await removeChunks(key, previous.value);
    return true;
  }

  /** The bytes of chunks `from` to the last of `head`, or null when one is gone (the value changed). */
  async function readChunks(key: string, head: Head, from: number): Promise<Uint8Array | null> {
    const bytes = new Uint8Array(head.size - from * CHUNK_BYTES);
    for (let i = from; i < head.chunks; i++) {
      const chunk = await kv.get<Uint8Array>(chunkKey(key, head, i));
      if (chunk.value === null) return null;
      bytes.set(chunk.value, (i - from) * CHUNK_BYTES);
    }
    return bytes;
  }

  /** An append that reads, parses and rewrites the whole array (and notes its count for the next ones). */
  async function rewriteAppend(key: string, item: unknown, atIndex: number | undefined, skipped?: () => void): Promise<number | null> {
    const current = await backend.get(key);
    const items = current === null ? [] : parseJsonArray(current.bytes).items;
    if (atIndex !== undefined && items.length > atIndex) {
      skipped?.();
      return items.length;
    }
    items.push(item);
    return (await swap(key, encodeJsonArray(items), current?.version ?? null, items.length)) ? items.length : null;
  }

  const backend: VersionedBackend = {
    async get(key) {
      // Chunks before the last two bytes never change within a generation: kept across attempts,
      // so a reader racing appends rereads only the head and the last chunks.
      let generation: string | undefined;
      let settled = new Map<number, Uint8Array>();
      for (let attempt = 0; attempt < 10; attempt++) {
        const head = await kv.get<Head>(headKey(key));
        if (head.value === null || head.versionstamp === null) return null;
        if (head.value.generation !== generation) [generation, settled] = [head.value.generation, new Map()];
        const bytes = new Uint8Array(head.value.size);
        let complete = true;
        for (let i = 0; i < head.value.chunks && complete; i++) {
          const chunk = settled.get(i) ?? (await kv.get<Uint8Array>(chunkKey(key, head.value, i))).value;
          if (chunk === null) complete = false; // replaced meanwhile: read the new head
          else {
            bytes.set(chunk, i * CHUNK_BYTES);
            if ((i + 1) * CHUNK_BYTES <= head.value.size - 2) settled.set(i, chunk);
          }
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
    async appendToJsonArray(key, item, atIndex, skipped) {
      const current = await kv.get<Head>(headKey(key));
      const head = current.value;
      // Written whole (or before chunks were keyed for appends): parsed and rewritten once.
      if (head === null || head.layout !== 2 || head.count === undefined || head.size < 2) return rewriteAppend(key, item, atIndex, skipped);
      if (atIndex !== undefined && head.count > atIndex) {
        skipped?.();
        return head.count;
      }
      const from = Math.floor((head.size - 2) / CHUNK_BYTES);
      const tail = await readChunks(key, head, from);
      if (tail === null) return null;
      if (tail[tail.length - 2] !== TAIL[0] || tail[tail.length - 1] !== TAIL[1]) return rewriteAppend(key, item, atIndex, skipped);
      const appended = encodeAppendedItem(item);
      const kept = tail.length - 2;
      const size = head.size - 2 + appended.length;
      const next: Head = { generation: head.generation, chunks: Math.ceil(size / CHUNK_BYTES), size, layout: 2, count: head.count + 1 };
      if (next.chunks - from > MAX_APPENDED_CHUNKS) return rewriteAppend(key, item, atIndex, skipped);
      const bytes = new Uint8Array(kept + appended.length);
      bytes.set(tail.subarray(0, kept));
      bytes.set(appended, kept);
      let commit = kv.atomic().check({ key: headKey(key), versionstamp: current.versionstamp });
      for (let i = from; i < next.chunks; i++) {
        commit = commit.set(chunkKey(key, next, i), bytes.slice((i - from) * CHUNK_BYTES, (i - from + 1) * CHUNK_BYTES));
      }
      if (!(await commit.set(headKey(key), next).commit()).ok) return null;
      // The old last chunks were keyed by the old size: a reader still holding the old head rereads it.
      for (let i = from; i < head.chunks; i++) await kv.delete(chunkKey(key, head, i));
      return next.count!;
    },
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
  return backend;
}

/** A lossless `BlobStore` on Deno KV. */
export function createDenoKvBlobStore(kv: DenoKvLike, store: string): BlobStore {
  return createVersionedBlobStore(denoKvBackend(retryingWhenLocked(kv), store));
}

/** A `KvStore` on Deno KV (values of any length, as blobs). */
export function createDenoKvStore(kv: DenoKvLike, store: string): KvStore {
  return createVersionedKvStore(denoKvBackend(retryingWhenLocked(kv), store));
}
