import { describe, expect, it } from "vitest";
import { matchesAnyKey } from "../../../src/core/http/auth.ts";
import { secretsEqual } from "../../../src/core/encoding/secrets-equal.ts";

describe("credential comparison", () => {
  it("matches only the exact secret", async () => {
    expect(secretsEqual("abc", "abc")).toBe(true);
    for (const other of ["abd", "ab", "abcd", "", "ABC"]) expect(secretsEqual(other, "abc")).toBe(false);
  });

  it("compares non-ASCII secrets exactly, and a prefix or a repetition of the secret never matches", () => {
    expect(secretsEqual("clé-ü-🔑", "clé-ü-🔑")).toBe(true);
    for (const other of ["cle\u0301-ü-🔑", "clé-ü-", "clé-ü-🔑clé-ü-🔑", "clé-ü-🔑 ", "c"]) expect(secretsEqual(other, "clé-ü-🔑")).toBe(false);
    expect(secretsEqual("abcabc", "abc")).toBe(false);
  });

  it("never matches an unset or empty key", async () => {
    expect(matchesAnyKey("", [""])).toBe(false);
    expect(matchesAnyKey(undefined, [undefined])).toBe(false);
    expect(matchesAnyKey("x", [undefined, "", "x"])).toBe(true);
  });
});
