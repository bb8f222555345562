// A valid RGBA PNG of random noise (which does not compress) of about a given size: what the
// image worker's structure check accepts, for the benches that upload or deliver images.
import { randomBytes } from "node:crypto";
import { deflateSync } from "node:zlib";

const CRC = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function pngChunk(type, body) {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, "latin1");
  body.copy(out, 8);
  let c = 0xffffffff;
  for (const byte of out.subarray(4, 8 + body.length)) c = CRC[(c ^ byte) & 0xff] ^ (c >>> 8);
  out.writeUInt32BE((c ^ 0xffffffff) >>> 0, 8 + body.length);
  return out;
}

/** A PNG of noise of about `size` bytes (stored deflate, so the file is the pixels' size). */
export function noisePng(size) {
  const side = Math.ceil(Math.sqrt(size / 4));
  const raw = Buffer.alloc(side * (side * 4 + 1));
  for (let y = 0; y < side; y++) randomBytes(side * 4).copy(raw, y * (side * 4 + 1) + 1);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([8, 6, 0, 0, 0], 8);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk("IHDR", header), pngChunk("IDAT", deflateSync(raw, { level: 0 })), pngChunk("IEND", Buffer.alloc(0))]);
}
