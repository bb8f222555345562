/**
 * @module
 * Electronic signatures of reviews (docs/review.md#electronic-signatures): a compact JWS by
 * `AUDIT_SIGNING_KEY` whose payload is the canonical JSON (RFC 8785) of every other member of
 * the signature, verifiable by anyone with the published keys (`GET /review/keys`).
 */
import { calculateJwkThumbprint, compactVerify, createLocalJWKSet, type JWK } from "jose";
import { canonicalJson } from "../encoding/canonical-json.ts";
import { type AuditJwk, publicAuditJwk, algorithmOf } from "../audit/head-signature.ts";
import type { AuditKeys } from "../audit/signing-keys.ts";
import type { ReviewSignature } from "../schemas/review.ts";

/** A signature before it is signed: every member but `jws`. */
export type SignatureFacts = Omit<ReviewSignature, "jws">;

const decoder = new TextDecoder();

/** Signs `facts` with the audit signing key; undefined when `AUDIT_SIGNING_KEY` is not configured. */
export async function signReview(facts: SignatureFacts, keys: AuditKeys): Promise<ReviewSignature | undefined> {
  if (keys.signer === undefined) return undefined;
  const jws = await keys.signer.sign(canonicalJson(facts));
  return { ...facts, jws };
}

/**
 * The JWKS anyone verifies signatures (and signed audit heads) with: the public halves of
 * `AUDIT_SIGNING_KEY` and `AUDIT_VERIFY_KEYS`, each with its `kid` (its thumbprint when the
 * configuration gave none, as the signer names it) and `alg`.
 */
export async function publishedKeys(keys: AuditKeys): Promise<{ keys: AuditJwk[] }> {
  // A shared secret (oct) among AUDIT_VERIFY_KEYS verifies nothing a stranger could check, and publishing it would give it away.
  const named = await Promise.all((await keys.publicKeys()).filter((key) => key.kty !== "oct").map(async (key) => {
    const pub = publicAuditJwk(key);
    return { ...pub, alg: algorithmOf(key), kid: key.kid ?? await calculateJwkThumbprint(pub as JWK) };
  }));
  return { keys: named };
}

/** Whether a signature verifies against `jwks` and its payload is exactly its other members. */
export async function checkReviewSignature(signature: ReviewSignature, jwks: { keys: AuditJwk[] }): Promise<{ valid: boolean; reason?: string }> {
  const { jws, ...facts } = signature;
  try {
    const { payload } = await compactVerify(jws, createLocalJWKSet({ keys: jwks.keys as JWK[] }));
    if (decoder.decode(payload) !== canonicalJson(facts)) return { valid: false, reason: "the signature is over other facts than the stored ones" };
    return { valid: true };
  } catch (err) {
    return { valid: false, reason: `the signature does not verify: ${err instanceof Error ? err.message : String(err)}` };
  }
}
