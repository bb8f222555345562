/**
 * @module
 * Base64 to bytes, fast enough for a 30 MB `data:` URL: `Uint8Array.fromBase64` where the
 * runtime has it, else one pass over the text's bytes with a lookup table (`atob` builds a
 * binary string, and copying the bytes out of it with `charCodeAt` costs ten times more).
 */

// One entry per byte, so no byte needs a range check: -1 is "not base64".
const TABLE = new Int8Array(256).fill(-1);
[..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].forEach((c, i) => (TABLE[c.charCodeAt(0)] = i));
// The URL-safe alphabet decodes too; whitespace is skipped.
TABLE["-".charCodeAt(0)] = 62;
TABLE["_".charCodeAt(0)] = 63;
const SKIP = new Set([0x20, 0x09, 0x0a, 0x0d]);
const encoder = new TextEncoder();

type FromBase64 = (text: string, options?: { alphabet?: "base64" | "base64url"; lastChunkHandling?: "loose" }) => Uint8Array;
const native = (Uint8Array as unknown as { fromBase64?: FromBase64 }).fromBase64;

/** Decodes base64 (standard or URL-safe, padding optional, whitespace ignored); null when it is not base64. */
export function decodeBase64(text: string): Uint8Array | null {
  if (native !== undefined && !/[-_\s]/.test(text)) {
    try {
      return native(text, { lastChunkHandling: "loose" });
    } catch {
      return null;
    }
  }
  // Typed-array reads are several times faster than charCodeAt; non-ASCII text is invalid anyway.
  const chars = encoder.encode(text);
  let end = chars.length;
  let padding = 0;
  for (; end > 0 && (chars[end - 1] === 0x3d || SKIP.has(chars[end - 1] ?? 0)); end--) if (chars[end - 1] === 0x3d) padding++;
  if (padding > 2) return null;
  const out = new Uint8Array(Math.floor((end * 3) / 4) + 3);
  let length = 0;
  let i = 0;
  // Whole groups of four characters, while none is whitespace.
  for (; i + 4 <= end; i += 4) {
    const a = TABLE[chars[i] ?? 0] ?? -1;
    const b = TABLE[chars[i + 1] ?? 0] ?? -1;
    const c = TABLE[chars[i + 2] ?? 0] ?? -1;
    const d = TABLE[chars[i + 3] ?? 0] ?? -1;
    if ((a | b | c | d) < 0) break;
    const group = (a << 18) | (b << 12) | (c << 6) | d;
    out[length++] = group >> 16;
    out[length++] = (group >> 8) & 0xff;
    out[length++] = group & 0xff;
  }
  // The rest one character at a time: whitespace, and the last incomplete group.
  let buffer = 0;
  let bits = 0;
  for (; i < end; i++) {
    const code = chars[i] ?? 0;
    const value = TABLE[code] ?? -1;
    if (value < 0) {
      if (SKIP.has(code)) continue;
      return null;
    }
    buffer = ((buffer << 6) | value) & 0xffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[length++] = (buffer >> bits) & 0xff;
    }
  }
  // Leftover bits: up to 4 (two or three characters in the last group) are padding; six mean one stray character.
  if (bits >= 6) return null;
  return out.subarray(0, length);
}
