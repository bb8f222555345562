/**
 * @module
 * Reading a stream of bytes whose length is announced: piece by piece or in chunks of a
 * fixed size with the length checked, or joined into one buffer for a store that can only
 * write whole values.
 */
import type { Bytes } from "../ports.ts";

/** The pieces of `body`, as they come; rejects when they do not add up to `size` bytes. */
export async function* piecesOf(body: ReadableStream<Uint8Array>, size: number): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let received = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.length;
      if (received > size) throw new Error(`the stream holds more than the ${size} bytes it announced`);
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  if (received !== size) throw new Error(`the stream ended after ${received} of the ${size} bytes it announced`);
}

/**
 * The pieces of `body`, as {@link piecesOf} gives them, but read into one buffer of at most
 * `bufferBytes` when `body` is a byte stream (a BYOB reader): each piece is then valid only
 * until the next is asked for, so the caller must be done with it by then (written to a file).
 * Reading a large value this way makes no new buffer per piece.
 */
export async function* piecesInto(body: ReadableStream<Uint8Array>, size: number, bufferBytes: number): AsyncGenerator<Uint8Array> {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = body.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream: its pieces are new already.
    return yield* piecesOf(body, size);
  }
  let buffer = new ArrayBuffer(Math.max(1, Math.min(size, bufferBytes)));
  let received = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read(new Uint8Array(buffer));
      if (done || value === undefined) break;
      received += value.length;
      if (received > size) throw new Error(`the stream holds more than the ${size} bytes it announced`);
      yield value;
      // The read handed the buffer over; it comes back with the piece.
      buffer = value.buffer;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  if (received !== size) throw new Error(`the stream ended after ${received} of the ${size} bytes it announced`);
}

/**
 * `bytes` as a byte stream that never hands them out: a reader's own buffer (BYOB) is filled
 * with a copy, other readers get new pieces of at most `pieceBytes`. Once the stream is read
 * (a store's `putStream` resolved) the caller may reuse `bytes`.
 */
export function copiedStream(bytes: Uint8Array, pieceBytes = 64 * 1024): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    type: "bytes",
    autoAllocateChunkSize: pieceBytes,
    start(controller) {
      if (bytes.length === 0) controller.close();
    },
    pull(controller) {
      const request = controller.byobRequest!;
      const view = request.view!;
      const take = Math.min(view.byteLength, bytes.length - at);
      new Uint8Array(view.buffer, view.byteOffset, take).set(bytes.subarray(at, at + take));
      at += take;
      request.respond(take);
      if (at === bytes.length) controller.close();
    },
  });
}

/** The whole of `body` in one buffer of `size` bytes (for a store that writes whole values). */
export async function joinStream(body: ReadableStream<Uint8Array>, size: number): Promise<Bytes> {
  const out = new Uint8Array(size);
  let at = 0;
  for await (const piece of piecesOf(body, size)) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/**
 * The `size` bytes of `source` cut into chunks of `chunkSize` (the last shorter; one empty
 * chunk for nothing): pieces of the source where they line up, else copied into one
 * buffer, reused once the consumer asks for the next chunk. Rejects when `source` is not `size` bytes.
 */
export async function* chunksOf(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, size: number, chunkSize: number): AsyncGenerator<Uint8Array> {
  let buffer: Uint8Array | undefined;
  let filled = 0;
  let total = 0;
  for await (const piece of source) {
    total += piece.length;
    if (total > size) throw new Error(`the stream holds more than the ${size} bytes announced`);
    let at = 0;
    while (at < piece.length) {
      if (filled === 0 && piece.length - at >= chunkSize) {
        yield piece.subarray(at, at + chunkSize);
        at += chunkSize;
        continue;
      }
      buffer ??= new Uint8Array(chunkSize);
      const take = Math.min(chunkSize - filled, piece.length - at);
      buffer.set(piece.subarray(at, at + take), filled);
      filled += take;
      at += take;
      if (filled === chunkSize) {
        yield buffer;
        filled = 0;
      }
    }
  }
  if (total !== size) throw new Error(`the stream ended after ${total} of the ${size} bytes announced`);
  if (filled > 0 || size === 0) yield (buffer ?? new Uint8Array(0)).subarray(0, filled);
}

/**
 * `body` as a stream that errors, instead of ending, when it does not hold exactly `size`
 * bytes: a runtime's `fetch` may send a streamed body whatever its Content-Length says.
 */
export function exactLength(body: ReadableStream<Uint8Array>, size: number): ReadableStream<Uint8Array> {
  return streamOf(piecesOf(body, size));
}

/** A stream that pulls `pieces` one at a time (nothing runs before it is read) and stops them when cancelled; their error errors it. */
export function streamOf(pieces: AsyncGenerator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await pieces.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await pieces.return(undefined);
    },
  });
}
