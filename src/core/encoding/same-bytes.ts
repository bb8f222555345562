/**
 * @module
 * Byte-for-byte equality of two arrays (not for secrets: it stops at the first difference;
 * secrets-equal.ts is the constant-time one).
 */

/** True when `a` and `b` hold the same bytes (the same memory, or equal byte for byte). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (a.buffer === b.buffer && a.byteOffset === b.byteOffset) return true;
  let i = 0;
  // Four bytes at a time where both start on a 4-byte boundary (a file read, a text encoded here).
  if (a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0) {
    const words = a.length >>> 2;
    const wa = new Uint32Array(a.buffer, a.byteOffset, words);
    const wb = new Uint32Array(b.buffer, b.byteOffset, words);
    for (; i < words; i++) if (wa[i] !== wb[i]) return false;
    i = words << 2;
  }
  for (; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
