/**
 * @module
 * Sealing a package for a recipient (docs/exchange.md#sealed-packages): a fresh content key,
 * wrapped for the recipient's public key in a compact JWE, then the plaintext in chunks of
 * AES-256-GCM, streamed: memory holds one chunk whatever the package's size.
 */
import { CompactEncrypt, importJWK, type JWK } from "jose";
import type { Bytes } from "../../ports.ts";
import type { RecipientKey } from "./sealing-keys.ts";
import {
  chunkAdditionalData,
  chunkNonce,
  CONTENT_KEY_BYTES,
  DEFAULT_CHUNK_BYTES,
  headerBytes,
  headerDigest,
  MAX_CHUNK_BYTES,
  MIN_CHUNK_BYTES,
  type SealedHeader,
} from "./sealed-format.ts";

/** How a package is sealed. */
export interface SealOptions {
  /** Plaintext bytes per chunk (64 to 1,048,576); 65,536 by default. */
  chunkBytes?: number | undefined;
  /** The media type of the plaintext; `application/zip` by default. */
  contentType?: string | undefined;
}

/**
 * The sealed form of `plaintext` for `recipient` (see {@link recipientKeyOf}), as a stream that
 * seals a chunk each time its reader asks for one. The header is made before this resolves,
 * so a key that cannot seal fails here, not half-way through a response.
 */
export async function sealPackage(
  plaintext: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  recipient: RecipientKey,
  options: SealOptions = {},
): Promise<ReadableStream<Bytes>> {
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  if (!Number.isInteger(chunkBytes) || chunkBytes < MIN_CHUNK_BYTES || chunkBytes > MAX_CHUNK_BYTES) {
    throw new RangeError(`chunkBytes must be an integer from ${MIN_CHUNK_BYTES} to ${MAX_CHUNK_BYTES}`);
  }
  const contentKey = crypto.getRandomValues(new Uint8Array(CONTENT_KEY_BYTES));
  const wrapped = await new CompactEncrypt(contentKey)
    .setProtectedHeader({ alg: recipient.algorithm, enc: "A256GCM", kid: recipient.thumbprint })
    .encrypt(await importJWK(recipient.jwk as JWK, recipient.algorithm));
  const header: SealedHeader = { recipient: recipient.thumbprint, key: wrapped, chunkBytes, contentType: options.contentType ?? "application/zip" };
  const prefix = headerBytes(header);
  const digest = await headerDigest(prefix);
  const key = await crypto.subtle.importKey("raw", contentKey, "AES-GCM", false, ["encrypt"]);
  contentKey.fill(0);
  const chunks = sealedChunks(plaintext, key, digest, chunkBytes);
  return new ReadableStream<Bytes>({
    start(controller) {
      controller.enqueue(prefix);
    },
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel(reason) {
      await chunks.throw(reason).catch(() => undefined);
    },
  }, { highWaterMark: 0 });
}

async function* sealedChunks(source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>, key: CryptoKey, digest: Bytes, chunkBytes: number): AsyncGenerator<Bytes> {
  const buffer = new Uint8Array(chunkBytes);
  let filled = 0;
  let index = 0;
  const seal = async (last: boolean): Promise<Bytes> => {
    const sealed = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv: chunkNonce(index, last), additionalData: chunkAdditionalData(digest, index, last), tagLength: 128 },
      key,
      buffer.subarray(0, filled),
    );
    index++;
    filled = 0;
    return new Uint8Array(sealed);
  };
  for await (const piece of piecesOf(source)) {
    let at = 0;
    while (at < piece.length) {
      // A full chunk is sealed as "not last" only once a byte after it is known to exist.
      if (filled === chunkBytes) yield await seal(false);
      const take = Math.min(chunkBytes - filled, piece.length - at);
      buffer.set(piece.subarray(at, at + take), filled);
      filled += take;
      at += take;
    }
  }
  yield await seal(true);
}

async function* piecesOf(source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (!(source instanceof ReadableStream)) {
    yield* source;
    return;
  }
  const reader = source.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield value;
    }
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
