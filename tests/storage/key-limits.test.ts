/**
 * Issue 13 item 2: every key the rules accept fits every backend's key limit, and a longer
 * one is a 400 that names the limit. The backends prove the fit by storing the longest keys
 * (suite.ts); this checks the arithmetic against the limits their test doubles do not enforce
 * (s3rver has no 1024-byte cap).
 */
import { describe, expect, it } from "vitest";
import { keyFromRawPath, MAX_KEY_BYTES, storageKeys } from "../../src/core/storage/keys.ts";
import { ServiceError } from "../../src/core/errors.ts";
import { statusOf } from "../../src/core/http/errors.ts";
import { longestKeys } from "./suite.ts";

const bytes = (text: string) => new TextEncoder().encode(text).length;
const S3_KEY_BYTES = 1024; // also R2's
const CLOUDFLARE_KV_KEY_BYTES = 512;
// The store prefixes of STORAGE=s3 (src/adapters/s3/s3-ports.ts).
const S3_PREFIXES = ["data/", "audit/", "images/", "users/"];

describe("key limits", () => {
  it("a data key of 1000 bytes passes; 1001 bytes is a 400 naming the limit", () => {
    // Segments of 250 bytes and a document name making up the rest: only the total is too long.
    const at = (total: number) => `u1/C/${"b".repeat(250)}/${"c".repeat(250)}/${"d".repeat(250)}/${"e".repeat(total - 758 - 5)}.json`;
    expect(bytes(keyFromRawPath(at(1000)))).toBe(1000);
    let refused: unknown;
    try {
      keyFromRawPath(at(1001));
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ServiceError);
    expect(refused).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringContaining(`${MAX_KEY_BYTES} bytes`) });
    expect(statusOf(refused as ServiceError)).toBe(400);
  });

  it("the longest keys fit S3 and R2 with any store prefix, and the longest user id fits Cloudflare KV", () => {
    const longest = Math.max(...Object.values(longestKeys()).map(bytes));
    expect(longest).toBe(MAX_KEY_BYTES);
    for (const prefix of S3_PREFIXES) expect(bytes(prefix) + longest).toBeLessThanOrEqual(S3_KEY_BYTES);
    expect(bytes(storageKeys.user(`${"é".repeat(127)}u`))).toBeLessThanOrEqual(CLOUDFLARE_KV_KEY_BYTES);
  });
});
