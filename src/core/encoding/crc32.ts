/**
 * @module
 * CRC-32 (IEEE 802.3, as ZIP uses it), slicing-by-16: sixteen bytes per step from sixteen
 * tables, read as 32-bit words where the platform is little-endian. fflate's byte-at-a-time
 * CRC ran near 300 MB/s and was the slowest step of a ZIP export of large images.
 */

const TABLES: Uint32Array[] = (() => {
  const tables = Array.from({ length: 16 }, () => new Uint32Array(256));
  const first = tables[0]!;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    first[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = first[n]!;
    for (let t = 1; t < 16; t++) {
      c = first[c & 0xff]! ^ (c >>> 8);
      tables[t]![n] = c >>> 0;
    }
  }
  return tables;
})();

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Continues a CRC-32 (start with 0) over `bytes`; answers the unsigned CRC so far. */
export function crc32(bytes: Uint8Array, previous = 0): number {
  const t = TABLES;
  const t0 = t[0]!, t1 = t[1]!, t2 = t[2]!, t3 = t[3]!, t4 = t[4]!, t5 = t[5]!, t6 = t[6]!, t7 = t[7]!;
  const t8 = t[8]!, t9 = t[9]!, t10 = t[10]!, t11 = t[11]!, t12 = t[12]!, t13 = t[13]!, t14 = t[14]!, t15 = t[15]!;
  let crc = ~previous;
  let i = 0;
  const length = bytes.length;
  // Bytes one at a time up to a 4-byte boundary, so the words below are aligned views.
  while (i < length && (bytes.byteOffset + i) % 4 !== 0) crc = t0[(crc ^ bytes[i++]!) & 0xff]! ^ (crc >>> 8);
  if (LITTLE_ENDIAN && length - i >= 16) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset + i, (length - i) >>> 2);
    const steps = words.length >>> 2;
    for (let w = 0; w < steps * 4; w += 4) {
      const a = words[w]! ^ crc, b = words[w + 1]!, c = words[w + 2]!, d = words[w + 3]!;
      crc = t15[a & 0xff]! ^ t14[(a >>> 8) & 0xff]! ^ t13[(a >>> 16) & 0xff]! ^ t12[a >>> 24]! ^
        t11[b & 0xff]! ^ t10[(b >>> 8) & 0xff]! ^ t9[(b >>> 16) & 0xff]! ^ t8[b >>> 24]! ^
        t7[c & 0xff]! ^ t6[(c >>> 8) & 0xff]! ^ t5[(c >>> 16) & 0xff]! ^ t4[c >>> 24]! ^
        t3[d & 0xff]! ^ t2[(d >>> 8) & 0xff]! ^ t1[(d >>> 16) & 0xff]! ^ t0[d >>> 24]!;
    }
    i += steps * 16;
  }
  for (; i < length; i++) crc = t0[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}
