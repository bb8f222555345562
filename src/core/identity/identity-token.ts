/**
 * @module
 * Verifies the identity provider's token (`X-Identity-Token`, docs/api.md#identity-tokens)
 * with jose: signature against the provider's JWKS, `iss`, `aud`, `exp`, `nbf`, with a small
 * clock skew. Only asymmetric algorithms are accepted, so `alg: none` and HMAC tokens made
 * with a public key never pass.
 */
import { errors, jwtVerify } from "jose";
import { type Clock, systemClock } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import { createJwksCache } from "./jwks-cache.ts";
import { type LabRole, LabRoleSchema } from "../schemas/user.ts";


/** The trail of admin uses on no readable user: no identity token may claim it. */
export const ADMIN_TRAIL_USER_ID = "_admin";

/** Who a valid token says the caller is. */
export interface Identity {
  /** The token's `sub`: the user id of the user, data and audit paths. */
  uid: string;
  /** The token's `email` claim, when it has one (written into service audit entries). */
  email: string | undefined;
  /** The lab claim (`AUTH_LAB_CLAIM`), when the token has one; else the user record's `lab` applies. */
  lab?: string | undefined;
  /** The known roles of the roles claim (`AUTH_ROLES_CLAIM`), when the token has one; else the record's `roles` apply. */
  roles?: readonly LabRole[] | undefined;
  /** The token's `auth_time` (seconds since 1970), when it has one: when the user last authenticated. */
  authTime?: number | undefined;
}

/** The known roles among `value` (unknown ones, which identity providers send for other uses, are left out). */
export function labRolesOf(value: readonly unknown[]): LabRole[] {
  return LabRoleSchema.options.filter((role) => value.includes(role));
}

/** Verifies identity tokens. */
export interface IdentityVerifier {
  /** The identity of a valid token; rejects with {@link IdentityTokenError} otherwise. */
  verify(token: string): Promise<Identity>;
}

/** Where and how tokens are checked. */
export interface IdentityVerifierOptions {
  /** The provider's JWKS URL (`AUTH_JWKS_URL`). */
  jwksUrl: string;
  /** The `iss` every token must carry (`AUTH_ISSUER`). */
  issuer: string;
  /** The `aud` every token must carry (`AUTH_AUDIENCE`). */
  audience: string;
  /** Tolerated clock difference for `exp` and `nbf`, in seconds (default 30). */
  clockSkewSeconds?: number;
  /** The fetch used for the JWKS; default the global `fetch`. */
  fetch?: typeof fetch;
  /** The time tokens are checked against; tests control it. */
  clock?: Clock;
  /** Least time between two JWKS fetches, in seconds (default 30). */
  jwksCooldownSeconds?: number;
  /** The claim naming the user's lab (`AUTH_LAB_CLAIM`, default `lab`). */
  labClaim?: string;
  /** The claim holding the user's roles, an array (`AUTH_ROLES_CLAIM`, default `roles`). */
  rolesClaim?: string;
}

/** The lab, roles and authentication time a verified token states; throws on a claim of the wrong shape. */
function labClaimsOf(payload: Record<string, unknown>, labClaim: string, rolesClaim: string): Pick<Identity, "lab" | "roles" | "authTime"> {
  const lab = Object.hasOwn(payload, labClaim) ? payload[labClaim] : undefined;
  if (lab !== undefined && (typeof lab !== "string" || lab === "" || lab.length > 256)) throw new IdentityTokenError(`claim ${labClaim} invalid`);
  const roles = Object.hasOwn(payload, rolesClaim) ? payload[rolesClaim] : undefined;
  if (roles !== undefined && !Array.isArray(roles)) throw new IdentityTokenError(`claim ${rolesClaim} invalid`);
  const authTime = payload.auth_time;
  if (authTime !== undefined && (typeof authTime !== "number" || !Number.isFinite(authTime))) throw new IdentityTokenError("claim auth_time invalid");
  return { lab, roles: roles === undefined ? undefined : labRolesOf(roles), authTime };
}

/** A token that does not pass; `reason` is safe to show the caller (it never holds the token). */
export class IdentityTokenError extends ServiceError {
  /** Builds the error from a short reason such as "expired". */
  constructor(readonly reason: string) {
    super("unauthenticated", `Invalid identity token: ${reason}`);
  }
}

/** The algorithms of identity providers' signing keys (RSA, RSA-PSS, ECDSA, EdDSA). */
export const IDENTITY_TOKEN_ALGORITHMS: readonly string[] = [
  "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519",
];

/** The largest token accepted; real ID tokens are 1–2 KB. */
const MAX_TOKEN_CHARS = 16 * 1024;

/** Firebase Authentication: the JWKS of its ID tokens. */
export const FIREBASE_JWKS_URL = "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com";

/** The issuer and audience of a Firebase project's ID tokens. */
export function firebaseIdentity(projectId: string): { issuer: string; audience: string; jwksUrl: string } {
  return { issuer: `https://securetoken.google.com/${projectId}`, audience: projectId, jwksUrl: FIREBASE_JWKS_URL };
}

function reasonOf(err: unknown): string {
  if (err instanceof errors.JWTExpired) return "expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "nbf") return "not yet valid";
    if (err.claim === "iss") return "wrong issuer";
    if (err.claim === "aud") return "wrong audience";
    return `claim ${err.claim} ${err.reason === "missing" ? "missing" : "invalid"}`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return "algorithm not allowed";
  if (err instanceof errors.JWKSNoMatchingKey) return "signed with an unknown key";
  if (err instanceof errors.JWKSMultipleMatchingKeys) return "key id is ambiguous";
  if (err instanceof errors.JWSSignatureVerificationFailed) return "bad signature";
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return "malformed";
  return "malformed";
}

/** Creates a verifier for one provider. */
export function createIdentityVerifier(options: IdentityVerifierOptions): IdentityVerifier {
  const clock = options.clock ?? systemClock;
  const keys = createJwksCache({
    url: options.jwksUrl,
    fetch: options.fetch,
    clock,
    cooldownSeconds: options.jwksCooldownSeconds,
  });
  return {
    async verify(token) {
      if (token.length > MAX_TOKEN_CHARS) throw new IdentityTokenError("too long");
      let payload;
      try {
        ({ payload } = await jwtVerify(token, keys.getKey, {
          issuer: options.issuer,
          audience: options.audience,
          algorithms: [...IDENTITY_TOKEN_ALGORITHMS],
          clockTolerance: options.clockSkewSeconds ?? 30,
          currentDate: clock.now(),
          requiredClaims: ["exp", "sub"],
        }));
      } catch (err) {
        // The provider being unreachable is the service's failure, not the caller's.
        if (err instanceof ServiceError) throw err;
        // jose's own errors speak of the token; any other is its check of the provider's key (an RSA key under 2048 bits).
        if (!(err instanceof errors.JOSEError)) throw ServiceError.server("The identity provider's key set holds a key that cannot be used", "unavailable");
        throw new IdentityTokenError(reasonOf(err));
      }
      const sub = payload.sub;
      if (typeof sub !== "string" || sub === "" || sub.length > 256) throw new IdentityTokenError("claim sub invalid");
      // The admin's own trail is not a user's to own.
      if (sub === ADMIN_TRAIL_USER_ID) throw new IdentityTokenError("claim sub reserved");
      const email = typeof payload.email === "string" ? payload.email : undefined;
      return { uid: sub, email, ...labClaimsOf(payload, options.labClaim ?? "lab", options.rolesClaim ?? "roles") };
    },
  };
}
