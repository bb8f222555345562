import { describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair } from "jose";
import { exportCaseZip, type ExchangeJwk, importCase, previewCaseImport, publicJwkOf, signerFromJwk } from "../../src/core/exchange/mod.ts";
import { signManifestHash, verifyManifestSignature } from "../../src/core/exchange/package/signature.ts";
import { ANALYST, CASE, entries, REVIEWER, rezip, seedCase, streamBytes, text, utf8 } from "./exchange-fixtures.ts";

async function privateJwk(alg: "ES256" | "EdDSA" | "RS256"): Promise<ExchangeJwk> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}) });
  return (await exportJWK(privateKey)) as ExchangeJwk;
}

describe("signed manifests (EXCHANGE.md Signatures)", () => {
  it("signs the manifest hash with a detached JWS that import verifies", async () => {
    const { store } = await seedCase();
    const signer = await signerFromJwk({ ...(await privateJwk("ES256")), kid: "lab-2026" });
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE, { signer }));
    const manifest = JSON.parse(text(entries(zip)["FORENSIC_MANIFEST.json"]));
    expect(manifest.signature).toMatchObject({ algorithm: "ES256", keyId: "lab-2026", value: expect.stringMatching(/^[\w-]+\.\.[\w-]+$/) });
    expect(JSON.parse(atob(manifest.signature.value.split(".")[0].replace(/-/g, "+").replace(/_/g, "/")))).toEqual({ alg: "ES256", kid: "lab-2026" });

    const publicKeys = [publicJwkOf(signer.privateKey as ExchangeJwk)];
    expect(publicKeys[0]).not.toHaveProperty("d");
    const result = await importCase(store, zip, REVIEWER, { verification: { publicKeys, requireSignature: true } });
    expect(result).toMatchObject({ success: true, signatureValid: true });
    expect(result.warnings).toBeUndefined();
  });

  it("a key without a kid signs under its RFC 7638 thumbprint, and its public half without a kid verifies it", async () => {
    const { store } = await seedCase();
    const jwk = await privateJwk("ES256");
    expect(jwk).not.toHaveProperty("kid");
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE, { signer: await signerFromJwk(jwk) }));
    const publicKeys = [publicJwkOf(jwk)];
    expect(publicKeys[0]).not.toHaveProperty("kid");
    const result = await importCase(store, zip, REVIEWER, { verification: { publicKeys, requireSignature: true } });
    expect(result).toMatchObject({ success: true, signatureValid: true });
  });

  it("a verification key jose cannot read is left out: the others still verify", async () => {
    const { store } = await seedCase();
    const jwk = await privateJwk("ES256");
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE, { signer: await signerFromJwk(jwk) }));
    const publicKeys = [{ kty: "EC" } as ExchangeJwk, publicJwkOf(jwk)];
    const result = await importCase(store, zip, REVIEWER, { verification: { publicKeys, requireSignature: true } });
    expect(result).toMatchObject({ success: true, signatureValid: true });
  });

  it("reports a signature made with another key as false, and refuses it when signatures are required", async () => {
    const { store } = await seedCase();
    const signer = await signerFromJwk(await privateJwk("EdDSA"));
    expect(signer.algorithm).toBe("EdDSA");
    expect(signer.keyId).toMatch(/^[\w-]{43}$/);
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE, { signer }));
    const other = publicJwkOf({ ...(await privateJwk("EdDSA")), kid: signer.keyId });
    const preview = await previewCaseImport(zip, { verification: { publicKeys: [other] } });
    expect(preview).toMatchObject({ canImport: true, signatureValid: false });
    expect(preview.warnings[0]).toMatch(/^Signature invalid/);
    const required = await importCase(store, zip, REVIEWER, { verification: { publicKeys: [other], requireSignature: true } });
    expect(required).toMatchObject({ success: false, signatureValid: false });
    expect(required.errors?.[0]).toMatch(/^Signature invalid/);
  });

  it("an unsigned package reports 'unsigned' and is refused when signatures are required", async () => {
    const { store } = await seedCase();
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE));
    const result = await importCase(store, zip, REVIEWER, { verification: { publicKeys: [], requireSignature: true } });
    expect(result).toMatchObject({ success: false, signatureValid: "unsigned", errors: ["The package is not signed and signatures are required"] });
  });

  it("a signature moved onto another manifest does not verify", async () => {
    const { store } = await seedCase();
    const signer = await signerFromJwk(await privateJwk("RS256"));
    const keys = { publicKeys: [publicJwkOf(signer.privateKey as ExchangeJwk)] };
    const signature = await signManifestHash("a".repeat(64), signer);
    expect(await verifyManifestSignature("a".repeat(64), signature, keys)).toEqual({ valid: true });
    expect((await verifyManifestSignature("b".repeat(64), signature, keys)).valid).toBe(false);
    expect(await verifyManifestSignature("a".repeat(64), undefined, keys)).toEqual({ valid: "unsigned" });

    // Re-signing a tampered archive's manifest without the key is impossible; editing the signature breaks it.
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE, { signer }));
    const manifest = JSON.parse(text(entries(zip)["FORENSIC_MANIFEST.json"]));
    manifest.signature.value = signature.value;
    const moved = rezip(zip, { "FORENSIC_MANIFEST.json": utf8(JSON.stringify(manifest, null, 2)) });
    expect(await importCase(store, moved, REVIEWER, { verification: keys })).toMatchObject({ success: true, signatureValid: false });
  });
});
