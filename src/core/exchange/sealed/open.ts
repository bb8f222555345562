/**
 * @module
 * Opening a sealed package (docs/exchange.md#sealed-packages) with the private key it was
 * sealed for. The header is read and checked before this resolves; the plaintext then comes
 * one authenticated chunk at a time: a chunk leaves only after its tag verified, and the
 * stream fails (never ends cleanly) when the package was cut, reordered or altered. Every
 * refusal is a 400 {@link ServiceError} naming the reason.
 */
import { compactDecrypt } from "jose";
import type { Bytes } from "../../ports.ts";
import { ServiceError } from "../../errors.ts";
import type { OpeningKey } from "./sealing-keys.ts";
import {
  chunkAdditionalData,
  chunkNonce,
  CONTENT_KEY_BYTES,
  headerDigest,
  isSealedPackage,
  MAX_HEADER_BYTES,
  PREFIX_BYTES,
  SEALED_MAGIC,
  SEALED_VERSION,
  type SealedHeader,
  SealedHeaderSchema,
  TAG_BYTES,
} from "./sealed-format.ts";

/** A sealed package whose header checked out. */
export interface OpenedPackage {
  /** The header: recipient thumbprint, wrapped key, chunk size, content type. */
  readonly header: SealedHeader;
  /** The plaintext, each chunk authenticated before it is enqueued; errors with a {@link ServiceError} when the package fails. */
  readonly body: ReadableStream<Bytes>;
}

const refused = (message: string, details: Record<string, unknown> = {}): ServiceError =>
  ServiceError.validation(`Sealed package refused: ${message}`, details);

/**
 * Opens `sealed` with `key` (see {@link openingKeyOf}).
 *
 * @throws {ServiceError} 400 when it is not a sealed package, its header is wrong, it was
 * sealed for another key (`details.sealedFor` is that key's thumbprint) or its content key
 * does not open.
 */
export async function openSealedPackage(sealed: ReadableStream<Uint8Array>, key: OpeningKey): Promise<OpenedPackage> {
  const input = new ByteQueue(sealed.getReader());
  try {
    const opened = await readHeader(input, key);
    return { header: opened.header, body: openedChunks(input, opened) };
  } catch (err) {
    await input.cancel();
    throw err;
  }
}

/** The checked header, the digest the chunks' additional data begins with, and the content key. */
interface OpenedHeader {
  header: SealedHeader;
  digest: Bytes;
  contentKey: CryptoKey;
}

async function readHeader(input: ByteQueue, key: OpeningKey): Promise<OpenedHeader> {
  await input.fill(PREFIX_BYTES);
  const prefix = input.peek(PREFIX_BYTES);
  if (!isSealedPackage(prefix)) throw refused("it does not start with the sealed-package magic \"FASEALED\"");
  if (prefix.length < PREFIX_BYTES) throw refused("it ends within its prefix");
  const version = prefix[SEALED_MAGIC.length]!;
  if (version !== SEALED_VERSION) throw refused(`format version ${version} is not supported (this service reads version ${SEALED_VERSION})`);
  const length = new DataView(prefix.buffer, prefix.byteOffset).getUint32(SEALED_MAGIC.length + 1);
  if (length < 2 || length > MAX_HEADER_BYTES) throw refused(`it declares a header of ${length} bytes; 2 to ${MAX_HEADER_BYTES} are accepted`);
  await input.fill(PREFIX_BYTES + length);
  if (input.length < PREFIX_BYTES + length) throw refused("it ends within its header");
  const bytes = input.take(PREFIX_BYTES + length);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(PREFIX_BYTES)));
  } catch {
    throw refused("its header is not UTF-8 JSON");
  }
  const parsed = SealedHeaderSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw refused(`its header is not valid: ${issue.path.join(".") || "header"}: ${issue.message}`);
  }
  const header = parsed.data;
  if (header.recipient !== key.thumbprint) {
    throw refused(`it was sealed for the key ${header.recipient}, not for this service's key ${key.thumbprint}`, {
      sealedFor: header.recipient,
      thumbprint: key.thumbprint,
    });
  }
  let contentKey: Uint8Array;
  try {
    ({ plaintext: contentKey } = await compactDecrypt(header.key, key.privateKey, {
      keyManagementAlgorithms: [key.algorithm],
      contentEncryptionAlgorithms: ["A256GCM"],
    }));
  } catch {
    throw refused("its content key does not open with this service's key (the header was altered)");
  }
  if (contentKey.length !== CONTENT_KEY_BYTES) throw refused(`its content key has ${contentKey.length} bytes, not ${CONTENT_KEY_BYTES}`);
  const aesKey = await crypto.subtle.importKey("raw", new Uint8Array(contentKey), "AES-GCM", false, ["decrypt"]);
  contentKey.fill(0);
  return { header, digest: await headerDigest(bytes), contentKey: aesKey };
}

function openedChunks(input: ByteQueue, opened: OpenedHeader): ReadableStream<Bytes> {
  const sealedChunk = opened.header.chunkBytes + TAG_BYTES;
  let index = 0;
  let finished = false;
  const open = async (bytes: Bytes, last: boolean): Promise<Bytes> => {
    try {
      return new Uint8Array(await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: chunkNonce(index, last), additionalData: chunkAdditionalData(opened.digest, index, last), tagLength: 128 },
        opened.contentKey,
        bytes,
      ));
    } catch {
      throw refused(
        last
          ? `chunk ${index} fails its authentication as the last chunk: the package was cut, or the chunk altered or moved`
          : `chunk ${index} fails its authentication: it was altered or moved`,
        { chunk: index },
      );
    }
  };
  return new ReadableStream<Bytes>({
    async pull(controller) {
      if (finished) {
        controller.close();
        return;
      }
      try {
        // One byte past a full chunk tells whether this chunk is the last.
        await input.fill(sealedChunk + 1);
        let plaintext: Bytes;
        if (input.length > sealedChunk) {
          plaintext = await open(input.take(sealedChunk), false);
        } else if (input.length < TAG_BYTES) {
          throw refused(index === 0 ? "it has no chunks after its header (cut)" : `it ends after chunk ${index - 1} without its last chunk (cut)`, { chunk: index });
        } else {
          plaintext = await open(input.take(input.length), true);
          finished = true;
        }
        index++;
        controller.enqueue(plaintext);
      } catch (err) {
        await input.cancel();
        controller.error(err);
      }
    },
    async cancel() {
      await input.cancel();
    },
  }, { highWaterMark: 0 });
}

/** The bytes of a stream, read as needed and handed out in runs of a chosen length. */
class ByteQueue {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #pieces: Uint8Array[] = [];
  #length = 0;
  #ended = false;

  constructor(reader: ReadableStreamDefaultReader<Uint8Array>) {
    this.#reader = reader;
  }

  /** Bytes held now. */
  get length(): number {
    return this.#length;
  }

  /** Reads until `count` bytes are held or the stream ended. */
  async fill(count: number): Promise<void> {
    while (this.#length < count && !this.#ended) {
      const { done, value } = await this.#reader.read();
      if (done) this.#ended = true;
      else if (value.length > 0) {
        this.#pieces.push(value);
        this.#length += value.length;
      }
    }
  }

  /** A copy of the first `count` bytes held (fewer when fewer are held), left in the queue. */
  peek(count: number): Bytes {
    return this.#copy(Math.min(count, this.#length), false);
  }

  /** The first `count` bytes held, taken out of the queue. */
  take(count: number): Bytes {
    return this.#copy(count, true);
  }

  /** Stops reading the stream. */
  async cancel(): Promise<void> {
    this.#pieces = [];
    this.#length = 0;
    if (!this.#ended) {
      this.#ended = true;
      await this.#reader.cancel().catch(() => undefined);
    }
  }

  #copy(count: number, remove: boolean): Bytes {
    const out = new Uint8Array(count);
    let at = 0;
    let piece = 0;
    while (at < count) {
      const source = this.#pieces[piece]!;
      const used = Math.min(source.length, count - at);
      out.set(source.subarray(0, used), at);
      at += used;
      if (remove && used < source.length) this.#pieces[piece] = source.subarray(used);
      else piece++;
    }
    if (remove) {
      this.#pieces.splice(0, piece);
      this.#length -= count;
    }
    return out;
  }
}
