/**
 * @module
 * BMP structure: a known info header, a sample depth BMP defines, and pixel data that lies
 * inside the file (its full size for uncompressed rows, the declared size otherwise).
 */
import { BrokenImage, ByteReader, type Dimensions } from "./reader.ts";

const INFO_HEADER_SIZES = new Set([12, 40, 52, 56, 64, 108, 124]);
const DEPTHS = new Set([1, 2, 4, 8, 16, 24, 32]);
/** BI_RGB, BI_BITFIELDS, BI_ALPHABITFIELDS: rows stored as they are. */
const UNCOMPRESSED = new Set([0, 3, 6]);

/** The dimensions of a structurally sound BMP; throws {@link BrokenImage} naming the failed check. */
export function checkBmp(bytes: Uint8Array): Dimensions {
  const read = new ByteReader(bytes);
  const dataOffset = read.u32(10, "the file header", true);
  const infoSize = read.u32(14, "the info header", true);
  if (!INFO_HEADER_SIZES.has(infoSize)) throw new BrokenImage(`its info header has an unknown size of ${infoSize} bytes`);
  read.need(14, infoSize, "the info header");
  const core = infoSize === 12;
  const width = core ? read.u16(18, "the info header", true) : read.u32(18, "the info header", true) | 0;
  const signedHeight = core ? read.u16(20, "the info header", true) : read.u32(22, "the info header", true) | 0;
  const depth = read.u16(core ? 24 : 28, "the info header", true);
  const compression = core ? 0 : read.u32(30, "the info header", true);
  const height = Math.abs(signedHeight);
  if (width <= 0 || height === 0) throw new BrokenImage(`its info header gives a size of ${width} x ${signedHeight} pixels`);
  if (!DEPTHS.has(depth)) throw new BrokenImage(`its info header gives ${depth} bits per pixel`);
  if (dataOffset < 14 + infoSize || dataOffset > read.length) throw new BrokenImage(`its pixel data offset ${dataOffset} lies outside the file`);
  const dataSize = UNCOMPRESSED.has(compression) ? Math.ceil((width * depth) / 32) * 4 * height : read.u32(34, "the info header", true);
  if (dataOffset + dataSize > read.length) {
    throw new BrokenImage(`its pixel data needs ${dataSize} bytes from byte ${dataOffset}, but the file has ${read.length}`);
  }
  return { width, height };
}
