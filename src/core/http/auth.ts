/**
 * @module
 * Worker credentials (docs/api.md#access): `X-Custom-Auth-Key` for the user, data, keys and audit
 * workers, `Authorization: Bearer` for the image worker. Keys are compared in constant
 * time; a missing or wrong key is 401 on the user worker and 403 elsewhere (docs/api.md#worker-credentials).
 *
 * @example
 * ```ts
 * app.use("*", requireAuthKey({ keys: [config.r2KeySecret], status: 403 }));
 * ```
 */
import type { Context, MiddlewareHandler } from "hono";
import { ServiceError } from "../errors.ts";
import { secretsEqual } from "../encoding/secrets-equal.ts";

/** True when `given` equals any configured key; unset keys never match. */
export function matchesAnyKey(given: string | undefined, keys: readonly (string | undefined)[]): boolean {
  if (given === undefined || given === "") return false;
  let ok = false;
  for (const key of keys) {
    // No early exit: every configured key is compared.
    if (key !== undefined && key !== "" && secretsEqual(given, key)) ok = true;
  }
  return ok;
}

/** Options of {@link requireAuthKey} and {@link requireBearer}. */
export interface AuthOptions {
  /** Accepted secrets; an unset (undefined) key accepts nothing. */
  keys: readonly (string | undefined)[];
  /** 401 for the user worker, 403 for the others (docs/api.md#worker-credentials). */
  status: 401 | 403;
  /** The variable that configures the key (`R2_KEY_SECRET`), named when it is not set. */
  variable: string;
}

/** Variables already warned about: one line per variable and process (or isolate). */
const warned = new Set<string>();

/** True when none of the keys is set; said once at start, since every request will then be refused. */
function warnIfUnset(options: AuthOptions, header: string): boolean {
  const configured = options.keys.some((key) => key !== undefined && key !== "");
  if (!configured && !warned.has(options.variable)) {
    warned.add(options.variable);
    console.warn(`${options.variable} is not set: every request that needs ${header} is refused with ${options.status} until it is configured`);
  }
  return !configured;
}

function refuse(options: AuthOptions, unset: boolean, message: string): ServiceError {
  // Keep the status and code; tell the caller when no key could ever match.
  const text = unset ? `${message}: this server has no ${options.variable} configured, so no key is accepted` : message;
  const details = unset ? { keyConfigured: false, variable: options.variable } : {};
  return options.status === 401 ? new ServiceError("unauthenticated", text, details) : ServiceError.forbidden(text, details);
}

/** A credential check of a request: returns when it passes, throws the refusal otherwise. */
export type CredentialCheck = (c: Context) => void;

/** The check of {@link requireAuthKey}: `X-Custom-Auth-Key` equals one of the configured keys. */
export function authKeyCheck(options: AuthOptions): CredentialCheck {
  const unset = warnIfUnset(options, "X-Custom-Auth-Key");
  return (c) => {
    // Lower case: a runtime looks the name up lower-cased; a literal already so is not copied again.
    if (!matchesAnyKey(c.req.header("x-custom-auth-key"), options.keys)) {
      throw refuse(options, unset, "Missing or invalid X-Custom-Auth-Key");
    }
  };
}

/** The check of {@link requireBearer}: `Authorization: Bearer <token>` with one of the configured tokens. */
export function bearerCheck(options: AuthOptions): CredentialCheck {
  const unset = warnIfUnset(options, "Authorization: Bearer");
  return (c) => {
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!matchesAnyKey(match?.[1], options.keys)) {
      throw refuse(options, unset, "Missing or invalid bearer token");
    }
  };
}

/** Requires `X-Custom-Auth-Key` to equal one of the configured keys. */
export function requireAuthKey(options: AuthOptions): MiddlewareHandler {
  const check = authKeyCheck(options);
  return async (c, next) => {
    check(c);
    await next();
  };
}

/** Requires `Authorization: Bearer <token>` with one of the configured tokens. */
export function requireBearer(options: AuthOptions): MiddlewareHandler {
  const check = bearerCheck(options);
  return async (c, next) => {
    check(c);
    await next();
  };
}
