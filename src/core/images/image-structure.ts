/**
 * @module
 * Whether an upload is the image it claims to be, checked by its structure without decoding
 * its pixels: chunk lengths and CRCs, markers and segment lengths, container
 * sizes, per format in `./structure/`. Its width and height come from the header and are
 * capped, so no image can ask a decoder for more memory than a worker has. No npm library
 * checks structure without decoding (the size readers trust the header, the decoders inflate
 * everything), and these walks are a few dozen lines per format.
 */
import { type ImageType, sniffImageType } from "./image-type.ts";
import { BrokenImage, type Dimensions } from "./structure/reader.ts";
import { checkPng } from "./structure/png.ts";
import { checkJpeg } from "./structure/jpeg.ts";
import { checkWebp } from "./structure/webp.ts";
import { checkGif } from "./structure/gif.ts";
import { checkBmp } from "./structure/bmp.ts";
import { checkTiff } from "./structure/tiff.ts";

/** The most pixels on either side of an accepted image. */
export const MAX_IMAGE_SIDE = 30_000;
/** The most pixels of an accepted image (100 megapixels, 400 MB as RGBA). */
export const MAX_IMAGE_PIXELS = 100_000_000;

/** The format names used in messages. */
export const IMAGE_FORMAT_NAMES: Record<ImageType, string> = {
  "image/jpeg": "JPEG",
  "image/png": "PNG",
  "image/gif": "GIF",
  "image/webp": "WebP",
  "image/tiff": "TIFF",
  "image/bmp": "BMP",
};

const CHECKS: Record<ImageType, (bytes: Uint8Array) => Dimensions> = {
  "image/jpeg": checkJpeg,
  "image/png": checkPng,
  "image/gif": checkGif,
  "image/webp": checkWebp,
  "image/tiff": checkTiff,
  "image/bmp": checkBmp,
};

/** An image whose structure holds, with the size its header gives. */
export interface CheckedImage extends Dimensions {
  /** The format, decided by the bytes. */
  type: ImageType;
}

/** Why bytes are refused: not an image at all, a broken one, or one too large to decode safely. */
export type ImageRefusal =
  | { reason: "not-an-image" }
  | { reason: "broken"; type: ImageType; problem: string }
  | { reason: "too-large"; type: ImageType; width: number; height: number };

/** The outcome of {@link inspectImage}. */
export type ImageInspection = ({ ok: true } & CheckedImage) | ({ ok: false } & ImageRefusal);

/**
 * Sniffs the format of `bytes`, walks its structure and reads its size; never throws. A file is
 * refused when its format is not one of the six accepted, when a structural check fails (the
 * problem says which), or when it exceeds {@link MAX_IMAGE_SIDE} or {@link MAX_IMAGE_PIXELS}.
 */
export function inspectImage(bytes: Uint8Array): ImageInspection {
  const type = sniffImageType(bytes);
  if (type === null) return { ok: false, reason: "not-an-image" };
  let size: Dimensions;
  try {
    size = CHECKS[type](bytes);
  } catch (err) {
    if (err instanceof BrokenImage) return { ok: false, reason: "broken", type, problem: err.message };
    throw err;
  }
  const { width, height } = size;
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE || width * height > MAX_IMAGE_PIXELS) {
    return { ok: false, reason: "too-large", type, width, height };
  }
  return { ok: true, type, width, height };
}

/**
 * The message of a refusal of an image (callers word "not an image" themselves), after
 * `subject` ("The file", "The image at imageUrl"), and the facts for the error's details.
 */
export function describeRefusal(
  subject: string,
  refusal: Exclude<ImageRefusal, { reason: "not-an-image" }>,
): { message: string; details: Record<string, unknown> } {
  const format = IMAGE_FORMAT_NAMES[refusal.type];
  if (refusal.reason === "broken") {
    return { message: `${subject} is not a readable ${format}: ${refusal.problem}`, details: { type: refusal.type, check: refusal.problem } };
  }
  return {
    message: `${subject} is a ${format} of ${refusal.width} x ${refusal.height} pixels; images may have at most ${MAX_IMAGE_SIDE} pixels a side and ${MAX_IMAGE_PIXELS} in all`,
    details: { type: refusal.type, width: refusal.width, height: refusal.height, maxSide: MAX_IMAGE_SIDE, maxPixels: MAX_IMAGE_PIXELS },
  };
}
