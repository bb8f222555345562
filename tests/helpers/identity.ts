import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { startHttpServer } from "./http-server.ts";

export const ISSUER = "https://idp.lab.example";
export const AUDIENCE = "forensic-annotation";

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

/** A local identity provider: a JWKS endpoint and a token signer, with key rotation. */
export async function startIdentityProvider(options: { cacheControl?: string } = {}) {
  let keys: { kid: string; pair: KeyPair; alg: string }[] = [{ kid: "k1", pair: await generateKeyPair("RS256"), alg: "RS256" }];
  let cacheControl = options.cacheControl ?? "public, max-age=300";
  let fetches = 0;
  const server = await startHttpServer(async (_req, _body, res) => {
    fetches++;
    const jwks = { keys: await Promise.all(keys.map(async ({ kid, pair, alg }) => ({ ...(await exportJWK(pair.publicKey)), kid, alg, use: "sig" }))) };
    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": cacheControl });
    res.end(JSON.stringify(jwks));
  });
  return {
    jwksUrl: `${server.url}/.well-known/jwks.json`,
    get fetches() {
      return fetches;
    },
    setCacheControl: (value: string) => (cacheControl = value),
    /** Replaces the published keys with a new one (new key id). */
    async rotate(kid: string, alg = "ES256") {
      keys = [{ kid, pair: await generateKeyPair(alg), alg }];
    },
    /** A token for `sub`, signed with the current key unless told otherwise. */
    async token(sub: string, claims: JWTPayload = {}, sign: { kid?: string; pair?: KeyPair; alg?: string; now?: Date } = {}) {
      const current = keys[0]!;
      const now = Math.floor((sign.now ?? new Date("2026-11-22T12:00:00Z")).getTime() / 1000);
      const payload = { email: `${sub}@lab.example`, sub, iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 3600, ...claims };
      return await new SignJWT(payload)
        .setProtectedHeader({ alg: sign.alg ?? current.alg, kid: sign.kid ?? current.kid })
        .sign((sign.pair ?? current.pair).privateKey);
    },
    close: server.close,
  };
}

/** base64url of a JSON value. */
export const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");
