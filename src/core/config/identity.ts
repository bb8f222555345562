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
  AUTH_LAB_CLAIM: variable(
    z.string().regex(/^[\x21-\x7e]{1,128}$/, "a claim name (1–128 printable ASCII characters)").default("lab"),
    "identity-token mode: the token claim naming the user's lab ([review](docs/review.md)); without it in a token, the user record's `lab`",
    { usedBy: "review, user", typeText: "claim name" },
  ),
  AUTH_ROLES_CLAIM: variable(
    z.string().regex(/^[\x21-\x7e]{1,128}$/, "a claim name (1–128 printable ASCII characters)").default("roles"),
    "identity-token mode: the token claim holding the user's roles, an array among `examiner`, `reviewer`, `admin` ([review](docs/review.md)); without it in a token, the user record's `roles`",
    { usedBy: "review, user", typeText: "claim name" },
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
    : { jwksUrl, issuer, audience, clockSkewSeconds: e.AUTH_CLOCK_SKEW_SECONDS, labClaim: e.AUTH_LAB_CLAIM, rolesClaim: e.AUTH_ROLES_CLAIM };
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
  /** `AUTH_LAB_CLAIM`: the claim naming the user's lab. */
  labClaim: string;
  /** `AUTH_ROLES_CLAIM`: the claim holding the user's roles. */
  rolesClaim: string;
}

/** What {@link IdentitySection} parses. */
export type IdentitySectionConfig = z.output<typeof IdentitySection>;
