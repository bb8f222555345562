/**
 * @module
 * The backup archive's framing (docs/operations.md#the-archive-format): a magic line, then one
 * record per object (a JSON header line, the object's bytes, a line with their SHA-256), then the
 * manifest line. Written and read front to back as a stream, so neither side holds more than one
 * object (large ones not even that).
 */
import type { Bytes } from "../ports.ts";

/** The archive's first line. */
export const ARCHIVE_MAGIC = "forensic-annotation-backup/1\n";
/** The longest header or manifest line read (a key is at most 1,000 bytes; the manifest's counts are few). */
export const MAX_LINE_BYTES = 1024 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** An incremental SHA-256 (the runtime's native one under the commands). */
export interface Sha256Stream {
  /** Adds bytes. */
  update(bytes: Uint8Array): void;
  /** The lower-case hex digest of everything added. */
  digestHex(): string;
}

/** Makes a fresh {@link Sha256Stream}. */
export type Sha256Factory = () => Sha256Stream;

/** Where an archive goes: each chunk written (awaited, so a slow file holds the reading back). */
export type ArchiveSink = (chunk: Uint8Array) => Promise<void>;

/** One object's record header. */
export interface ObjectHeader {
  /** The store it was read from (`users`, `data`, `audit`, `images`, `outbox`, or another port's name). */
  store: string;
  /** Its key in that store. */
  key: string;
  /** Its length in bytes. */
  size: number;
}

/** The record after the magic line (the manifest repeats it, under its signature). */
export interface ArchiveBegin {
  /** When the backup began (ISO 8601). */
  createdAt: string;
  /** The objects are sealed (encryption at rest), as the stores held them. */
  sealed: boolean;
}

/** A malformed or damaged archive. */
export class ArchiveDamaged extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArchiveDamaged";
  }
}

/** Writes records to a sink. */
export class ArchiveWriter {
  constructor(private readonly sink: ArchiveSink) {}

  /** The magic line and what the reader must know before the objects (whether they are sealed); first. */
  start(begin: ArchiveBegin): Promise<void> {
    return this.sink(encoder.encode(`${ARCHIVE_MAGIC}${JSON.stringify({ begin })}\n`));
  }

  /** One object: its header, its bytes (given whole or as chunks), its hash; resolves with the hash. */
  async object(header: ObjectHeader, body: Uint8Array | AsyncIterable<Uint8Array>, hasher: Sha256Stream): Promise<string> {
    await this.sink(encoder.encode(`${JSON.stringify({ store: header.store, key: header.key, size: header.size })}\n`));
    let written = 0;
    const pieces = body instanceof Uint8Array ? [body] : body;
    for await (const piece of pieces) {
      written += piece.length;
      if (written > header.size) throw new Error(`${header.store} ${header.key}: more bytes than its size (${header.size}) while it was read`);
      hasher.update(piece);
      await this.sink(piece);
    }
    if (written !== header.size) throw new Error(`${header.store} ${header.key}: ${written} bytes read, ${header.size} expected`);
    const sha256 = hasher.digestHex();
    await this.sink(encoder.encode(`\n${JSON.stringify({ sha256 })}\n`));
    return sha256;
  }

  /** The manifest line; last. */
  finish(manifest: unknown): Promise<void> {
    return this.sink(encoder.encode(`${JSON.stringify({ manifest })}\n`));
  }
}

/** Reads an archive's bytes front to back. */
export class ArchiveReader {
  private buffer: Bytes = new Uint8Array(0);
  private done = false;
  /** Bytes consumed so far (for progress). */
  consumed = 0;

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** Over a stream. */
  static of(body: ReadableStream<Uint8Array>): ArchiveReader {
    return new ArchiveReader(body.getReader());
  }

  // The unread bytes are buffer[at..]: reading moves `at`, so a small record costs no copy of the rest.
  private at = 0;

  private get left(): number {
    return this.buffer.length - this.at;
  }

  private async fill(): Promise<boolean> {
    if (this.done) return false;
    const { value, done } = await this.reader.read();
    if (done) {
      this.done = true;
      return false;
    }
    if (this.left === 0) this.buffer = new Uint8Array(value);
    else {
      const joined = new Uint8Array(this.left + value.length);
      joined.set(this.buffer.subarray(this.at));
      joined.set(value, this.left);
      this.buffer = joined;
    }
    this.at = 0;
    return true;
  }

  private take(n: number): Bytes {
    const out = this.buffer.slice(this.at, this.at + n);
    this.at += n;
    this.consumed += n;
    return out;
  }

  /** True when nothing is left. */
  async atEnd(): Promise<boolean> {
    while (this.left === 0) if (!(await this.fill())) return true;
    return false;
  }

  /** The next line without its `\n`; damaged when it is longer than `max` or the archive ends first. */
  async line(max = MAX_LINE_BYTES): Promise<string> {
    let searched = 0;
    for (;;) {
      const found = this.buffer.indexOf(0x0a, this.at + searched);
      if (found !== -1) {
        const at = found - this.at;
        if (at > max) break;
        const bytes = this.take(at + 1);
        try {
          return decoder.decode(bytes.subarray(0, at));
        } catch {
          throw new ArchiveDamaged("a record line is not UTF-8");
        }
      }
      searched = this.left;
      if (searched > max) break;
      if (!(await this.fill())) throw new ArchiveDamaged("the archive ends inside a record (cut short)");
    }
    throw new ArchiveDamaged("a record line is longer than any the backup writes");
  }

  /** Exactly `n` bytes, in pieces of at most what arrived; damaged when the archive ends first. */
  async *bytes(n: number): AsyncGenerator<Bytes> {
    let left = n;
    while (left > 0) {
      if (this.left === 0 && !(await this.fill())) throw new ArchiveDamaged("the archive ends inside an object (cut short)");
      const piece = this.take(Math.min(left, this.left));
      left -= piece.length;
      yield piece;
    }
  }

  /** Exactly `n` bytes in one array. */
  async whole(n: number): Promise<Bytes> {
    const out = new Uint8Array(n);
    let at = 0;
    for await (const piece of this.bytes(n)) {
      out.set(piece, at);
      at += piece.length;
    }
    return out;
  }

  /** Releases the stream. */
  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }
}

/** Parses a JSON line as an object; damaged when it is not one. */
export function recordLine(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ArchiveDamaged("a record line is not JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new ArchiveDamaged("a record line is not a JSON object");
  return value as Record<string, unknown>;
}
