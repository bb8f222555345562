/**
 * @module
 * Base64url without padding (RFC 4648 §5), for key material in JWKs and for sealed audit
 * entries, on every runtime (`Uint8Array.toBase64` is not in Node 20).
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const TABLE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) TABLE[ALPHABET.charCodeAt(i)] = i;

/** Encodes bytes as base64url without padding. */
export function encodeBase64Url(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 3 <= bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]!;
  }
  return out;
}

/** Decodes base64url without padding; null when the text is not exactly that. */
export function decodeBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const digit = code < 128 ? TABLE[code]! : -1;
    if (digit === -1) return null;
    value = (value << 6) | digit;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[length++] = (value >> bits) & 0xff;
    }
  }
  // Leftover bits must be zero, so each byte string has one encoding.
  if ((value & ((1 << bits) - 1)) !== 0) return null;
  return out;
}
