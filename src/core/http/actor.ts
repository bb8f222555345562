/**
 * @module
 * Who is calling: the `X-Admin-Key` holder, the user an `X-Identity-Token` proves, or, in
 * key-only mode, an unnamed holder of the worker key. Runs after the worker-key check, so
 * an identity never replaces the worker's own credential (except at the keys worker).
 */
import type { Context, MiddlewareHandler } from "hono";
import { matchesAnyKey } from "./auth.ts";
import { ServiceError } from "../errors.ts";
import { refusalKind } from "./errors.ts";
import type { WorkerEnv } from "./worker-app.ts";
import type { Actor } from "../audit/service-events.ts";
import { IdentityTokenError, type IdentityVerifier } from "../identity/identity-token.ts";

/** The header of the identity provider's token. */
export const IDENTITY_TOKEN_HEADER = "X-Identity-Token";
/** The header of the admin key (`ADMIN_AUTH`). */
export const ADMIN_KEY_HEADER = "X-Admin-Key";

/** Options of {@link identify}. */
export interface IdentifyOptions {
  /** The verifier in identity mode; undefined in key-only mode. */
  identity: IdentityVerifier | undefined;
  /** `ADMIN_AUTH`; undefined when no admin key is configured. */
  adminKey: string | undefined;
  /** The refusal status of the worker (401 user worker, 403 the others; docs/api.md#worker-credentials). */
  status: 401 | 403;
  /** When true a request without a token passes anonymously (the PDF worker). */
  optional?: boolean;
}

/** The actor of this request, if known. */
export function actorOf(c: Context<WorkerEnv>): Actor | undefined {
  return c.get("actor");
}

/**
 * Sets `actor` from the admin key or the identity token; refuses (throws) what does not pass.
 * Synchronous unless a token is verified: only then is there a promise to wait for.
 */
export function identifyActor(options: IdentifyOptions): (c: Context<WorkerEnv>) => void | Promise<void> {
  const verify = async (c: Context<WorkerEnv>, identity: IdentityVerifier, token: string): Promise<void> => {
    try {
      const verified = await identity.verify(token);
      c.set("actor", { kind: "user", uid: verified.uid, email: verified.email, lab: verified.lab, roles: verified.roles, authTime: verified.authTime });
    } catch (err) {
      if (err instanceof IdentityTokenError) throw new ServiceError(refusalKind(options.status), err.message, { header: IDENTITY_TOKEN_HEADER });
      throw err;
    }
  };
  return (c) => {
    // Header names in lower case (ADMIN_KEY_HEADER, IDENTITY_TOKEN_HEADER): a runtime looks them up
    // lower-cased, and a literal already so is not copied and hashed again on every request.
    const adminKey = c.req.header("x-admin-key");
    if (adminKey !== undefined) {
      if (!matchesAnyKey(adminKey, [options.adminKey])) {
        throw new ServiceError(refusalKind(options.status), `Missing or invalid ${ADMIN_KEY_HEADER}`);
      }
      c.set("actor", { kind: "admin" });
      return;
    }
    // Key-only mode reads no token: nothing is verified (one header lookup fewer on every request).
    if (options.identity === undefined) return;
    const token = c.req.header("x-identity-token");
    if (token === undefined && options.optional === true) return;
    if (token === undefined || token.trim() === "") {
      throw new ServiceError(refusalKind(options.status), `Missing ${IDENTITY_TOKEN_HEADER}`);
    }
    return verify(c, options.identity, token.trim());
  };
}

/** Sets `actor` from the admin key or the identity token; refuses what does not pass. */
export function identify(options: IdentifyOptions): MiddlewareHandler<WorkerEnv> {
  const check = identifyActor(options);
  return async (c, next) => {
    const pending = check(c);
    if (pending !== undefined) await pending;
    await next();
  };
}
