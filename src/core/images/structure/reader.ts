/**
 * @module
 * Bounds-checked reads of image headers. A read past the end throws {@link BrokenImage}
 * naming what was being read, so a truncated file is reported as such and no runtime's
 * out-of-range message reaches a client.
 */
import { ServiceError } from "../../errors.ts";

/** The image's structure is not what its format requires; `message` says which check failed. */
export class BrokenImage extends ServiceError {
  /** @param problem what is wrong, phrased to follow "The file is not a valid PNG: ". */
  constructor(problem: string) {
    super("invalid", problem);
  }
}

/** Reads integers and tags from `bytes`; every read names what it reads for the error. */
export class ByteReader {
  /** @param bytes the whole file. */
  constructor(readonly bytes: Uint8Array) {}

  /** The file's length in bytes. */
  get length(): number {
    return this.bytes.length;
  }

  /** Throws unless `size` bytes are there at `at`. */
  need(at: number, size: number, what: string): void {
    if (at < 0 || at + size > this.bytes.length) throw new BrokenImage(`the file ends inside ${what} (byte ${at} of ${this.bytes.length})`);
  }

  /** One byte. */
  u8(at: number, what: string): number {
    this.need(at, 1, what);
    return this.bytes[at]!;
  }

  /** A 16-bit integer, big- or little-endian. */
  u16(at: number, what: string, littleEndian = false): number {
    this.need(at, 2, what);
    const [a, b] = [this.bytes[at]!, this.bytes[at + 1]!];
    return littleEndian ? a | (b << 8) : (a << 8) | b;
  }

  /** A 24-bit little-endian integer (WebP canvas sizes). */
  u24le(at: number, what: string): number {
    this.need(at, 3, what);
    return this.bytes[at]! | (this.bytes[at + 1]! << 8) | (this.bytes[at + 2]! << 16);
  }

  /** An unsigned 32-bit integer, big- or little-endian. */
  u32(at: number, what: string, littleEndian = false): number {
    this.need(at, 4, what);
    const [a, b, c, d] = [this.bytes[at]!, this.bytes[at + 1]!, this.bytes[at + 2]!, this.bytes[at + 3]!];
    return (littleEndian ? (d << 24) | (c << 16) | (b << 8) | a : (a << 24) | (b << 16) | (c << 8) | d) >>> 0;
  }

  /** `size` bytes as Latin-1 text (chunk types, FourCCs). */
  tag(at: number, size: number, what: string): string {
    this.need(at, size, what);
    return String.fromCharCode(...this.bytes.subarray(at, at + size));
  }
}

/** Width and height in pixels, as the file's header gives them. */
export interface Dimensions {
  /** Pixels across. */
  width: number;
  /** Pixels down. */
  height: number;
}
