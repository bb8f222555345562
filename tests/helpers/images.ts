import { readFileSync } from "node:fs";
import { deflateSync } from "node:zlib";

/**
 * Real image files (64x48) made with ImageMagick and cwebp; sample-lossy.webp (VP8) and
 * sample-alpha.webp (VP8X with alpha) with sharp (libwebp); and text named .png.
 */
export const fixture = (name: string): Uint8Array<ArrayBuffer> =>
  new Uint8Array(readFileSync(new URL(`../fixtures/${name}`, import.meta.url)));

/** A multipart body with the image in field `file`, as browsers send it. */
export function uploadForm(bytes: Uint8Array, filename: string, field = "file", type = "application/octet-stream"): FormData {
  const form = new FormData();
  form.set(field, new Blob([new Uint8Array(bytes)], { type }), filename);
  return form;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function pngChunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(body, 8);
  let c = 0xffffffff;
  for (const byte of out.subarray(4, 8 + body.length)) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  view.setUint32(8 + body.length, (c ^ 0xffffffff) >>> 0);
  return out;
}

/** A valid RGBA PNG of random pixels (noise does not compress), about `bytes` long: a large image. */
export function noisePng(bytes: number): Uint8Array<ArrayBuffer> {
  const side = Math.ceil(Math.sqrt(bytes / 4));
  const raw = new Uint8Array(side * (side * 4 + 1));
  for (let at = 0; at < raw.length; at += 65536) crypto.getRandomValues(raw.subarray(at, Math.min(at + 65536, raw.length)));
  for (let y = 0; y < side; y++) raw[y * (side * 4 + 1)] = 0; // filter type: none
  const header = new Uint8Array(13);
  new DataView(header.buffer).setUint32(0, side);
  new DataView(header.buffer).setUint32(4, side);
  header.set([8, 6, 0, 0, 0], 8);
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk("IHDR", header), pngChunk("IDAT", deflateSync(raw, { level: 0 })), pngChunk("IEND", new Uint8Array(0))];
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
