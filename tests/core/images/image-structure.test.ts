import { describe, expect, it } from "vitest";
import { encode as encodePng } from "fast-png";
import { deflateSync } from "node:zlib";
import { describeRefusal, type ImageInspection, inspectImage, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE } from "../../../src/core/images/image-structure.ts";
import { fixture } from "../../helpers/images.ts";
import { chunk, filteredPng, solidJpeg, solidPng, withPngSize } from "../pdf/images.ts";

const SIGNATURE = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const concat = (...parts: Uint8Array[]) => new Uint8Array(parts.flatMap((part) => [...part]));
const ascii = (text: string) => new Uint8Array(Array.from(text, (c) => c.charCodeAt(0)));

/** An IHDR body: size, depth 8, colour type, standard methods. */
function ihdr(width: number, height: number, colourType = 2, depth = 8): Uint8Array {
  const body = new Uint8Array(13);
  const view = new DataView(body.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  body.set([depth, colourType, 0, 0, 0], 8);
  return body;
}

/** A PNG from chunks with correct lengths and CRCs. */
const pngOf = (...chunks: Uint8Array[]) => concat(SIGNATURE, ...chunks);
const IEND = chunk("IEND", new Uint8Array(0));
/** One white RGB pixel, filter byte 0, deflated. */
const ONE_PIXEL = deflateSync(new Uint8Array([0, 255, 255, 255]));

/** The refusal's problem (or "too-large"/"not-an-image"), so a test reads what a user would be told. */
function refusal(bytes: Uint8Array): string {
  const result = inspectImage(bytes);
  if (result.ok) return `accepted ${result.width} x ${result.height}`;
  if (result.reason === "broken") return result.problem;
  return result.reason;
}

function accepted(bytes: Uint8Array): ImageInspection & { ok: true } {
  const result = inspectImage(bytes);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result)}`);
  return result;
}

/** Offset of marker `FF xx` in a JPEG. */
const markerAt = (jpeg: Uint8Array, marker: number) => jpeg.findIndex((byte, i) => byte === 0xff && jpeg[i + 1] === marker);

describe("real images pass, with the size of their header", () => {
  it("PNG of every colour type this service meets", () => {
    expect(accepted(solidPng(123, 45, [1, 2, 3]))).toEqual({ ok: true, type: "image/png", width: 123, height: 45 });
    const rgba = encodePng({ width: 7, height: 300, data: new Uint8Array(7 * 300 * 4), channels: 4, depth: 8 });
    expect(accepted(rgba)).toMatchObject({ width: 7, height: 300 });
    const grey16 = encodePng({ width: 10, height: 11, data: new Uint16Array(110), channels: 1, depth: 16 });
    expect(accepted(grey16)).toMatchObject({ width: 10, height: 11 });
    expect(accepted(filteredPng(9, 5, 2, new Uint8Array(90)))).toMatchObject({ width: 9, height: 5 });
    expect(accepted(pngOf(chunk("IHDR", ihdr(1, 1, 3)), chunk("PLTE", new Uint8Array([255, 0, 0])), chunk("IDAT", deflateSync(new Uint8Array([0, 0]))), IEND)))
      .toMatchObject({ width: 1, height: 1 });
    // IDAT split over several chunks, the zlib header itself split.
    const stream = deflateSync(new Uint8Array([0, 255, 255, 255]));
    expect(accepted(pngOf(chunk("IHDR", ihdr(1, 1)), chunk("IDAT", stream.subarray(0, 1)), chunk("IDAT", stream.subarray(1)), IEND))).toMatchObject({ width: 1 });
    expect(accepted(fixture("sample.png"))).toMatchObject({ width: 64, height: 48 });
  });

  it("JPEG, WebP (lossless, lossy, extended with alpha), GIF, TIFF and BMP", () => {
    expect(accepted(solidJpeg(77, 33, [200, 10, 10]))).toEqual({ ok: true, type: "image/jpeg", width: 77, height: 33 });
    expect(accepted(fixture("sample.jpg"))).toMatchObject({ width: 64, height: 48 });
    for (const name of ["sample.webp", "sample-lossy.webp", "sample-alpha.webp"]) {
      expect(accepted(fixture(name)), name).toEqual({ ok: true, type: "image/webp", width: 64, height: 48 });
    }
    expect(accepted(fixture("sample.gif"))).toEqual({ ok: true, type: "image/gif", width: 64, height: 48 });
    expect(accepted(fixture("sample.tiff"))).toEqual({ ok: true, type: "image/tiff", width: 64, height: 48 });
    expect(accepted(fixture("sample.bmp"))).toEqual({ ok: true, type: "image/bmp", width: 64, height: 48 });
  });

  it("bytes after a JPEG's end-of-image (camera trailers) do not matter", () => {
    expect(accepted(concat(solidJpeg(8, 8, [0, 0, 0]), ascii("trailer")))).toMatchObject({ width: 8, height: 8 });
  });
});

describe("PNG structure", () => {
  const png = solidPng(20, 10, [90, 90, 90]);

  it("the signature alone, or with a few bytes, is refused", () => {
    expect(refusal(SIGNATURE)).toBe("it has no IHDR chunk");
    expect(refusal(concat(SIGNATURE, new Uint8Array([0, 0, 0, 13])))).toContain("the file ends inside a chunk type");
  });

  it("a truncated file is refused at the chunk that runs past the end", () => {
    expect(refusal(png.slice(0, 45))).toMatch(/^chunk \w{4} at byte 33 declares \d+ bytes but the file ends 4 bytes later$/);
    expect(refusal(png.slice(0, png.length - 2))).toBe(`chunk IEND at byte ${png.length - 12} declares 0 bytes but the file ends 2 bytes later`);
  });

  it("a wrong CRC is refused, naming the chunk", () => {
    const corrupt = png.slice();
    const idat = Buffer.from(corrupt).indexOf("IDAT");
    corrupt[idat + 6] = corrupt[idat + 6]! ^ 0xff;
    expect(refusal(corrupt)).toBe(`chunk IDAT at byte ${idat - 4} has a wrong CRC`);
  });

  it("a missing IEND is refused", () => {
    expect(refusal(png.slice(0, png.length - 12))).toBe("it ends without an IEND chunk");
  });

  it("IHDR must come first, be sound and give a size; IDAT must exist and hold zlib data", () => {
    const data = chunk("IDAT", ONE_PIXEL);
    expect(refusal(pngOf(data, chunk("IHDR", ihdr(1, 1)), IEND))).toBe("its first chunk is IDAT, not IHDR");
    expect(refusal(pngOf(chunk("IHDR", ihdr(0, 1)), data, IEND))).toBe("its IHDR gives a size of 0 x 1 pixels");
    expect(refusal(pngOf(chunk("IHDR", ihdr(1, 1, 2, 4)), data, IEND))).toContain("colour type 2 with bit depth 4");
    expect(refusal(pngOf(chunk("IHDR", ihdr(1, 1).subarray(0, 12)), data, IEND))).toBe("its IHDR chunk has 12 bytes, not 13");
    expect(refusal(pngOf(chunk("IHDR", ihdr(1, 1)), IEND))).toBe("it has no image data (IDAT chunk)");
    expect(refusal(pngOf(chunk("IHDR", ihdr(1, 1, 3)), data, IEND))).toContain("without a palette");
    // A valid header, CRCs right, and garbage where the compressed pixels should be.
    const garbage = pngOf(chunk("IHDR", ihdr(64, 48)), chunk("IDAT", ascii("these are not pixels at all")), IEND);
    expect(refusal(garbage)).toBe("its image data (IDAT) does not start as a zlib stream");
  });
});

describe("JPEG structure", () => {
  const jpeg = solidJpeg(40, 30, [10, 200, 30]);

  it("a truncated file or one without end-of-image is refused", () => {
    expect(refusal(jpeg.slice(0, jpeg.length - 2))).toContain("without an end-of-image marker (EOI)");
    expect(refusal(jpeg.slice(0, markerAt(jpeg, 0xda) + 20))).toBe("the file ends inside its image data, without an end-of-image marker (EOI)");
    expect(refusal(jpeg.slice(0, 180))).toMatch(/^segment FF[0-9A-F]{2} at byte \d+ declares \d+ bytes but the file ends \d+ bytes later$/);
    expect(refusal(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 2]))).toBe("it ends without an end-of-image marker (EOI)");
  });

  it("a file without start-of-frame is refused", () => {
    const sof = markerAt(jpeg, 0xc0);
    const length = (jpeg[sof + 2]! << 8) | jpeg[sof + 3]!;
    const noFrame = concat(jpeg.subarray(0, sof), jpeg.subarray(sof + 2 + length));
    expect(refusal(noFrame)).toBe("its image data (SOS) comes before any start-of-frame (SOF) segment");
    const headersOnly = concat(jpeg.subarray(0, markerAt(jpeg, 0xda)), new Uint8Array([0xff, 0xd9]));
    expect(refusal(headersOnly)).toBe("it has no image data (no SOS segment)");
    expect(refusal(new Uint8Array([0xff, 0xd8, 0xff, 0xd9]))).toBe("it has no start-of-frame (SOF) segment, so no size");
  });

  it("segment lengths must stay inside the file and markers must be markers", () => {
    expect(refusal(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 4, 1, 2, 3, 4, 5]))).toBe("byte 8 should start a marker but is not 0xFF");
    expect(refusal(new Uint8Array([0xff, 0xd8, 0xff, 0xe1, 0x40, 0x00, 1, 2]))).toBe("segment FFE1 at byte 2 declares 16384 bytes but the file ends 4 bytes later");
    const zeroSize = jpeg.slice();
    const sof = markerAt(zeroSize, 0xc0);
    zeroSize.set([0, 0], sof + 5);
    expect(refusal(zeroSize)).toBe("its start-of-frame gives a size of 40 x 0 pixels");
  });
});

describe("WebP structure", () => {
  const webp = fixture("sample-lossy.webp");

  it("a RIFF size that does not match the file is refused", () => {
    const wrong = webp.slice();
    new DataView(wrong.buffer).setUint32(4, webp.length, true);
    expect(refusal(wrong)).toBe(`its RIFF header says the file has ${webp.length + 8} bytes, but it has ${webp.length}`);
    expect(refusal(webp.slice(0, webp.length - 10))).toContain("its RIFF header says the file has");
    expect(refusal(concat(webp, new Uint8Array(2)))).toContain(`but it has ${webp.length + 2}`);
  });

  it("needs a VP8, VP8L or VP8X chunk that fits, and takes the size from it", () => {
    const riff = (...chunks: Uint8Array[]) => {
      const body = concat(ascii("WEBP"), ...chunks);
      const head = concat(ascii("RIFF"), new Uint8Array(4));
      new DataView(head.buffer).setUint32(4, body.length, true);
      return concat(head, body);
    };
    const junk = concat(ascii("JUNK"), new Uint8Array([4, 0, 0, 0]), new Uint8Array(4));
    expect(refusal(riff(junk))).toBe('its first chunk is "JUNK", not VP8, VP8L or VP8X');
    expect(refusal(riff())).toBe("it has no chunks after its RIFF header");
    expect(refusal(riff(concat(ascii("VP8L"), new Uint8Array([200, 0, 0, 0]), new Uint8Array(4))))).toContain('chunk "VP8L" at byte 12 declares 200 bytes');
    const vp8x = fixture("sample-alpha.webp");
    const onlyHeader = riff(vp8x.subarray(12, 12 + 18));
    expect(refusal(onlyHeader)).toBe("its VP8X header is followed by no image data (VP8 or VP8L chunk)");
    const otherCanvas = vp8x.slice();
    otherCanvas[12 + 8 + 4] = 99; // canvas width - 1
    expect(refusal(otherCanvas)).toBe("its canvas is 100 x 48 pixels but its image is 64 x 48");
  });
});

describe("GIF, TIFF and BMP structure", () => {
  it("truncated files are refused", () => {
    expect(refusal(fixture("sample.gif").slice(0, 60))).toContain("the file ends inside");
    expect(refusal(fixture("sample.gif").slice(0, -1))).toContain("the file ends inside a block (no trailer)");
    expect(refusal(fixture("sample.tiff").slice(0, 700))).toContain("the file ends inside the first IFD");
    expect(refusal(fixture("sample.bmp").slice(0, 1000))).toBe("its pixel data needs 1536 bytes from byte 118, but the file has 1000");
  });
});

describe("decompression-size caps", () => {
  it(`refuses more than ${MAX_IMAGE_SIDE} pixels a side or ${MAX_IMAGE_PIXELS} pixels, whatever the file size`, () => {
    const small = solidPng(4, 4, [0, 0, 0]);
    expect(refusal(withPngSize(small, MAX_IMAGE_SIDE + 1, 1))).toBe("too-large");
    expect(refusal(withPngSize(small, 1, MAX_IMAGE_SIDE + 1))).toBe("too-large");
    expect(refusal(withPngSize(small, 20_000, 20_000))).toBe("too-large");
    expect(refusal(withPngSize(small, MAX_IMAGE_SIDE, 3_333))).toBe(`accepted ${MAX_IMAGE_SIDE} x 3333`);
    const jpeg = solidJpeg(8, 8, [0, 0, 0]);
    const sof = markerAt(jpeg, 0xc0);
    jpeg.set([0xff, 0xff, 0xff, 0xff], sof + 5);
    expect(refusal(jpeg)).toBe("too-large");
    const webp = fixture("sample.webp"); // VP8L: 14 bits each of width - 1 and height - 1
    const bits = new DataView(webp.buffer, webp.byteOffset + 21, 4);
    bits.setUint32(0, (bits.getUint32(0, true) & ~0x0fffffff) | 0x0fffffff, true);
    expect(refusal(webp)).toBe("too-large");
  });

  it("says how large the image is and what the limits are", () => {
    const result = inspectImage(withPngSize(solidPng(4, 4, [0, 0, 0]), 40_000, 2));
    expect(result).toEqual({ ok: false, reason: "too-large", type: "image/png", width: 40_000, height: 2 });
    const { message, details } = describeRefusal("The file", result as Extract<ImageInspection, { reason: "too-large" }>);
    expect(message).toBe("The file is a PNG of 40000 x 2 pixels; images may have at most 30000 pixels a side and 100000000 in all");
    expect(details).toMatchObject({ width: 40_000, height: 2, maxSide: 30_000, maxPixels: 100_000_000 });
  });
});

describe("anything else", () => {
  it("is not an image; no input makes the inspection throw", () => {
    expect(refusal(fixture("not-an-image.png"))).toBe("not-an-image");
    expect(refusal(new Uint8Array(0))).toBe("not-an-image");
    // Every prefix of every real file is either refused with a reason or (trailers aside) the whole file.
    for (const name of ["sample.png", "sample.jpg", "sample.webp", "sample-alpha.webp", "sample.gif", "sample.tiff", "sample.bmp"]) {
      const bytes = fixture(name);
      for (let cut = 0; cut < bytes.length; cut++) {
        expect(() => inspectImage(bytes.subarray(0, cut)), `${name} cut at ${cut}`).not.toThrow();
        expect(inspectImage(bytes.subarray(0, cut)).ok, `${name} cut at ${cut}`).toBe(false);
      }
    }
  });
});
