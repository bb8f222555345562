/**
 * @module
 * The seal of a confirmation (docs/review.md#what-the-owner-sees): a signature names the record
 * it signed by key and hash, which a report cannot check from the annotations it is given. So a
 * `verified` signature's confirmation also carries `seal`, a compact JWS by `AUDIT_SIGNING_KEY`
 * over that signature and the results a report prints from the confirmed annotations. The PDF
 * worker prints a confirmation as electronically signed only when the seal verifies and the
 * annotations it prints are the sealed ones: a genuine signature pasted into other results,
 * another case's or another owner's, prints unsigned.
 */
import { compactVerify, createLocalJWKSet, type JWK } from "jose";
import { canonicalJson } from "../encoding/canonical-json.ts";
import { sha256Hex } from "../encoding/digest.ts";
import type { AuditJwk } from "../audit/head-signature.ts";
import type { AuditKeys } from "../audit/signing-keys.ts";

/** The fields of annotations a report prints as the examination's result (docs/report.md). */
export const SEALED_FIELDS: readonly string[] = [
  "leftCase",
  "rightCase",
  "leftItem",
  "rightItem",
  "supportLevel",
  "classType",
  "customClass",
  "classNote",
  "hasSubclass",
  "additionalNotes",
  "indexType",
  "indexNumber",
  "indexColor",
  "boxAnnotations",
];

const decoder = new TextDecoder();

/** An empty value and an absent one print alike (`hasSubclass: false` as none), so a client that fills in defaults keeps the seal. */
function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === "" || value === false || (Array.isArray(value) && value.length === 0);
}

/** The hex SHA-256 of the canonical JSON of the sealed fields of `annotations`. */
async function printedDigest(annotations: Record<string, unknown>): Promise<string> {
  const printed = Object.fromEntries(SEALED_FIELDS.filter((field) => !isEmpty(annotations[field])).map((field) => [field, annotations[field]]));
  return await sha256Hex(new TextEncoder().encode(canonicalJson(printed)));
}

/** What a seal signs: the signature's JWS and the printed results, each by its SHA-256, named as a seal (the same key signs audit heads and signatures). */
async function sealFacts(signatureJws: string, annotations: Record<string, unknown>): Promise<string> {
  return canonicalJson({ type: "confirmation-seal", signature: await sha256Hex(new TextEncoder().encode(signatureJws)), printed: await printedDigest(annotations) });
}

/** Seals `annotations` (the confirmed ones) to the signature whose JWS is `signatureJws`; undefined without a signing key. */
export async function sealConfirmation(signatureJws: string, annotations: Record<string, unknown>, keys: AuditKeys): Promise<string | undefined> {
  if (keys.signer === undefined) return undefined;
  return await keys.signer.sign(await sealFacts(signatureJws, annotations));
}

/** Whether `seal` verifies against `jwks` and seals exactly the signature `signatureJws` and the printed results of `annotations`. */
export async function sealHolds(seal: unknown, signatureJws: string, annotations: Record<string, unknown>, jwks: { keys: AuditJwk[] }): Promise<boolean> {
  if (typeof seal !== "string" || seal.length > 4096) return false;
  try {
    const { payload } = await compactVerify(seal, createLocalJWKSet({ keys: jwks.keys as JWK[] }));
    return decoder.decode(payload) === await sealFacts(signatureJws, annotations);
  } catch {
    // Not a JWS, or not by these keys, or over values canonical JSON refuses: no seal.
    return false;
  }
}
