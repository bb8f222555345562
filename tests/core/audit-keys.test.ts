/**
 * The start-up check of the audit keys (checkAuditKeys): a key that passes the configuration's
 * shape check but that the service could not sign or verify with stops the start, naming the
 * variable, instead of failing every audit append and admin request with a 500.
 */
import { describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair } from "jose";
import { checkAuditKeys } from "../../src/core/audit/signing-keys.ts";
import { ConfigError } from "../../src/core/config/mod.ts";

const brokenRsa = JSON.stringify({ kty: "RSA", n: "AA", e: "AQAB", d: "AA", p: "AA", q: "AA", dp: "AA", dq: "AA", qi: "AA" });

describe("checkAuditKeys", () => {
  it("passes a usable signing key and verify keys, and nothing configured", async () => {
    const signing = await generateKeyPair("ES256", { extractable: true });
    const older = await generateKeyPair("EdDSA", { extractable: true });
    await expect(checkAuditKeys({})).resolves.toBeUndefined();
    await expect(checkAuditKeys({
      auditSigningKey: JSON.stringify(await exportJWK(signing.privateKey)),
      auditVerifyKeys: JSON.stringify({ keys: [await exportJWK(older.publicKey)] }),
    })).resolves.toBeUndefined();
    // Every kind of verify key a lab may keep from a rotation passes the check of a signature.
    const kinds = await Promise.all(["ES256", "ES384", "ES512", "RS256", "PS384", "EdDSA"].map(async (alg) => ({
      ...(await exportJWK((await generateKeyPair(alg, { extractable: true })).publicKey)),
      alg,
    })));
    await expect(checkAuditKeys({ auditVerifyKeys: JSON.stringify(kinds) })).resolves.toBeUndefined();
  });

  it("refuses key material that does not import, naming the variable", async () => {
    const signing = await checkAuditKeys({ auditSigningKey: brokenRsa }).catch((err: unknown) => err);
    expect(signing).toBeInstanceOf(ConfigError);
    expect((signing as ConfigError).problems).toEqual([expect.stringMatching(/^AUDIT_SIGNING_KEY: /)]);
    // An EC point off the curve: Node and Bun refuse it on import, Deno only when it verifies.
    const { publicKey } = await generateKeyPair("ES256", { extractable: true });
    const point = await exportJWK(publicKey);
    const offCurve = await checkAuditKeys({ auditVerifyKeys: JSON.stringify([{ ...point, y: point.x }]) }).catch((err: unknown) => err);
    expect(offCurve).toBeInstanceOf(ConfigError);
    expect((offCurve as ConfigError).problems).toEqual([expect.stringMatching(/^AUDIT_VERIFY_KEYS: /)]);
    // A key type jose does not know: refused on every runtime.
    const verifying = await checkAuditKeys({ auditVerifyKeys: JSON.stringify([{ kty: "XYZ", k: "AA" }]) }).catch((err: unknown) => err);
    expect(verifying).toBeInstanceOf(ConfigError);
    expect((verifying as ConfigError).problems).toEqual([expect.stringMatching(/^AUDIT_VERIFY_KEYS: /)]);
  });
});
