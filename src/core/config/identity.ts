/**
 * @module
 * Identity-token mode: where tokens are verified (an explicit provider, or Firebase
 * Authentication). On when a JWKS URL, an issuer and an audience are all known; each
 * `AUTH_*` value wins over what `FIREBASE_PROJECT_ID` supplies.
 */
import * as z from "zod";
import { firebaseIdentity } from "../identity/identity-token.ts";
import { httpUrl, text, variable, variableProblem, WHEN_VALID, wholeNumber } from "./variables.ts";

const TOKEN_READERS = "user, data, audit, image, keys";

/** The identity variables. */
export const IdentitySection = z.object({
  AUTH_JWKS_URL: variable(httpUrl().optional(), "identity-token mode: the provider's JWKS; with `AUTH_ISSUER` and `AUTH_AUDIENCE` (all three, or none), or with `FIREBASE_PROJECT_ID`", { usedBy: TOKEN_READERS }),
  AUTH_ISSUER: variable(text(), "identity-token mode: the `iss` every token must carry", { usedBy: TOKEN_READERS }),
  AUTH_AUDIENCE: variable(text(), "identity-token mode: the `aud` every token must carry", { usedBy: TOKEN_READERS }),
  FIREBASE_PROJECT_ID: variable(
    z.string().regex(/^[a-z0-9-]{1,64}$/, "a Firebase project id (lower-case letters, digits, -)").optional(),
    "identity-token mode for Firebase Authentication: issuer `https://securetoken.google.com/{id}`, audience `{id}` and Google's JWKS URL (`AUTH_*` values win)",
    { usedBy: TOKEN_READERS, typeText: "1–64 of `a-z 0-9 -`" },
  ),
  AUTH_CLOCK_SKEW_SECONDS: variable(
    wholeNumber(30, 0, 300),
    "tolerated clock difference for a token's `exp` and `nbf`, in seconds",
    { usedBy: TOKEN_READERS },
  ),
}).superRefine((e, ctx) => {
  if (e.AUTH_JWKS_URL !== undefined && e.FIREBASE_PROJECT_ID === undefined && (!e.AUTH_ISSUER || !e.AUTH_AUDIENCE)) {
    variableProblem(ctx, ["AUTH_ISSUER", "AUTH_AUDIENCE"], "required when AUTH_JWKS_URL is set (tokens of any issuer or audience would pass)");
  }
  if (e.AUTH_JWKS_URL === undefined && e.FIREBASE_PROJECT_ID === undefined && (e.AUTH_ISSUER || e.AUTH_AUDIENCE)) {
    variableProblem(ctx, ["AUTH_JWKS_URL"], "required with AUTH_ISSUER and AUTH_AUDIENCE (or set FIREBASE_PROJECT_ID)");
  }
}, WHEN_VALID).transform((e): { identity: IdentityConfig | undefined } => {
  const firebase = e.FIREBASE_PROJECT_ID === undefined ? undefined : firebaseIdentity(e.FIREBASE_PROJECT_ID);
  const jwksUrl = e.AUTH_JWKS_URL ?? firebase?.jwksUrl;
  const issuer = e.AUTH_ISSUER ?? firebase?.issuer;
  const audience = e.AUTH_AUDIENCE ?? firebase?.audience;
  const identity = jwksUrl === undefined || issuer === undefined || audience === undefined
    ? undefined
    : { jwksUrl, issuer, audience, clockSkewSeconds: e.AUTH_CLOCK_SKEW_SECONDS };
  return { identity };
});

/** Where identity tokens are verified. */
export interface IdentityConfig {
  /** The provider's JWKS URL. */
  jwksUrl: string;
  /** The `iss` every token must carry. */
  issuer: string;
  /** The `aud` every token must carry. */
  audience: string;
  /** Tolerated clock difference for `exp` and `nbf`, in seconds. */
  clockSkewSeconds: number;
}

/** What {@link IdentitySection} parses. */
export type IdentitySectionConfig = z.output<typeof IdentitySection>;
