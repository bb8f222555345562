import { describe, expect, it } from "vitest";
import { matchesAnyKey, secretsEqual } from "../../../src/core/http/auth.ts";

describe("credential comparison", () => {
  it("matches only the exact secret", async () => {
    expect(await secretsEqual("abc", "abc")).toBe(true);
    for (const other of ["abd", "ab", "abcd", "", "ABC"]) expect(await secretsEqual(other, "abc")).toBe(false);
  });

  it("never matches an unset or empty key", async () => {
    expect(await matchesAnyKey("", [""])).toBe(false);
    expect(await matchesAnyKey(undefined, [undefined])).toBe(false);
    expect(await matchesAnyKey("x", [undefined, "", "x"])).toBe(true);
  });
});
