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
import type { Review, ReviewSignature } from "../schemas/review.ts";

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

/**
 * Why a signature that verifies is still not a signature of `review` (undefined when it is): it
 * names another review, signer, file, record or version than the review pinned, or it is a
 * second signature of one file (`index`: its place among the review's signatures). A signature
 * copied from another review into this one's stored record is caught here.
 */
export function signatureBindingProblem(review: Review, signature: ReviewSignature, expectedKey: string, index: number): string | undefined {
  if (signature.reviewId !== review.id) return `the signature belongs to review ${signature.reviewId}, not this one`;
  if (signature.signer !== review.reviewer) return `the signature is by ${signature.signer}, not the review's reviewer`;
  const file = review.files.find((each) => each.fileId === signature.fileId);
  if (file === undefined) return `the signature is of file ${signature.fileId}, which is not in the review`;
  if (signature.record.key !== expectedKey) return `the signature is over ${signature.record.key}, not this file's annotations`;
  if (signature.record.sha256 !== file.sha256 || signature.record.version !== file.version) return "the signature is over another version than the one the review pinned";
  if (review.signatures.findIndex((each) => each.fileId === signature.fileId) !== index) return "a second signature of a file that is signed already";
  return undefined;
}
