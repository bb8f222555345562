/**
 * @module
 * The signer and the verification keys `EXPORT_SIGNING_KEY`, `EXPORT_VERIFY_KEYS` and
 * `EXPORT_REQUIRE_SIGNATURE` configure (docs/exchange.md#signatures): read the same way by the
 * `export`/`import` commands and the exchange worker, so a package signs and verifies alike on both.
 */
import { importJWK, type JWK } from "jose";
import { ConfigError } from "../config/mod.ts";
import { jwkListOf } from "../config/variables.ts";
import { type ExchangeJwk, type ManifestSigner, publicJwkOf, type SignatureVerification, signerFromJwk } from "./package/signature.ts";

/** The exchange's signature settings as text (the variables' values). */
export interface SignatureSettings {
  /** `EXPORT_SIGNING_KEY`: a private JWK as JSON. */
  signingKey?: string | undefined;
  /** `EXPORT_VERIFY_KEYS`: a JWK, an array of JWKs or a JWKS as JSON. */
  verifyKeys?: string | undefined;
  /** `EXPORT_REQUIRE_SIGNATURE`, or the command's `--require-signature`. */
  requireSignature?: boolean | undefined;
}

/** What exports sign with and imports verify against. */
export interface ExchangeSignatures {
  /** Signs manifests and confirmation exports; absent when no signing key is set. */
  signer?: ManifestSigner;
  /** The signing key's public half and the verify keys; whether a valid signature is required. */
  verification: SignatureVerification;
}

function parseJwkList(text: string, name: string): ExchangeJwk[] {
  const list = jwkListOf(text);
  if (list === undefined) throw new ConfigError([`${name}: not JSON (expected a JWK, an array of JWKs or a JWKS)`]);
  if (!list.every((key: unknown) => key !== null && typeof key === "object" && typeof (key as { kty?: unknown }).kty === "string")) {
    throw new ConfigError([`${name}: every key needs a "kty"`]);
  }
  return list as ExchangeJwk[];
}

/**
 * The signer of `EXPORT_SIGNING_KEY`, checked before any work: one private key jose can sign
 * with, else a `ConfigError`; and its public half, which verifies what it signs.
 */
async function usableSigner(list: ExchangeJwk[]): Promise<{ signer: ManifestSigner; publicJwk: ExchangeJwk }> {
  if (list.length !== 1) throw new ConfigError([`EXPORT_SIGNING_KEY: one private JWK expected, found ${list.length}`]);
  const jwk = list[0]!;
  // A private key holds "d"; a symmetric one (oct, HS256) is its "k".
  if (!("d" in jwk) && !(jwk.kty === "oct" && "k" in jwk)) throw new ConfigError(["EXPORT_SIGNING_KEY: not a private key (it has no \"d\")"]);
  try {
    const signer = await signerFromJwk(jwk);
    const imported = await importJWK(signer.privateKey as JWK, signer.algorithm);
    const publicJwk = publicJwkOf(signer.privateKey as ExchangeJwk);
    // The key imported for the check signs too (a shared secret comes back as bytes: it stays a JWK).
    return { signer: imported instanceof CryptoKey ? { ...signer, privateKey: imported } : signer, publicJwk };
  } catch (err) {
    throw new ConfigError([`EXPORT_SIGNING_KEY: ${err instanceof Error ? err.message : String(err)}`]);
  }
}

/**
 * The signer and the verification keys the settings configure.
 *
 * @throws {ConfigError} when a key cannot be read or cannot sign.
 */
export async function exchangeSignatures(settings: SignatureSettings): Promise<ExchangeSignatures> {
  const keys: ExchangeJwk[] = [];
  let signer: ManifestSigner | undefined;
  if (settings.signingKey !== undefined && settings.signingKey !== "") {
    const usable = await usableSigner(parseJwkList(settings.signingKey, "EXPORT_SIGNING_KEY"));
    signer = usable.signer;
    keys.push(usable.publicJwk);
  }
  if (settings.verifyKeys !== undefined && settings.verifyKeys !== "") keys.push(...parseJwkList(settings.verifyKeys, "EXPORT_VERIFY_KEYS"));
  return { ...(signer !== undefined ? { signer } : {}), verification: { publicKeys: keys, requireSignature: settings.requireSignature === true } };
}
