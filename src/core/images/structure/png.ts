/**
 * @module
 * PNG structure (ISO/IEC 15948): every chunk's length and CRC through IEND, IHDR first with a
 * valid size and sample format, a palette where one is required, and image data that starts
 * as a zlib stream. The pixels are not inflated.
 */
import { crc32 } from "../../encoding/crc32.ts";
import { BrokenImage, ByteReader, type Dimensions } from "./reader.ts";

const SIGNATURE_LENGTH = 8;
const MAX_CHUNK_LENGTH = 0x7fffffff;
/** Bit depths each colour type allows (ISO/IEC 15948 table 11.1). */
const DEPTHS: Record<number, readonly number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

/** Checks the zlib header (RFC 1950): deflate, a window of at most 32 KB, no preset dictionary, a valid check value. */
function checkZlibHeader(cmf: number, flg: number): void {
  if ((cmf & 0x0f) !== 8 || cmf >> 4 > 7 || (flg & 0x20) !== 0 || ((cmf << 8) | flg) % 31 !== 0) {
    throw new BrokenImage("its image data (IDAT) does not start as a zlib stream");
  }
}

/** The dimensions of a structurally sound PNG; throws {@link BrokenImage} naming the failed check. */
export function checkPng(bytes: Uint8Array): Dimensions {
  const read = new ByteReader(bytes);
  let at = SIGNATURE_LENGTH;
  let header: (Dimensions & { colourType: number }) | undefined;
  let palette = false;
  let idatChunks = 0;
  const zlibHeader: number[] = [];
  for (;;) {
    if (at === read.length) throw new BrokenImage(header === undefined ? "it has no IHDR chunk" : "it ends without an IEND chunk");
    const length = read.u32(at, "a chunk length");
    const type = read.tag(at + 4, 4, "a chunk type");
    if (!/^[A-Za-z]{4}$/.test(type)) throw new BrokenImage(`the chunk at byte ${at} has no valid type`);
    if (length > MAX_CHUNK_LENGTH) throw new BrokenImage(`chunk ${type} declares ${length} bytes, more than PNG allows`);
    if (at + 12 + length > read.length) {
      throw new BrokenImage(`chunk ${type} at byte ${at} declares ${length} bytes but the file ends ${read.length - at - 8} bytes later`);
    }
    const body = bytes.subarray(at + 8, at + 8 + length);
    if (crc32(bytes.subarray(at + 4, at + 8 + length)) !== read.u32(at + 8 + length, "a chunk CRC")) {
      throw new BrokenImage(`chunk ${type} at byte ${at} has a wrong CRC`);
    }
    if (header === undefined && type !== "IHDR") throw new BrokenImage(`its first chunk is ${type}, not IHDR`);
    if (type === "IHDR") {
      if (header !== undefined) throw new BrokenImage("it has a second IHDR chunk");
      header = readHeader(new ByteReader(body));
    } else if (type === "PLTE") {
      if (length === 0 || length % 3 !== 0 || length > 768) throw new BrokenImage(`its palette (PLTE) has ${length} bytes, not 3 to 768 in threes`);
      palette = true;
    } else if (type === "IDAT") {
      idatChunks++;
      for (const byte of body.subarray(0, 2 - zlibHeader.length)) zlibHeader.push(byte);
    } else if (type === "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (idatChunks === 0) throw new BrokenImage("it has no image data (IDAT chunk)");
  if (zlibHeader.length < 2) throw new BrokenImage("its image data (IDAT) is empty");
  checkZlibHeader(zlibHeader[0]!, zlibHeader[1]!);
  if (header!.colourType === 3 && !palette) throw new BrokenImage("it is a palette image without a palette (PLTE chunk)");
  return { width: header!.width, height: header!.height };
}

/** IHDR: the size, and a sample format PNG defines. */
function readHeader(ihdr: ByteReader): Dimensions & { colourType: number } {
  if (ihdr.length !== 13) throw new BrokenImage(`its IHDR chunk has ${ihdr.length} bytes, not 13`);
  const width = ihdr.u32(0, "IHDR");
  const height = ihdr.u32(4, "IHDR");
  const [depth, colourType, compression, filter, interlace] = [8, 9, 10, 11, 12].map((i) => ihdr.u8(i, "IHDR")) as [number, number, number, number, number];
  if (width === 0 || height === 0 || width > MAX_CHUNK_LENGTH || height > MAX_CHUNK_LENGTH) {
    throw new BrokenImage(`its IHDR gives a size of ${width} x ${height} pixels`);
  }
  if (!(DEPTHS[colourType]?.includes(depth) ?? false)) throw new BrokenImage(`its IHDR gives colour type ${colourType} with bit depth ${depth}, which PNG does not define`);
  if (compression !== 0 || filter !== 0 || interlace > 1) throw new BrokenImage("its IHDR names an unknown compression, filter or interlace method");
  return { width, height, colourType };
}
