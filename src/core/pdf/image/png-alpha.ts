/**
 * @module
 * A PNG with an alpha channel (8-bit grey+alpha or RGBA, not interlaced) made into what PDF
 * holds: the colour channels and the alpha channel (a soft mask) as separate planes, each
 * compressed. PDF cannot drop a channel from PNG data, so the pixels are decoded: with the
 * runtime's own zlib (`DecompressionStream`, `CompressionStream`), which is several times
 * faster than pdf-lib's JavaScript decoder and compressor.
 */

/** The planes of a PNG with alpha, compressed with zlib (PDF's FlateDecode). */
export interface AlphaPlanes {
  /** The grey or RGB samples, 8 bits each, row by row, compressed. */
  colour: Uint8Array;
  /** 1 for grey, 3 for RGB. */
  colours: 1 | 3;
  /** The alpha samples, compressed; null when every pixel is opaque (no mask needed). */
  alpha: Uint8Array | null;
}

function streamOf(bytes: Uint8Array, transform: CompressionStream | DecompressionStream): ReadableStream<Uint8Array> {
  return new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(transform);
}

async function compress(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await new Response(streamOf(bytes, new CompressionStream("deflate"))).arrayBuffer());
}

/** Inflates into exactly `size` bytes; more data than that is an error (and is never held). */
async function inflateExactly(bytes: Uint8Array, size: number): Promise<Uint8Array> {
  const out = new Uint8Array(size);
  let length = 0;
  const reader = streamOf(bytes, new DecompressionStream("deflate")).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (length + value.length > size) {
      await reader.cancel().catch(() => {});
      throw new Error("PNG image data is longer than its size says");
    }
    out.set(value, length);
    length += value.length;
  }
  if (length < size) throw new Error("PNG image data is shorter than its size says");
  return out;
}

const paeth = (a: number, b: number, c: number): number => {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};

/**
 * Decodes the zlib data of a non-interlaced 8-bit PNG of `channels` (2: grey+alpha, 4: RGBA),
 * undoes its row filters, and returns its colour and alpha planes compressed.
 * Throws when the data is broken or too short.
 */
export async function splitAlpha(zlibData: Uint8Array, width: number, height: number, channels: 2 | 4): Promise<AlphaPlanes> {
  const stride = width * channels;
  const raw = await inflateExactly(zlibData, height * (stride + 1));
  const colours = channels === 4 ? 3 : 1;
  const colour = new Uint8Array(width * height * colours);
  const alpha = new Uint8Array(width * height);
  let previous = new Uint8Array(stride);
  let current = new Uint8Array(stride);
  let opaque = true;
  for (let y = 0; y < height; y++) {
    const start = y * (stride + 1);
    const filter = raw[start];
    const line = raw.subarray(start + 1, start + 1 + stride);
    // One loop per filter type (PNG docs/api.md), so the per-byte work has no branches.
    if (filter === 0) {
      current.set(line);
    } else if (filter === 1) {
      for (let i = 0; i < stride; i++) current[i] = (line[i] ?? 0) + (i >= channels ? (current[i - channels] ?? 0) : 0);
    } else if (filter === 2) {
      for (let i = 0; i < stride; i++) current[i] = (line[i] ?? 0) + (previous[i] ?? 0);
    } else if (filter === 3) {
      for (let i = 0; i < stride; i++) {
        current[i] = (line[i] ?? 0) + (((i >= channels ? (current[i - channels] ?? 0) : 0) + (previous[i] ?? 0)) >> 1);
      }
    } else if (filter === 4) {
      for (let i = 0; i < stride; i++) {
        const left = i >= channels ? (current[i - channels] ?? 0) : 0;
        const upLeft = i >= channels ? (previous[i - channels] ?? 0) : 0;
        current[i] = (line[i] ?? 0) + paeth(left, previous[i] ?? 0, upLeft);
      }
    } else {
      throw new Error(`PNG row ${y} has an unknown filter ${filter}`);
    }
    let c = y * width * colours;
    let a = y * width;
    for (let i = 0; i < stride; i += channels) {
      for (let k = 0; k < colours; k++) colour[c++] = current[i + k] ?? 0;
      const value = current[i + colours] ?? 0;
      alpha[a++] = value;
      if (value !== 255) opaque = false;
    }
    [previous, current] = [current, previous];
  }
  const [colourPlane, alphaPlane] = await Promise.all([
    compress(colour),
    opaque ? Promise.resolve(null) : compress(alpha),
  ]);
  return { colour: colourPlane, colours, alpha: alphaPlane };
}
