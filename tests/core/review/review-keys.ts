/**
 * What every in-process review test starts from: a local identity provider, and an ES256
 * `AUDIT_SIGNING_KEY` (as a private JWK in JSON) the service signs reviews with. Call it inside
 * a `describe`: the provider starts before its tests and stops after them.
 */
import { afterAll, beforeAll } from "vitest";
import { exportJWK, generateKeyPair } from "jose";
import { startIdentityProvider } from "../../helpers/identity.ts";

export interface ReviewKeys {
  idp: Awaited<ReturnType<typeof startIdentityProvider>>;
  signingKey: string;
}

/** The provider and the signing key, filled in before the describe block's tests run. */
export function reviewKeys(): ReviewKeys {
  const keys = {} as ReviewKeys;
  beforeAll(async () => {
    keys.idp = await startIdentityProvider();
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    keys.signingKey = JSON.stringify(await exportJWK(privateKey));
  });
  afterAll(async () => await keys.idp.close());
  return keys;
}
