/**
 * @module
 * Signed manifests (docs/exchange.md#signatures): the manifest hashes prove integrity only,
 * since anyone can recompute them, so a service with a signing key also signs the manifest
 * hash with a detached JWS (RFC 7515 appendix F: `header..signature`, payload the manifest
 * hash as text). Import verifies it against the configured public keys.
 */
import { base64url, calculateJwkThumbprint, CompactSign, compactVerify, createLocalJWKSet, importJWK, type JWK } from "jose";
import { messageOf } from "../exchange-error.ts";
import type { ManifestSignature, SignatureValidity } from "../shapes.ts";

/** A JSON Web Key as configured (`kid` and `alg` optional). */
export type ExchangeJwk = JsonWebKey & { kid?: string | undefined; alg?: string | undefined };

/** The key exports are signed with. */
export interface ManifestSigner {
  /** JWS algorithm, e.g. `ES256`, `EdDSA`, `RS256`. */
  algorithm: string;
  /** The key id written as `kid` and `signature.keyId`. */
  keyId: string;
  /** The private key (or, for HS256, the shared secret) as a CryptoKey or JWK. */
  privateKey: CryptoKey | ExchangeJwk;
}

/** How imports check signatures. */
export interface SignatureVerification {
  /** Public JWKs (each with a `kid`) that may have signed; for HS* the shared secret. */
  publicKeys: readonly ExchangeJwk[];
  /** Refuse packages that are unsigned or whose signature does not verify. */
  requireSignature?: boolean | undefined;
}

const encoder = new TextEncoder();
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth"] as const;

/** The JWS algorithm a key is used with: its `alg`, else the usual one for its type and curve. */
export function algorithmOf(jwk: ExchangeJwk): string {
  if (jwk.alg !== undefined) return jwk.alg;
  if (jwk.kty === "EC") return jwk.crv === "P-384" ? "ES384" : jwk.crv === "P-521" ? "ES512" : "ES256";
  if (jwk.kty === "OKP") return "EdDSA";
  if (jwk.kty === "oct") return "HS256";
  return "RS256";
}

/** The public half of a JWK (a symmetric key is its own verification key). */
export function publicJwkOf(jwk: ExchangeJwk): ExchangeJwk {
  if (jwk.kty === "oct") return { ...jwk };
  const copy: Record<string, unknown> = { ...jwk };
  for (const member of PRIVATE_MEMBERS) delete copy[member];
  delete copy.key_ops;
  return copy as ExchangeJwk;
}

/**
 * A signer from a private JWK (e.g. the `EXPORT_SIGNING_KEY` variable): `alg` from the key or
 * its type, `kid` from the key or its RFC 7638 thumbprint.
 */
export async function signerFromJwk(jwk: ExchangeJwk): Promise<ManifestSigner> {
  const algorithm = algorithmOf(jwk);
  const keyId = await keyIdOf(jwk);
  return { algorithm, keyId, privateKey: { ...jwk, alg: algorithm, kid: keyId } };
}

/** A key's id: its `kid`, or else its RFC 7638 thumbprint (the keyId a signer without one writes). */
const keyIdOf = async (jwk: ExchangeJwk): Promise<string> => jwk.kid ?? await calculateJwkThumbprint(publicJwkOf(jwk) as JWK);

const isJwk = (key: CryptoKey | ExchangeJwk): key is ExchangeJwk => "kty" in key;

/** Signs a manifest hash: the `signature` member of `FORENSIC_MANIFEST.json`. */
export async function signManifestHash(manifestHash: string, signer: ManifestSigner): Promise<ManifestSignature> {
  const key = isJwk(signer.privateKey) ? await importJWK(signer.privateKey as JWK, signer.algorithm) : signer.privateKey;
  const jws = await new CompactSign(encoder.encode(manifestHash))
    .setProtectedHeader({ alg: signer.algorithm, kid: signer.keyId })
    .sign(key);
  const [header, , signature] = jws.split(".");
  return { algorithm: signer.algorithm, keyId: signer.keyId, value: `${header}..${signature}` };
}

/** What {@link verifyManifestSignature} found. */
export interface SignatureCheck {
  /** true, false, or `"unsigned"` when the manifest has no signature. */
  valid: SignatureValidity;
  /** Why it is not valid, when it is not. */
  reason?: string | undefined;
}

/** Verifies a manifest's signature over its manifest hash against the configured keys. */
export async function verifyManifestSignature(
  manifestHash: string,
  signature: ManifestSignature | undefined,
  verification: SignatureVerification | undefined,
): Promise<SignatureCheck> {
  if (signature === undefined) return { valid: "unsigned" };
  const keys = verification?.publicKeys ?? [];
  if (keys.length === 0) return { valid: false, reason: "the manifest is signed but no public key is configured to verify it" };
  const parts = signature.value.split(".");
  if (parts.length !== 3 || parts[1] !== "") return { valid: false, reason: "the signature is not a detached compact JWS" };
  try {
    // A key without a kid is known by its RFC 7638 thumbprint, the keyId a signer without one writes.
    // A key that has no thumbprint (not a key jose reads) is left out: it verifies nothing, and the others still do.
    const named = await Promise.all(keys.map((key) => keyIdOf(key).then((kid) => ({ ...key, kid }), () => undefined)));
    const jwks = createLocalJWKSet({ keys: named.filter((key) => key !== undefined) as JWK[] });
    const { protectedHeader } = await compactVerify(`${parts[0]}.${base64url.encode(manifestHash)}.${parts[2]}`, jwks);
    if (protectedHeader.kid !== signature.keyId || protectedHeader.alg !== signature.algorithm) {
      return { valid: false, reason: "the signature's header does not match its keyId and algorithm" };
    }
    return { valid: true };
  } catch (err) {
    return { valid: false, reason: `the signature does not verify: ${messageOf(err)}` };
  }
}
