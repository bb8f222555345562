/**
 * @module
 * Puts the report's image into the PDF without re-encoding it where PDF can hold it as is: a
 * JPEG as its own bytes (a DCT stream, drawn turned as its EXIF orientation says, as browsers
 * show it), an opaque non-interlaced PNG as its own compressed data (a Flate stream with PNG
 * predictors, PDF 32000-1 7.4.4.4). An 8-bit PNG with an alpha channel is split here into
 * colour and soft mask; the rarer rest (tRNS transparency, interlace, 16-bit alpha) goes
 * through pdf-lib. A file that claims to be one of these and cannot be read is a 400, not a 500.
 */
import {
  concatTransformationMatrix,
  drawObject,
  JpegEmbedder,
  type PDFDict,
  type PDFDocument,
  PDFHexString,
  PDFName,
  type PDFPage,
  type PDFRef,
  PDFStream,
  popGraphicsState,
  pushGraphicsState,
} from "pdf-lib";
import type { PDFContext } from "pdf-lib";
import { ServiceError } from "../../errors.ts";
import { concatBytes, type ReportImage } from "./image-source.ts";
import type { Rect } from "../layout/page-layout.ts";
import { jpegOrientation, type Orientation, orientedMatrix, swapsSides } from "./jpeg-orientation.ts";
import { splitAlpha } from "./png-alpha.ts";
import { checkPngData, UnreadablePngData } from "./png-data.ts";
import { DecodeBudget } from "./decode-budget.ts";

/** An image in the document, ready to be drawn. */
export interface EmbeddedImage {
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
  /** Draws the image stretched over `rect`. */
  draw(page: PDFPage, rect: Rect): void;
}

const STREAM = new TextEncoder().encode("\nstream\n");
const ENDSTREAM = new TextEncoder().encode("\nendstream");

/**
 * A stream written with one block copy: pdf-lib's own streams copy their contents byte by
 * byte, which costs tens of milliseconds for a 12 MP photo.
 */
class PassThroughStream extends PDFStream {
  constructor(dict: PDFDict, private readonly contents: Uint8Array) {
    super(dict);
  }
  override getContents(): Uint8Array {
    return this.contents;
  }
  override getContentsSize(): number {
    return this.contents.length;
  }
  override getContentsString(): string {
    let text = "";
    for (let i = 0; i < this.contents.length; i += 8192) text += String.fromCharCode(...this.contents.subarray(i, i + 8192));
    return text;
  }
  override clone(context?: PDFContext): PassThroughStream {
    return new PassThroughStream(this.dict.clone(context), this.contents);
  }
  override copyBytesInto(buffer: Uint8Array, offset: number): number {
    this.updateDict();
    let at = offset + this.dict.copyBytesInto(buffer, offset);
    buffer.set(STREAM, at);
    at += STREAM.length;
    buffer.set(this.contents, at);
    at += this.contents.length;
    buffer.set(ENDSTREAM, at);
    return at + ENDSTREAM.length - offset;
  }
}

type ImageEntries = Parameters<PDFContext["obj"]>[0] & Record<string, unknown>;

/** Registers an image XObject of `entries` (beside its type and size) holding `contents`. */
function registerImage(doc: PDFDocument, width: number, height: number, entries: ImageEntries, contents: Uint8Array): PDFRef {
  const dict = doc.context.obj({ Type: "XObject", Subtype: "Image", Width: width, Height: height, ...entries });
  return doc.context.register(new PassThroughStream(dict, contents));
}

/**
 * Registers an image XObject (see {@link registerImage}) and returns how to draw it, turned as
 * its EXIF `orientation` says; width and height are then those seen.
 */
function register(
  doc: PDFDocument,
  width: number,
  height: number,
  entries: ImageEntries,
  contents: Uint8Array,
  orientation: Orientation = 1,
): EmbeddedImage {
  if (!(width > 0 && height > 0)) throw new Error(`the image is ${width} x ${height} pixels`);
  const ref = registerImage(doc, width, height, entries, contents);
  const swap = swapsSides(orientation);
  return {
    width: swap ? height : width,
    height: swap ? width : height,
    draw(page, rect) {
      const name = page.node.newXObject("Image", ref);
      page.pushOperators(pushGraphicsState(), concatTransformationMatrix(...orientedMatrix(orientation, rect)), drawObject(name), popGraphicsState());
    },
  };
}

async function embedJpeg(doc: PDFDocument, bytes: Uint8Array): Promise<EmbeddedImage> {
  // pdf-lib reads the frame header only (size, components, bit depth); the bytes stay as they are.
  const jpeg = await JpegEmbedder.for(bytes);
  const cmyk = jpeg.colorSpace === "DeviceCMYK";
  return register(doc, jpeg.width, jpeg.height, {
    BitsPerComponent: jpeg.bitsPerComponent,
    ColorSpace: jpeg.colorSpace,
    Filter: "DCTDecode",
    // Standalone CMYK JPEGs store inverted values (as pdf-lib assumes too).
    Decode: cmyk ? [1, 0, 1, 0, 1, 0, 1, 0] : undefined,
  }, bytes, jpegOrientation(bytes));
}

/** How a PNG goes into the PDF. */
type PngPlan =
  /** Its compressed data as it is, with PNG predictors (opaque grey, RGB or palette). */
  | { kind: "as-is"; width: number; height: number; depth: number; colours: 1 | 3; palette: Uint8Array | undefined; data: Uint8Array }
  /** Decoded here and split into colour and soft mask (8-bit grey+alpha or RGBA). */
  | { kind: "alpha"; width: number; height: number; channels: 2 | 4; data: Uint8Array }
  /** Decoded by pdf-lib: transparency chunks, interlacing, 16-bit alpha; `bytesPerPixel` as stored. */
  | { kind: "pdf-lib"; width: number; height: number; bytesPerPixel: number; interlaced: boolean };

/** Samples per pixel of each PNG colour type (grey, RGB, palette, grey+alpha, RGBA). */
const PNG_CHANNELS: Readonly<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

const readUint32 = (bytes: Uint8Array, at: number): number =>
  (((bytes[at] ?? 0) << 24) | ((bytes[at + 1] ?? 0) << 16) | ((bytes[at + 2] ?? 0) << 8) | (bytes[at + 3] ?? 0)) >>> 0;

/** Reads a PNG's chunks and decides how it is embedded; throws when its structure is broken. */
function pngPlan(bytes: Uint8Array): PngPlan {
  const broken = (why: string) => new Error(`PNG ${why}`);
  let at = 8;
  let header: { width: number; height: number; depth: number; type: number; interlace: number } | undefined;
  let palette: Uint8Array | undefined;
  let transparency = false;
  const idat: Uint8Array[] = [];
  let ended = false;
  while (at + 8 <= bytes.length && !ended) {
    const length = readUint32(bytes, at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const start = at + 8;
    if (start + length + 4 > bytes.length) throw broken(`chunk ${type} runs past the end of the file`);
    const body = bytes.subarray(start, start + length);
    if (type === "IHDR") {
      if (length !== 13) throw broken("header has the wrong length");
      header = { width: readUint32(body, 0), height: readUint32(body, 4), depth: body[8] ?? 0, type: body[9] ?? 0, interlace: body[12] ?? 0 };
      if ((body[10] ?? 0) !== 0 || (body[11] ?? 0) !== 0) throw broken("uses an unknown compression or filter method");
    } else if (type === "PLTE") {
      palette = body;
    } else if (type === "tRNS") {
      transparency = true;
    } else if (type === "IDAT") {
      idat.push(body);
    } else if (type === "IEND") {
      ended = true;
    }
    at = start + length + 4;
  }
  if (header === undefined || header.width === 0 || header.height === 0) throw broken("has no valid header");
  if (idat.length === 0) throw broken("has no image data");
  const { width, height, depth, type, interlace } = header;
  const decodedByPdfLib = { kind: "pdf-lib", width, height, bytesPerPixel: Math.ceil(((PNG_CHANNELS[type] ?? 4) * depth) / 8), interlaced: interlace !== 0 } as const;
  if (interlace !== 0 || transparency) return decodedByPdfLib;
  const data = concatBytes(idat);
  if ((type === 0 || type === 2) && (depth === 8 || depth === 16)) {
    return { kind: "as-is", width, height, depth, colours: type === 2 ? 3 : 1, palette: undefined, data };
  }
  if (type === 3 && [1, 2, 4, 8].includes(depth) && palette !== undefined && palette.length % 3 === 0) {
    return { kind: "as-is", width, height, depth, colours: 1, palette, data };
  }
  if ((type === 4 || type === 6) && depth === 8) return { kind: "alpha", width, height, channels: type === 6 ? 4 : 2, data };
  return decodedByPdfLib;
}

/** The most memory one PNG's decode may take, estimated (an 8-bit RGBA PNG of 30 megapixels takes 240 MB). */
export const MAX_DECODED_PNG_BYTES = 256 * 1024 * 1024;

/** What all decodes in flight in this process or isolate may hold together; later ones wait their turn. */
export const decodeBudget: DecodeBudget = new DecodeBudget(2 * MAX_DECODED_PNG_BYTES);

/**
 * The peak bytes of decoding the PNG, estimated per pixel: split here, the inflated samples
 * and the colour and mask planes; through pdf-lib, the inflated samples (twice when
 * interlaced: the passes and the image), its 8-bit RGBA copy and the planes split from it.
 * A 16-bit RGBA PNG of 30 megapixels, estimated 480 MB, peaked at about 570 MB over the server's
 * own in a red team's run; an interlaced 16-bit RGB one at 675 MB, estimated 600.
 */
function decodedBytes(png: Exclude<PngPlan, { kind: "as-is" }>): number {
  const pixels = png.width * png.height;
  if (png.kind === "alpha") return pixels * png.channels * 2;
  return pixels * (png.bytesPerPixel * (png.interlaced ? 2 : 1) + 8);
}

/** A report image looked at before anything is decoded: how a PNG goes in, and the memory its decode will hold. */
export interface PlannedReportImage {
  /** The image as loaded. */
  image: ReportImage;
  /** A PNG's plan; undefined for a JPEG, or a PNG whose structure is broken (its embedding says why). */
  png: PngPlan | undefined;
  /** Bytes its decode holds until the PDF is saved, estimated: 0 for a JPEG or a PNG embedded as it is. */
  decodeBytes: number;
}

/** Plans the report's image (one walk of its chunks for the estimate and the embedding); a 400 beyond {@link MAX_DECODED_PNG_BYTES}. */
export function planReportImage(image: ReportImage): PlannedReportImage {
  if (image.type === "image/jpeg") return { image, png: undefined, decodeBytes: 0 };
  let png: PngPlan;
  try {
    png = pngPlan(image.bytes);
  } catch {
    return { image, png: undefined, decodeBytes: 0 }; // its embedding says what is broken, before anything is decoded
  }
  if (png.kind === "as-is") return { image, png, decodeBytes: 0 };
  const estimated = decodedBytes(png);
  if (estimated > MAX_DECODED_PNG_BYTES) {
    const mb = (value: number) => Math.ceil(value / (1024 * 1024));
    throw ServiceError.validation(
      `The PNG at imageUrl (${png.width} x ${png.height} pixels, with transparency, interlacing or 16-bit samples) would take about ${mb(estimated)} MB to decode; at most ${mb(MAX_DECODED_PNG_BYTES)} MB`,
      { field: "imageUrl", estimatedBytes: estimated, limitBytes: MAX_DECODED_PNG_BYTES },
    );
  }
  return { image, png, decodeBytes: estimated };
}

/** The bytes decoding the report's image will hold until the PDF is saved, estimated ({@link planReportImage}). */
export function reportImageDecodeBytes(image: ReportImage): number {
  return planReportImage(image).decodeBytes;
}

async function embedPng(doc: PDFDocument, bytes: Uint8Array, png: PngPlan): Promise<EmbeddedImage> {
  if (png.kind === "as-is") return await embedPngAsIs(doc, png);
  // The caller reserved the decode's memory (planReportImage, decodeBudget) for the whole render.
  return await embedDecodedPng(doc, bytes, png);
}

/** Embeds a PNG that must be decoded: split here (8-bit alpha) or by pdf-lib. */
async function embedDecodedPng(doc: PDFDocument, bytes: Uint8Array, png: Exclude<PngPlan, { kind: "as-is" }>): Promise<EmbeddedImage> {
  if (png.kind === "pdf-lib") {
    const image = await doc.embedPng(bytes);
    return { width: image.width, height: image.height, draw: (page, rect) => page.drawImage(image, rect) };
  }
  const planes = await splitAlpha(png.data, png.width, png.height, png.channels);
  const mask = planes.alpha === null
    ? undefined
    : registerImage(doc, png.width, png.height, { BitsPerComponent: 8, ColorSpace: "DeviceGray", Filter: "FlateDecode" }, planes.alpha);
  return register(doc, png.width, png.height, {
    BitsPerComponent: 8,
    ColorSpace: planes.colours === 3 ? "DeviceRGB" : "DeviceGray",
    Filter: "FlateDecode",
    SMask: mask,
  }, planes.colour);
}

/** Embeds an opaque PNG's compressed data as it is. */
async function embedPngAsIs(doc: PDFDocument, png: Extract<PngPlan, { kind: "as-is" }>): Promise<EmbeddedImage> {
  // Embedded without decoding, so checked here: sound chunks around garbage data would draw a broken image.
  await checkPngData(png.data, png.height * (1 + Math.ceil((png.width * png.colours * png.depth) / 8)));
  const colorSpace = png.palette === undefined
    ? PDFName.of(png.colours === 3 ? "DeviceRGB" : "DeviceGray")
    : doc.context.obj([
      PDFName.of("Indexed"),
      PDFName.of("DeviceRGB"),
      png.palette.length / 3 - 1,
      PDFHexString.of(Array.from(png.palette, (b) => b.toString(16).padStart(2, "0")).join("")),
    ]);
  return register(doc, png.width, png.height, {
    BitsPerComponent: png.depth,
    ColorSpace: colorSpace,
    Filter: "FlateDecode",
    DecodeParms: doc.context.obj({ Predictor: 15, Colors: png.colours, BitsPerComponent: png.depth, Columns: png.width }),
  }, png.data);
}

/** Embeds the planned image; JPEG and opaque PNG data are kept as they are. */
export async function embedReportImage(doc: PDFDocument, planned: PlannedReportImage): Promise<EmbeddedImage> {
  const { image } = planned;
  try {
    // A broken PNG has no plan: planning it again throws what is broken.
    return image.type === "image/jpeg" ? await embedJpeg(doc, image.bytes) : await embedPng(doc, image.bytes, planned.png ?? pngPlan(image.bytes));
  } catch (err) {
    // Checked before any other service error: the refusal is worded for the caller here.
    if (err instanceof UnreadablePngData) {
      throw ServiceError.validation(`The image at imageUrl is not a readable PNG: ${err.message}`, { field: "imageUrl", reason: err.message });
    }
    if (err instanceof ServiceError) throw err;
    const kind = image.type === "image/jpeg" ? "JPEG" : "PNG";
    // The decoder's own message (e.g. a DataView offset) says nothing to the caller.
    throw ServiceError.validation(`The image at imageUrl is not a readable ${kind}`, {
      field: "imageUrl",
      reason: `the ${kind} data is truncated or corrupt`,
    });
  }
}
