/**
 * @module
 * GIF structure (GIF89a spec): the logical screen and colour tables inside the file, every
 * extension and image block's sub-blocks inside it, at least one image, and the trailer.
 * The LZW data is not decoded.
 */
import { BrokenImage, ByteReader, type Dimensions } from "./reader.ts";

const EXTENSION = 0x21;
const IMAGE = 0x2c;
const TRAILER = 0x3b;

/** Skips a run of data sub-blocks (length byte, data) up to and including the empty one. */
function skipSubBlocks(read: ByteReader, at: number, what: string): number {
  for (let size = read.u8(at, what); size !== 0; size = read.u8(at, what)) at += 1 + size;
  return at + 1;
}

/** The dimensions of a structurally sound GIF; throws {@link BrokenImage} naming the failed check. */
export function checkGif(bytes: Uint8Array): Dimensions {
  const read = new ByteReader(bytes);
  const width = read.u16(6, "the logical screen descriptor", true);
  const height = read.u16(8, "the logical screen descriptor", true);
  if (width === 0 || height === 0) throw new BrokenImage(`its logical screen is ${width} x ${height} pixels`);
  const flags = read.u8(10, "the logical screen descriptor");
  let at = 13 + ((flags & 0x80) !== 0 ? 3 << ((flags & 0x07) + 1) : 0);
  let images = 0;
  for (;;) {
    const block = read.u8(at, "a block (no trailer)");
    if (block === TRAILER) break;
    if (block === EXTENSION) {
      at = skipSubBlocks(read, at + 2, "an extension block");
    } else if (block === IMAGE) {
      const imageFlags = read.u8(at + 9, "an image descriptor");
      at += 10 + ((imageFlags & 0x80) !== 0 ? 3 << ((imageFlags & 0x07) + 1) : 0);
      const codeSize = read.u8(at, "an image's data");
      if (codeSize < 1 || codeSize > 11) throw new BrokenImage(`an image at byte ${at} has an LZW code size of ${codeSize}`);
      at = skipSubBlocks(read, at + 1, "an image's data");
      images++;
    } else {
      throw new BrokenImage(`byte ${at} should start a block but is 0x${block.toString(16)}`);
    }
  }
  if (images === 0) throw new BrokenImage("it holds no image");
  return { width, height };
}
