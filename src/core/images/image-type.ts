/**
 * @module
 * What an upload is, decided by its first bytes, never by its name or declared type. Six
 * fixed signatures; a sniffing library would add its weight to every worker bundle for
 * formats the service refuses anyway.
 */

/** The image formats the image worker accepts. */
export type ImageType = "image/jpeg" | "image/png" | "image/gif" | "image/webp" | "image/tiff" | "image/bmp";

const startsWith = (bytes: Uint8Array, signature: readonly number[], offset = 0): boolean =>
  bytes.length >= offset + signature.length && signature.every((byte, i) => bytes[offset + i] === byte);

const ascii = (text: string): number[] => Array.from(text, (char) => char.charCodeAt(0));

/** The image type of `bytes`, or null when they are not one of the accepted formats. */
export function sniffImageType(bytes: Uint8Array): ImageType | null {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) return "image/gif";
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp";
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return "image/tiff";
  // "BM", then a file size and two reserved zero words: enough to tell BMP from text starting "BM".
  if (startsWith(bytes, ascii("BM")) && bytes.length >= 14 && bytes[6] === 0 && bytes[7] === 0 && bytes[8] === 0 && bytes[9] === 0) {
    return "image/bmp";
  }
  return null;
}
