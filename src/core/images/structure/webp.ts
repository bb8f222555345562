/**
 * @module
 * WebP structure (RFC 9649): the RIFF size matches the file, the chunks fill the RIFF
 * exactly, the first chunk is VP8, VP8L or VP8X, and the size comes from its header
 * (a VP8X canvas must hold image data: a VP8/VP8L chunk of the canvas size, or animation
 * frames). Nothing is decoded.
 */
import { BrokenImage, ByteReader, type Dimensions } from "./reader.ts";

/** The dimensions of a structurally sound WebP; throws {@link BrokenImage} naming the failed check. */
export function checkWebp(bytes: Uint8Array): Dimensions {
  const read = new ByteReader(bytes);
  const riffSize = read.u32(4, "the RIFF header", true);
  if (riffSize + 8 !== read.length) {
    throw new BrokenImage(`its RIFF header says the file has ${riffSize + 8} bytes, but it has ${read.length}`);
  }
  const chunks = new Map<string, ByteReader>();
  const order: string[] = [];
  for (let at = 12; at < read.length;) {
    const type = read.tag(at, 4, "a chunk header");
    const size = read.u32(at + 4, "a chunk header", true);
    if (at + 8 + size > read.length) throw new BrokenImage(`chunk "${type}" at byte ${at} declares ${size} bytes, past the end of the RIFF data`);
    if (!chunks.has(type)) chunks.set(type, new ByteReader(bytes.subarray(at + 8, at + 8 + size)));
    order.push(type);
    // Chunks are padded to an even size; a missing pad byte after the last one is tolerated.
    at += 8 + size + (size & 1);
  }
  const first = order[0];
  if (first !== "VP8 " && first !== "VP8L" && first !== "VP8X") {
    throw new BrokenImage(first === undefined ? "it has no chunks after its RIFF header" : `its first chunk is "${first}", not VP8, VP8L or VP8X`);
  }
  if (first !== "VP8X") return imageChunk(first, chunks.get(first)!);
  const canvas = readCanvas(chunks.get("VP8X")!);
  const animated = (chunks.get("VP8X")!.u8(0, "the VP8X chunk") & 0x02) !== 0;
  if (animated) {
    if (!chunks.has("ANMF")) throw new BrokenImage("it is marked animated but has no frames (ANMF chunks)");
    return canvas;
  }
  const kind = chunks.has("VP8 ") ? "VP8 " : chunks.has("VP8L") ? "VP8L" : undefined;
  if (kind === undefined) throw new BrokenImage("its VP8X header is followed by no image data (VP8 or VP8L chunk)");
  const image = imageChunk(kind, chunks.get(kind)!);
  if (image.width !== canvas.width || image.height !== canvas.height) {
    throw new BrokenImage(`its canvas is ${canvas.width} x ${canvas.height} pixels but its image is ${image.width} x ${image.height}`);
  }
  return canvas;
}

/** VP8X: flags, three reserved bytes, then canvas width - 1 and height - 1 as 24-bit integers. */
function readCanvas(vp8x: ByteReader): Dimensions {
  if (vp8x.length < 10) throw new BrokenImage(`its VP8X chunk has ${vp8x.length} bytes, not 10`);
  return { width: vp8x.u24le(4, "the VP8X chunk") + 1, height: vp8x.u24le(7, "the VP8X chunk") + 1 };
}

/** The size in a VP8 key frame header or a VP8L header. */
function imageChunk(kind: "VP8 " | "VP8L", chunk: ByteReader): Dimensions {
  if (kind === "VP8L") {
    if (chunk.u8(0, "the VP8L header") !== 0x2f) throw new BrokenImage("its VP8L chunk lacks the VP8L signature byte");
    const bits = chunk.u32(1, "the VP8L header", true);
    if (bits >>> 29 !== 0) throw new BrokenImage(`its VP8L header has version ${bits >>> 29}, not 0`);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  const tag = chunk.u8(0, "the VP8 frame header") | (chunk.u8(1, "the VP8 frame header") << 8) | (chunk.u8(2, "the VP8 frame header") << 16);
  if ((tag & 1) !== 0) throw new BrokenImage("its VP8 chunk does not hold a key frame");
  if (chunk.u8(3, "the VP8 frame header") !== 0x9d || chunk.u8(4, "the VP8 frame header") !== 0x01 || chunk.u8(5, "the VP8 frame header") !== 0x2a) {
    throw new BrokenImage("its VP8 chunk lacks the key frame start code");
  }
  if (tag >>> 5 > chunk.length - 10) throw new BrokenImage("its VP8 chunk is shorter than its first partition says");
  const width = chunk.u16(6, "the VP8 frame header", true) & 0x3fff;
  const height = chunk.u16(8, "the VP8 frame header", true) & 0x3fff;
  if (width === 0 || height === 0) throw new BrokenImage(`its VP8 frame gives a size of ${width} x ${height} pixels`);
  return { width, height };
}
