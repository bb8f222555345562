import { readFileSync } from "node:fs";

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
