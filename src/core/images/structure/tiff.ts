/**
 * @module
 * TIFF structure (TIFF 6.0): the first IFD inside the file, its width and length, and every
 * strip or tile it lists lying inside the file. Only the first image is checked; nothing is
 * decoded.
 */
import { BrokenImage, ByteReader, type Dimensions } from "./reader.ts";

const TAG = { width: 256, length: 257, stripOffsets: 273, stripByteCounts: 279, tileOffsets: 324, tileByteCounts: 325 } as const;
const SHORT = 3;
const LONG = 4;
/** Bytes per value of each TIFF field type (TIFF 6.0 section 2, plus IFD); unknown types are skipped, as the spec says. */
const TYPE_SIZES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4 };
/** Offsets beyond the file's length are refused anyway; this only bounds the loop. */
const MAX_VALUES = 1 << 20;

interface Entry {
  type: number;
  count: number;
  /** Where the value (or array of values) starts. */
  at: number;
}

/** The dimensions of a structurally sound TIFF; throws {@link BrokenImage} naming the failed check. */
export function checkTiff(bytes: Uint8Array): Dimensions {
  const read = new ByteReader(bytes);
  const le = bytes[0] === 0x49;
  const ifd = read.u32(4, "the TIFF header", le);
  if (ifd < 8) throw new BrokenImage(`its first IFD offset ${ifd} points into the header`);
  const count = read.u16(ifd, "the first IFD", le);
  read.need(ifd + 2, count * 12 + 4, "the first IFD");
  const entries = new Map<number, Entry>();
  for (let i = 0; i < count; i++) {
    const at = ifd + 2 + i * 12;
    const type = read.u16(at + 2, "the first IFD", le);
    const valueCount = read.u32(at + 4, "the first IFD", le);
    const tag = read.u16(at, "the first IFD", le);
    const size = (TYPE_SIZES[type] ?? 0) * valueCount;
    const valueAt = size <= 4 ? at + 8 : read.u32(at + 8, "the first IFD", le);
    if (valueAt + size > read.length) throw new BrokenImage(`the values of its tag ${tag} run past the end of the file`);
    entries.set(tag, { type, count: valueCount, at: valueAt });
  }
  const values = (tag: number, name: string): number[] => {
    const entry = entries.get(tag);
    if (entry === undefined) return [];
    if ((entry.type !== SHORT && entry.type !== LONG) || entry.count === 0 || entry.count > MAX_VALUES) {
      throw new BrokenImage(`its ${name} tag has an unusable type or count`);
    }
    const size = entry.type === SHORT ? 2 : 4;
    read.need(entry.at, size * entry.count, `the ${name} values`);
    return Array.from({ length: entry.count }, (_, i) => (size === 2 ? read.u16(entry.at + 2 * i, name, le) : read.u32(entry.at + 4 * i, name, le)));
  };
  const [width = 0] = values(TAG.width, "ImageWidth");
  const [height = 0] = values(TAG.length, "ImageLength");
  if (width === 0 || height === 0) throw new BrokenImage(`its first IFD gives a size of ${width} x ${height} pixels`);
  const tiled = entries.has(TAG.tileOffsets);
  const offsets = values(tiled ? TAG.tileOffsets : TAG.stripOffsets, tiled ? "TileOffsets" : "StripOffsets");
  const counts = values(tiled ? TAG.tileByteCounts : TAG.stripByteCounts, tiled ? "TileByteCounts" : "StripByteCounts");
  if (offsets.length === 0 || offsets.length !== counts.length) throw new BrokenImage("its first IFD does not list its image data (strip or tile offsets and byte counts)");
  offsets.forEach((offset, i) => {
    if (offset + counts[i]! > read.length) throw new BrokenImage(`its image data block ${i + 1} runs past the end of the file`);
  });
  return { width, height };
}
