import { encode as encodePng } from "fast-png";
import jpeg from "jpeg-js";
import { deflateSync } from "node:zlib";

type Rgb = readonly [number, number, number];

/** A PNG of one colour (RGB, 8 bits), made without pdf-lib. */
export function solidPng(width: number, height: number, colour: Rgb): Uint8Array {
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < data.length; i += 3) data.set(colour, i);
  return encodePng({ width, height, data, channels: 3, depth: 8 });
}

/** A baseline JPEG of one colour, made without pdf-lib. */
export function solidJpeg(width: number, height: number, colour: Rgb): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set([...colour, 255], i);
  return new Uint8Array(jpeg.encode({ data, width, height }, 90).data);
}

/** A `data:` URL of the bytes. */
export function dataUrl(bytes: Uint8Array, type = "image/png"): string {
  return `data:${type};base64,${Buffer.from(bytes).toString("base64")}`;
}

/** A JPEG whose left half is `left` and right half `right`. */
export function halvesJpeg(width: number, height: number, left: Rgb, right: Rgb): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data.set([...(x < width / 2 ? left : right), 255], (y * width + x) * 4);
  }
  return new Uint8Array(jpeg.encode({ data, width, height }, 95).data);
}

/** The JPEG with an EXIF APP1 segment holding `orientation` inserted after its SOI marker. */
export function withOrientation(jpegBytes: Uint8Array, orientation: number): Uint8Array {
  const exif = [
    0xff, 0xe1, 0x00, 0x22, // APP1, length 34
    0x45, 0x78, 0x69, 0x66, 0x00, 0x00, // "Exif\0\0"
    0x4d, 0x4d, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x08, // big-endian TIFF header, IFD0 at 8
    0x00, 0x01, // one entry
    0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, orientation, 0x00, 0x00, // Orientation, SHORT, 1
    0x00, 0x00, 0x00, 0x00, // no next IFD
  ];
  return new Uint8Array([...jpegBytes.subarray(0, 2), ...exif, ...jpegBytes.subarray(2)]);
}

/** A PNG with an alpha channel (RGBA, 8 bits), half transparent. */
export function translucentPng(width: number, height: number, colour: Rgb): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set([...colour, 255], i);
  return encodePng({ width, height, data, channels: 4, depth: 8 });
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = (CRC_TABLE[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
/** A PNG chunk: length, type, body and CRC. */
export function chunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  out.set(Buffer.from(type, "latin1"), 4);
  out.set(body, 8);
  view.setUint32(8 + body.length, crc32(out.subarray(4, 8 + body.length)));
  return out;
}

/**
 * An 8-bit PNG of `channels` (2: grey+alpha, 4: RGBA) written by hand with every row filter of
 * the PNG spec in turn (none, sub, up, average, Paeth), so a decoder's unfiltering is tested.
 */
export function filteredPng(width: number, height: number, channels: 2 | 4, pixels: Uint8Array): Uint8Array {
  const stride = width * channels;
  const raw = new Uint8Array(height * (stride + 1));
  const at = (y: number, i: number) => (y < 0 || i < 0 ? 0 : pixels[y * stride + i] ?? 0);
  for (let y = 0; y < height; y++) {
    const filter = y % 5;
    raw[y * (stride + 1)] = filter;
    for (let i = 0; i < stride; i++) {
      const x = at(y, i);
      const a = at(y, i - channels);
      const b = at(y - 1, i);
      const c = at(y - 1, i - channels);
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter] ?? 0;
      raw[y * (stride + 1) + 1 + i] = (x - predictor) & 0xff;
    }
  }
  const header = new Uint8Array(13);
  new DataView(header.buffer).setUint32(0, width);
  new DataView(header.buffer).setUint32(4, height);
  header.set([8, channels === 4 ? 6 : 4, 0, 0, 0], 8);
  const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Uint8Array([...signature, ...chunk("IHDR", header), ...chunk("IDAT", deflateSync(raw)), ...chunk("IEND", new Uint8Array(0))]);
}

/** The PNG with another size in its IHDR and that chunk's CRC recomputed: a sound header that claims `width` x `height`. */
export function withPngSize(png: Uint8Array, width: number, height: number): Uint8Array {
  const out = png.slice();
  const view = new DataView(out.buffer, out.byteOffset);
  view.setUint32(16, width);
  view.setUint32(20, height);
  view.setUint32(29, crc32(out.subarray(12, 29)));
  return out;
}
