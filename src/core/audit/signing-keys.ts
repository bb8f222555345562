/**
 * @module
 * The audit keys the configuration names: `AUDIT_SIGNING_KEY` signs heads, its public half and
 * `AUDIT_VERIFY_KEYS` verify them. Keys are imported once, on first use.
 */
import { importJWK, type JWK } from "jose";
import { ConfigError } from "../config/config-error.ts";
import { jwkListOf } from "../config/variables.ts";
import { HEAD_FORMAT, type HeadFacts, type HeadSigner } from "./chain.ts";
import { algorithmOf, type AuditJwk, auditHeadSigner, checkHeadSignature, type HeadSignatureCheck, headSignatureCheck, publicAuditJwk } from "./head-signature.ts";
import { canonicalJson } from "../encoding/canonical-json.ts";

/** The configuration the audit keys come from (JSON text, as in the environment). */
export interface AuditKeyConfig {
  /** `AUDIT_SIGNING_KEY`: a private JWK. */
  auditSigningKey?: string | undefined;
  /** `AUDIT_VERIFY_KEYS`: a JWK, an array of JWKs or a JWKS. */
  auditVerifyKeys?: string | undefined;
}

/** The signer (when a key is configured) and the keys that verify heads. */
export interface AuditKeys {
  /** Signs heads; undefined without `AUDIT_SIGNING_KEY`. */
  signer: HeadSigner | undefined;
  /** The signing key's public half and `AUDIT_VERIFY_KEYS`. */
  publicKeys(): Promise<AuditJwk[]>;
}

/** The JWKs of a JWK, an array of JWKs or a JWKS given as JSON text; throws naming `name` otherwise. */
export function parseAuditJwks(text: string, name: string): AuditJwk[] {
  const list = jwkListOf(text);
  if (list === undefined) throw new Error(`${name}: not JSON (expected a JWK, an array of JWKs or a JWKS)`);
  if (!list.every((key) => key !== null && typeof key === "object" && typeof (key as { kty?: unknown }).kty === "string")) {
    throw new Error(`${name}: every key needs a "kty"`);
  }
  return list as AuditJwk[];
}

/** The audit keys of a configuration. */
export function auditKeys(config: AuditKeyConfig): AuditKeys {
  const signingText = config.auditSigningKey;
  let loaded: ReturnType<typeof auditHeadSigner> | undefined;
  const load = () => (loaded ??= auditHeadSigner(parseAuditJwks(signingText!, "AUDIT_SIGNING_KEY")[0]!));
  const verify = config.auditVerifyKeys === undefined ? [] : parseAuditJwks(config.auditVerifyKeys, "AUDIT_VERIFY_KEYS");
  const publicKeys = async () => [...(signingText === undefined ? [] : [(await load()).publicKey]), ...verify];
  let check: Promise<HeadSignatureCheck> | undefined;
  const holds = async (signature: string, facts: HeadFacts) => {
    const checkHead = await (check ??= publicKeys().then(headSignatureCheck));
    return (await checkHead(signature, facts)).status === "valid";
  };
  return {
    signer: signingText === undefined ? undefined : { sign: async (payload) => (await load()).sign(payload), holds },
    publicKeys,
  };
}

/** What a start signs and verifies to prove `AUDIT_SIGNING_KEY` works: a head of no user. */
const PROBE_FACTS: HeadFacts = {
  format: HEAD_FORMAT,
  userId: "",
  seq: 0,
  hash: "0".repeat(64),
  day: "1970-01-01",
  index: 0,
  firstDay: "1970-01-01",
  updatedAt: "1970-01-01T00:00:00.000Z",
};

const reasonOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** SHA-2 sizes by the digits a JWS algorithm ends with (ES256, RS384, PS512). */
const HASHES: Record<string, string> = { "256": "SHA-256", "384": "SHA-384", "512": "SHA-512" };
const EC_SIGNATURE_BYTES: Record<string, number> = { "P-256": 64, "P-384": 96, "P-521": 132 };

/**
 * Imports a verify key and checks one signature of the right size with it, which a usable key
 * answers false. Deno's import takes EC points off the curve and fails only when verifying: such
 * a key would verify nothing, so its heads would all read as `signature invalid`.
 */
async function probeVerifyKey(jwk: AuditJwk): Promise<void> {
  const alg = algorithmOf(jwk);
  const imported: unknown = await importJWK(publicAuditJwk(jwk) as JWK, alg);
  // A symmetric key (refused for audit heads by the configuration) has nothing more to check.
  if (imported instanceof Uint8Array) return;
  const key = imported as CryptoKey;
  const algorithm = key.algorithm as { name: string; namedCurve?: string; modulusLength?: number };
  const hash = HASHES[alg.slice(-3)] ?? "SHA-256";
  const params = algorithm.name === "ECDSA"
    ? { name: "ECDSA", hash }
    : algorithm.name === "RSA-PSS"
    ? { name: "RSA-PSS", saltLength: Number(alg.slice(-3)) / 8 }
    : { name: algorithm.name };
  const size = algorithm.name === "ECDSA"
    ? EC_SIGNATURE_BYTES[algorithm.namedCurve ?? ""] ?? 64
    : algorithm.modulusLength !== undefined
    ? algorithm.modulusLength / 8
    : 64;
  await crypto.subtle.verify(params, key, new Uint8Array(size), new Uint8Array(8));
}

/**
 * Checks the audit keys before anything is served, so a key the service cannot use stops the
 * start instead of failing every audit append: `AUDIT_SIGNING_KEY` must sign a head that its own
 * public half verifies, each key of `AUDIT_VERIFY_KEYS` must import and check a signature. A `ConfigError` naming the
 * variable otherwise.
 */
export async function checkAuditKeys(config: AuditKeyConfig): Promise<void> {
  const problems: string[] = [];
  if (config.auditSigningKey !== undefined) {
    try {
      const signer = await auditHeadSigner(parseAuditJwks(config.auditSigningKey, "AUDIT_SIGNING_KEY")[0]!);
      const checked = await checkHeadSignature(await signer.sign(canonicalJson(PROBE_FACTS)), PROBE_FACTS, [signer.publicKey]);
      if (checked.status !== "valid") problems.push(`AUDIT_SIGNING_KEY: a head it signs does not verify with its public half (${checked.reason ?? checked.status})`);
    } catch (err) {
      problems.push(`AUDIT_SIGNING_KEY: ${reasonOf(err).replace(/^AUDIT_SIGNING_KEY: /, "")}`);
    }
  }
  if (config.auditVerifyKeys !== undefined) {
    try {
      for (const key of parseAuditJwks(config.auditVerifyKeys, "AUDIT_VERIFY_KEYS")) await probeVerifyKey(key);
    } catch (err) {
      problems.push(`AUDIT_VERIFY_KEYS: ${reasonOf(err).replace(/^AUDIT_VERIFY_KEYS: /, "")}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
}
