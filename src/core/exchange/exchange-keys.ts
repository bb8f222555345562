/**
 * @module
 * The key set `GET /exchange/keys` answers: the public halves of `EXPORT_SIGNING_KEY` (a
 * peer checks our signed manifests with it) and `EXCHANGE_DECRYPTION_KEY` (a peer seals
 * packages for us with it). Only public members are copied, by name, so no private member
 * can pass; a shared-secret (`oct`) signing key has no public half and is left out.
 */
import { calculateJwkThumbprint, type JWK } from "jose";
import { algorithmOf, type ExchangeJwk } from "./package/signature.ts";
import type { OpeningKey } from "./sealed/sealing-keys.ts";

/** A JWKS (RFC 7517 §5). */
export interface ExchangeKeySet {
  /** The public keys, each with `kid`, `alg` and `use`. */
  keys: ExchangeJwk[];
}

const PUBLIC_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ["kty", "crv", "x", "y"],
  OKP: ["kty", "crv", "x"],
  RSA: ["kty", "n", "e"],
};

/** The public members of an asymmetric JWK, or undefined for a key with no public half. */
function publicPart(jwk: ExchangeJwk): JWK | undefined {
  const members = PUBLIC_MEMBERS[jwk.kty ?? ""];
  if (members === undefined) return undefined;
  const source = jwk as Record<string, unknown>;
  return Object.fromEntries(members.filter((name) => typeof source[name] === "string").map((name) => [name, source[name]])) as JWK;
}

/**
 * The JWKS of the exchange's public keys: the signing key's public half (`use: "sig"`, its
 * `kid` or thumbprint, as manifests name it) and the decryption key's (`use: "enc"`, `kid` its
 * RFC 7638 thumbprint, which sealed packages name).
 */
export async function exchangeKeySet(keys: { signingKey?: ExchangeJwk | undefined; openingKey?: OpeningKey | undefined }): Promise<ExchangeKeySet> {
  const out: ExchangeJwk[] = [];
  if (keys.signingKey !== undefined) {
    const signing = publicPart(keys.signingKey);
    if (signing !== undefined) {
      const kid = keys.signingKey.kid ?? await calculateJwkThumbprint(signing);
      out.push({ ...signing, kid, alg: algorithmOf(keys.signingKey), use: "sig" });
    }
  }
  if (keys.openingKey !== undefined) {
    out.push({ ...publicPart(keys.openingKey.jwk)!, kid: keys.openingKey.thumbprint, alg: keys.openingKey.algorithm, use: "enc" });
  }
  return { keys: out };
}
