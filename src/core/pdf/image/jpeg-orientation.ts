/**
 * @module
 * The EXIF orientation of a JPEG (tag 0x0112 of IFD0 in the APP1 `Exif` segment). Browsers
 * show a photo turned as its orientation says, and examiners draw their boxes on what they
 * see, so the report draws the image turned the same way.
 */

/** EXIF orientations 1 to 8 (1: as stored; 6: turn 90° clockwise to view; ...). */
export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/** The orientation in a JPEG's EXIF data; 1 when there is none or it cannot be read. */
export function jpegOrientation(bytes: Uint8Array): Orientation {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 2;
  while (at + 4 <= bytes.length && bytes[at] === 0xff) {
    const marker = bytes[at + 1] ?? 0;
    // Start of scan or end of image: no more metadata segments.
    if (marker === 0xda || marker === 0xd9) break;
    const length = view.getUint16(at + 2);
    if (marker === 0xe1 && length >= 8 && at + 2 + length <= bytes.length) {
      const found = exifOrientation(view, at + 4, at + 2 + length);
      if (found !== undefined) return found;
    }
    at += 2 + length;
  }
  return 1;
}

/** Reads the orientation from an APP1 body at `start` (up to `end`), if it is EXIF. */
function exifOrientation(view: DataView, start: number, end: number): Orientation | undefined {
  // "Exif\0\0", then a TIFF header.
  if (view.getUint32(start) !== 0x45786966 || view.getUint16(start + 4) !== 0) return undefined;
  const tiff = start + 6;
  if (tiff + 8 > end) return undefined;
  const order = view.getUint16(tiff);
  if (order !== 0x4949 && order !== 0x4d4d) return undefined;
  const little = order === 0x4949;
  const ifd = tiff + view.getUint32(tiff + 4, little);
  if (ifd + 2 > end) return undefined;
  const entries = view.getUint16(ifd, little);
  for (let i = 0; i < entries; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > end) return undefined;
    if (view.getUint16(entry, little) === 0x0112) {
      const value = view.getUint16(entry + 8, little);
      return value >= 1 && value <= 8 ? (value as Orientation) : undefined;
    }
  }
  return undefined;
}

/** Whether the orientation swaps width and height (5 to 8 turn the image a quarter). */
export function swapsSides(orientation: Orientation): boolean {
  return orientation >= 5;
}

// Displayed (s, t) from stored (u, v), both with the origin bottom-left: s = su·u + sv·v + s0, t = tu·u + tv·v + t0.
const ORIENTED: Readonly<Record<Orientation, readonly [number, number, number, number, number, number]>> = {
  1: [1, 0, 0, 0, 1, 0],
  2: [-1, 0, 1, 0, 1, 0],
  3: [-1, 0, 1, 0, -1, 1],
  4: [1, 0, 0, 0, -1, 1],
  5: [0, -1, 1, -1, 0, 1],
  6: [0, 1, 0, -1, 0, 1],
  7: [0, 1, 0, 1, 0, 0],
  8: [0, -1, 1, 1, 0, 0],
};

/**
 * The matrix `[a, b, c, d, e, f]` that draws a unit-square image XObject into the rectangle
 * (`x`, `y`, `width`, `height`) turned and mirrored as `orientation` says (EXIF 2.3, tag 0x0112).
 */
export function orientedMatrix(
  orientation: Orientation,
  rect: { x: number; y: number; width: number; height: number },
): [number, number, number, number, number, number] {
  const [su, sv, s0, tu, tv, t0] = ORIENTED[orientation];
  const { x, y, width, height } = rect;
  return [width * su, height * tu, width * sv, height * tv, x + width * s0, y + height * t0];
}
