import { describe, expect, it } from "vitest";
import { sha256HexSync } from "../../../src/core/encoding/sha256.ts";
import { sha256Hex } from "../../../src/core/encoding/digest.ts";

describe("synchronous SHA-256", () => {
  it("gives the FIPS 180-4 test vectors", () => {
    expect(sha256HexSync("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256HexSync("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256HexSync("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    expect(sha256HexSync("a".repeat(1_000_000))).toBe("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  });

  it("equals web crypto on every length around the block boundaries and on non-ASCII text", async () => {
    for (let length = 0; length < 200; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      expect(sha256HexSync(bytes), String(length)).toBe(await sha256Hex(bytes));
    }
    const text = "é ✓ 😀 \u0000 \uffff";
    expect(sha256HexSync(text)).toBe(await sha256Hex(text));
  });
});
