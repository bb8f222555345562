import { describe, expect, it } from "vitest";
import { crc32 } from "../../src/core/encoding/crc32.ts";
import { referenceCrc } from "./exchange-fixtures.ts";

describe("crc32 (slicing-by-16)", () => {
  it("equals the bitwise CRC-32 for every length and alignment, and chains", () => {
    const data = new Uint8Array(4099);
    for (let i = 0; i < data.length; i++) data[i] = (i * 131 + 7) & 255;
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
    for (const offset of [0, 1, 2, 3, 5]) {
      for (const length of [0, 1, 3, 15, 16, 17, 31, 64, 100, 1000, 4093]) {
        const slice = data.subarray(offset, offset + length);
        expect(crc32(slice), `${offset}+${length}`).toBe(referenceCrc(slice));
        const half = length >> 1;
        expect(crc32(slice.subarray(half), crc32(slice.subarray(0, half)))).toBe(referenceCrc(slice));
      }
    }
  });
});
