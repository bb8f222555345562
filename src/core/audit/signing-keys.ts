/**
 * @module
 * The audit keys the configuration names: `AUDIT_SIGNING_KEY` signs heads, its public half and
 * `AUDIT_VERIFY_KEYS` verify them. Keys are imported once, on first use.
 */
import type { HeadSigner } from "./chain.ts";
import { type AuditJwk, auditHeadSigner } from "./head-signature.ts";

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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${name}: not JSON (expected a JWK, an array of JWKs or a JWKS)`);
  }
  const list: unknown[] = Array.isArray(value)
    ? value
    : value !== null && typeof value === "object" && "keys" in value && Array.isArray(value.keys)
    ? value.keys
    : [value];
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
  return {
    signer: signingText === undefined ? undefined : { sign: async (payload) => (await load()).sign(payload) },
    publicKeys: async () => [...(signingText === undefined ? [] : [(await load()).publicKey]), ...verify],
  };
}
