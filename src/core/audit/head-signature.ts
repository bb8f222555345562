/**
 * @module
 * Signed audit heads (docs/storage.md#audit-chain): with `AUDIT_SIGNING_KEY` (a private JWK)
 * every head carries a compact JWS whose payload is the canonical JSON of its facts; the public
 * half, and older keys in `AUDIT_VERIFY_KEYS`, verify it. Web crypto through jose: every runtime.
 */
import { calculateJwkThumbprint, CompactSign, compactVerify, createLocalJWKSet, decodeProtectedHeader, errors, importJWK, type JWK } from "jose";
import { canonicalJson } from "../encoding/canonical-json.ts";
import type { HeadFacts, HeadSigner } from "./chain.ts";

/** A JSON Web Key as configured (`kid` and `alg` optional). */
export type AuditJwk = JsonWebKey & { kid?: string | undefined; alg?: string | undefined };

const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth"] as const;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The JWS algorithm of a key: its `alg`, else the usual one for its type and curve. */
export function algorithmOf(jwk: AuditJwk): string {
  if (jwk.alg !== undefined) return jwk.alg;
  if (jwk.kty === "EC") return jwk.crv === "P-384" ? "ES384" : jwk.crv === "P-521" ? "ES512" : "ES256";
  if (jwk.kty === "OKP") return "EdDSA";
  if (jwk.kty === "oct") return "HS256";
  return "RS256";
}

/** The public half of a JWK (a symmetric key is its own verification key). */
export function publicAuditJwk(jwk: AuditJwk): AuditJwk {
  if (jwk.kty === "oct") return { ...jwk };
  const copy: Record<string, unknown> = { ...jwk };
  for (const member of PRIVATE_MEMBERS) delete copy[member];
  delete copy.key_ops;
  return copy as AuditJwk;
}

/** A head signer from a private JWK: `alg` from the key or its type, `kid` from the key or its RFC 7638 thumbprint. */
export async function auditHeadSigner(jwk: AuditJwk): Promise<HeadSigner & { publicKey: AuditJwk }> {
  const alg = algorithmOf(jwk);
  const kid = jwk.kid ?? await calculateJwkThumbprint(publicAuditJwk(jwk) as JWK);
  const key = await importJWK({ ...jwk, alg } as JWK, alg);
  return {
    publicKey: { ...publicAuditJwk(jwk), alg, kid },
    sign: (payload) => new CompactSign(encoder.encode(payload)).setProtectedHeader({ alg, kid }).sign(key),
  };
}

/** What checking a head's signature found. */
export type HeadSignatureStatus = "valid" | "invalid" | "unsigned" | "unchecked";

/** Checks a head's JWS against keys fixed in advance: see {@link checkHeadSignature}. */
export type HeadSignatureCheck = (signature: string | undefined, facts: HeadFacts) => Promise<{ status: HeadSignatureStatus; reason?: string }>;

/**
 * A checker of head signatures against `keys`, which names and imports them once (an append
 * checks the head another process wrote before it signs over it).
 */
export function headSignatureCheck(keys: readonly AuditJwk[]): HeadSignatureCheck {
  let jwks: ReturnType<typeof createLocalJWKSet> | undefined;
  const keySet = async () => {
    if (jwks !== undefined) return jwks;
    // A key configured without `kid` is named by its thumbprint, as the signer names it.
    const named = await Promise.all(keys.map(async (key) => {
      const pub = publicAuditJwk(key);
      return { ...pub, alg: algorithmOf(key), kid: key.kid ?? await calculateJwkThumbprint(pub as JWK) };
    }));
    return jwks = createLocalJWKSet({ keys: named as JWK[] });
  };
  return async (signature, facts) => {
    if (signature === undefined) return { status: "unsigned" };
    if (keys.length === 0) return { status: "unchecked", reason: "the head is signed but no public key was given to check it" };
    try {
      const { payload } = await compactVerify(signature, await keySet());
      if (decoder.decode(payload) !== canonicalJson(facts)) {
        return { status: "invalid", reason: "the signature is over other head facts than the stored ones" };
      }
      return { status: "valid" };
    } catch (err) {
      // A key this service does not know (a store restored without the keys it was signed with) is said as such, with the way out.
      if (err instanceof errors.JWKSNoMatchingKey) return { status: "invalid", reason: `the head is signed by key ${kidOf(signature)}, not among the keys given: add its public half to AUDIT_VERIFY_KEYS, or use the secrets.json of the service that signed it` };
      return { status: "invalid", reason: `the signature does not verify: ${err instanceof Error ? err.message : String(err)}` };
    }
  };
}

/** The `kid` a compact JWS names, quoted, or "without a kid". */
function kidOf(signature: string): string {
  try {
    const { kid } = decodeProtectedHeader(signature);
    return typeof kid === "string" ? JSON.stringify(kid) : "without a kid";
  } catch {
    return "without a kid";
  }
}

/**
 * Checks a head's JWS against `keys`: `valid` when one verifies it and its payload is the
 * canonical JSON of `facts`; `unchecked` when it is signed but no key was given.
 */
export function checkHeadSignature(
  signature: string | undefined,
  facts: HeadFacts,
  keys: readonly AuditJwk[],
): Promise<{ status: HeadSignatureStatus; reason?: string }> {
  return headSignatureCheck(keys)(signature, facts);
}
