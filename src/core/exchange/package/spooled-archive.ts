/**
 * @module
 * A package that arrives as a stream (an HTTP request body), kept in a blob store in chunks of
 * {@link SPOOL_CHUNK_BYTES} while it arrives and read back in ranges: a ZIP is read from its end
 * (the central directory), so it must be kept somewhere before it is read, and memory holds one
 * chunk and a few read back, not the package (none read back where the store reads ranges into
 * the reader's buffer, `readInto`). Every store runs it (files, Redis, S3, R2, Deno KV).
 */
import type { BlobStore } from "../../ports.ts";
import { checkSegment } from "../../storage/keys.ts";
import { copiedStream } from "../../storage/byte-stream.ts";
import type { ArchiveReader } from "./zip-read.ts";

/** Bytes of one stored chunk. */
export const SPOOL_CHUNK_BYTES = 1024 * 1024;
/** Chunks kept in memory while the archive is read (the directory, a header and the entry after it). */
const CACHED_CHUNKS = 4;
/** The folder of the spooled packages in their store. */
export const SPOOL_FOLDER = "exchange-spool/";

/** A package kept in a store: an {@link ArchiveReader}, and {@link SpooledArchive.discard}, which removes it. */
export interface SpooledArchive extends ArchiveReader {
  /** Removes every chunk; safe to call more than once. */
  discard(): Promise<void>;
}

/** The body held more than the largest package taken (nothing of it is kept). */
export class SpoolLimitError extends Error {
  /** The limit, in bytes. */
  readonly maxBytes: number;
  /** Creates the error. */
  constructor(maxBytes: number) {
    super(`The package is larger than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
}

// One folder for every package (`{id}.{index}`): a store of files keeps no empty folder per import.
const chunkKey = (id: string, index: number): string => `${SPOOL_FOLDER}${checkSegment(`${id}.${String(index).padStart(6, "0")}`, "spool chunk")}`;

/**
 * Stores `body` in `store` under {@link SPOOL_FOLDER}, a new id per package, as it arrives, at most
 * `maxBytes` of it ({@link SpoolLimitError} beyond). On any failure (the body breaks off, the store
 * fails, the limit) whatever was stored is removed before the error is thrown on.
 */
export async function spoolArchive(store: BlobStore, body: ReadableStream<Uint8Array>, maxBytes: number): Promise<SpooledArchive> {
  const id = crypto.randomUUID();
  const reader = body.getReader();
  let chunks = 0;
  let size = 0;
  const discard = async () => {
    for (let index = 0; index < chunks; index++) await store.delete(chunkKey(id, index)).catch(() => false);
  };
  let buffer = new Uint8Array(SPOOL_CHUNK_BYTES);
  let filled = 0;
  const flush = async () => {
    // Counted first: a put that fails half-way may still have stored it.
    chunks++;
    if (store.putStream !== undefined) {
      // A copy of the chunk is written: its buffer serves the next one (no chunk-sized garbage per
      // chunk where the store reads into its own buffer; others get the copy in one piece, as one put).
      await store.putStream(chunkKey(id, chunks - 1), filled, copiedStream(buffer.subarray(0, filled), SPOOL_CHUNK_BYTES));
    } else {
      // A store's put may keep the bytes it is given.
      await store.put(chunkKey(id, chunks - 1), buffer.subarray(0, filled));
      buffer = new Uint8Array(SPOOL_CHUNK_BYTES);
    }
    filled = 0;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > maxBytes) throw new SpoolLimitError(maxBytes);
      let at = 0;
      while (at < value.length) {
        const take = Math.min(SPOOL_CHUNK_BYTES - filled, value.length - at);
        buffer.set(value.subarray(at, at + take), filled);
        filled += take;
        at += take;
        if (filled === SPOOL_CHUNK_BYTES) await flush();
      }
    }
    if (filled > 0) await flush();
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    await discard();
    throw err;
  }
  return archiveOver(store, id, size, discard);
}

/** Reads ranges of the stored chunks, the last few kept in memory. */
function archiveOver(store: BlobStore, id: string, size: number, discard: () => Promise<void>): SpooledArchive {
  const cache = new Map<number, Uint8Array>();
  let discarded = false;
  const chunk = async (index: number): Promise<Uint8Array> => {
    const cached = cache.get(index);
    if (cached !== undefined) {
      cache.delete(index);
      cache.set(index, cached);
      return cached;
    }
    const bytes = await store.get(chunkKey(id, index));
    if (bytes === null) throw new Error("The spooled package is gone from its store before it was read");
    cache.set(index, bytes);
    if (cache.size > CACHED_CHUNKS) cache.delete(cache.keys().next().value!);
    return bytes;
  };
  // Straight into the reader's buffer when the store can: no chunk-sized buffer per read.
  const readInto = store.readInto === undefined ? undefined : async (index: number, from: number, into: Uint8Array): Promise<number> => {
    const count = await store.readInto!(chunkKey(id, index), from, into);
    if (count === null) throw new Error("The spooled package is gone from its store before it was read");
    return count;
  };
  return {
    size,
    async read(offset, into) {
      const end = Math.min(size, offset + into.length);
      let filled = 0;
      for (let position = offset; position < end;) {
        const index = Math.floor(position / SPOOL_CHUNK_BYTES);
        const from = position - index * SPOOL_CHUNK_BYTES;
        if (readInto !== undefined) {
          const take = await readInto(index, from, into.subarray(filled, filled + Math.min(SPOOL_CHUNK_BYTES - from, end - position)));
          if (take <= 0) break;
          filled += take;
          position += take;
          continue;
        }
        const bytes = await chunk(index);
        const take = Math.min(bytes.length - from, end - position);
        if (take <= 0) break;
        into.set(bytes.subarray(from, from + take), filled);
        filled += take;
        position += take;
      }
      return filled;
    },
    async discard() {
      if (discarded) return;
      discarded = true;
      cache.clear();
      await discard();
    },
  };
}
