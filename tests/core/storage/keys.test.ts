import { describe, expect, it } from "vitest";
import { checkSegment, keyFromRawPath, storageKeys } from "../../../src/core/storage/keys.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { statusOf } from "../../../src/core/http/errors.ts";

const refused = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof ServiceError && statusOf(err) === 400;
  }
  return false;
};

describe("storage keys", () => {
  it("builds the CONTRACT layout", () => {
    expect(storageKeys.case("u1", "C-1")).toBe("u1/C-1/data.json");
    expect(storageKeys.annotations("u1", "C-1", "f9")).toBe("u1/C-1/f9/data.json");
    expect(storageKeys.auditDay("u1", "2026-11-22")).toBe("audit-trails/u1-2026-11-22.json");
    expect(storageKeys.legacyAuditDay("u1", "2026-11-22")).toBe("audit-trails/u1/2026-11-22.json");
    expect(storageKeys.image("abc")).toBe("images/abc");
    expect(storageKeys.user("u1")).toBe("u1");
  });

  it("decodes each segment once", () => {
    expect(keyFromRawPath("u%201/c%25201/data.json")).toBe("u 1/c%201/data.json");
    expect(keyFromRawPath("%C3%A9/data.json")).toBe("é/data.json");
  });

  it("refuses traversal, empty, absolute, backslash, separators and control characters", () => {
    for (const raw of ["", "/a", "a/", "a//b", "..", "a/../b", ".", "%2e%2e", "a%2Fb", "a%5Cb", "a\\b", "a%3Ab", "a%3Fb", "a%23b", "a%00", "a%7F", "a%C2%85", "%zz", `${"x".repeat(256)}`]) {
      expect(refused(() => keyFromRawPath(raw)), raw).toBe(true);
    }
    for (const segment of ["", ".", "..", "a/b", "a:b", "a\u0001"]) {
      expect(refused(() => storageKeys.case("u1", segment)), JSON.stringify(segment)).toBe(true);
    }
    expect(refused(() => checkSegment("ok-Case_1 (2)"))).toBe(false);
  });

  it("refuses U+FFFD, what a runtime makes of path bytes that are not UTF-8 (Bun filed \\xFF and \\xFE under one key)", () => {
    expect(refused(() => keyFromRawPath("u1/%EF%BF%BD.json"))).toBe(true);
    expect(refused(() => keyFromRawPath("u1/\uFFFD.json"))).toBe(true);
    expect(() => checkSegment("a\uFFFD")).toThrow(/forbidden character U\+FFFD/);
    expect(refused(() => keyFromRawPath("u1/%EF%BF%BC.json"))).toBe(false);
  });
});
