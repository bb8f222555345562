/**
 * @module
 * Access control shared by the user, data, audit, image and keys workers (docs/api.md#access,
 * docs/api.md#identity-tokens): rate limits per client IP before the key check and per user
 * after it, the actor (identity token or admin key), ownership of a user's paths, and the
 * service's own audit entries. One instance is shared by the workers of a service, so they
 * share one key-set cache and one rate limiter.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { BlobStore, Clock } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { type AuditKeyConfig, auditKeys } from "../audit/signing-keys.ts";
import { ServiceError } from "../errors.ts";
import { checkSegment } from "../storage/keys.ts";
import { clientIp, pathnameOf, type WorkerApp, type WorkerEnv } from "./worker-app.ts";
import { rateLimit } from "./rate-limit.ts";
import { createMemoryRateLimiter, type RateLimiter } from "../rate-limit/limiter.ts";
import type { RateLimitRoute, RateLimits } from "../rate-limit/rules.ts";
import { type Actor, type ServiceAuditLog, serviceAuditLog, type ServiceEvent } from "../audit/service-events.ts";
import { ADMIN_TRAIL_USER_ID } from "../identity/identity-token.ts";
import { createIdentityVerifier, type IdentityVerifier } from "../identity/identity-token.ts";
import { actorOf, identifyActor } from "./actor.ts";
import type { CredentialCheck } from "./auth.ts";

/** What the workers share to decide who may do what. */
export interface AccessControl {
  /** The token verifier; set in identity mode (`AUTH_JWKS_URL` or `FIREBASE_PROJECT_ID`). */
  identity: IdentityVerifier | undefined;
  /** `ADMIN_AUTH`, the key that may act on any user. */
  adminKey: string | undefined;
  /** Counts requests per client IP and per user. */
  limiter: RateLimiter;
  /** The limits per route, or "off". */
  limits: RateLimits | "off";
  /** Where service audit entries go. */
  log: ServiceAuditLog;
}

/** What {@link accessControl} builds on besides the configuration. */
export interface AccessControlDeps {
  /** The audit store service entries are appended to; without it none are written. */
  audit?: BlobStore;
  /** The clock of tokens, limits and entries. */
  clock: Clock;
  /** The rate limiter; default in memory. */
  limiter?: RateLimiter;
  /** The fetch used for the identity provider's key set. */
  fetch?: typeof fetch;
  /** A verifier to use instead of the configured one (tests, custom providers). */
  identity?: IdentityVerifier;
  /** SHA-256 of audit entry hashes (a runtime's native one); default the core's JavaScript one. */
  auditHash?: ((text: string) => string) | undefined;
}

/** The configuration access control reads: identity-token mode, the admin key, rate limits. */
export type AccessConfig = Pick<ServiceConfig, "identity" | "adminAuth" | "rateLimits"> & AuditKeyConfig;

/** Access control as the configuration describes it. */
export function accessControl(config: AccessConfig, deps: AccessControlDeps): AccessControl {
  const identity = deps.identity ?? (config.identity === undefined ? undefined : createIdentityVerifier({
    ...config.identity,
    fetch: deps.fetch,
    clock: deps.clock,
  }));
  return {
    identity,
    adminKey: config.adminAuth,
    limiter: deps.limiter ?? createMemoryRateLimiter({ clock: deps.clock }),
    limits: config.rateLimits,
    log: serviceAuditLog(deps.audit, deps.clock, { signer: auditKeys(config).signer, hash: deps.auditHash }),
  };
}

/** How a worker is protected. */
export interface ProtectOptions {
  /** The worker's refusal status: 401 for the user worker, 403 elsewhere (docs/api.md#worker-credentials). */
  status: 401 | 403;
  /** The rate-limit route of a request; undefined leaves it unlimited (preflights). */
  route: (c: Context<WorkerEnv>) => RateLimitRoute | undefined;
  /** The worker's own credential check (API key or bearer), run after the per-IP limit; none for open workers. */
  credential?: CredentialCheck;
  /** The user an admin request acts on, for the admin's audit entry (default: the admin trail). */
  targetOf?: (c: Context<WorkerEnv>) => string | undefined;
  /** A request without a token passes anonymously (the PDF worker). */
  optionalIdentity?: boolean;
  /** Requests that carry their own credential (signed image URLs): only the per-IP limit applies. */
  isPublic?: (c: Context<WorkerEnv>) => boolean;
}

/** The request facts a service entry records. */
export function requestFacts(c: Context<WorkerEnv>): NonNullable<ServiceEvent["request"]> {
  return { method: c.req.method, path: pathnameOf(c.req.url), clientIp: clientIp(c) };
}

/**
 * Installs, in order: the per-IP limit, the worker's credential, the actor, the per-user
 * limit, and the admin's audit entry for requests no more specific entry covered.
 */
export function protect(app: WorkerApp, access: AccessControl, options: ProtectOptions): void {
  const { limiter, limits } = access;
  const { credential, isPublic } = options;
  const identifies = identifyActor({ identity: access.identity, adminKey: access.adminKey, status: options.status, optional: options.optionalIdentity });
  // The worker's credential, then the actor: both only refuse (throw) or pass, so they run in
  // one step; only a token's verification is waited for.
  const admit = (c: Context<WorkerEnv>): void | Promise<void> => {
    if (isPublic !== undefined && isPublic(c)) return;
    credential?.(c);
    return identifies(c);
  };
  // Every use of the admin key leaves a trace; a trace that cannot be written fails the request.
  const traceAdmin = (c: Context<WorkerEnv>): Promise<void> | undefined => {
    const actor = actorOf(c);
    if (actor?.kind !== "admin" || c.get("audited") === true || c.req.method === "OPTIONS") return undefined;
    return access.log({
      userId: trailOf(options.targetOf?.(c)),
      action: "file-access",
      result: c.res.status < 400 ? "success" : "failure",
      actor,
      details: { securityDetails: { adminAccess: true, status: c.res.status } },
      request: requestFacts(c),
    });
  };
  // RATE_LIMITS=off: no limit middleware on the path at all, and the checks and the admin's
  // trace in one layer (each layer is an async step of its own on every request).
  if (limits === "off") {
    app.use("*", async (c, next) => {
      const admitted = admit(c);
      if (admitted !== undefined) await admitted;
      await next();
      const traced = traceAdmin(c);
      if (traced !== undefined) await traced;
    });
    return;
  }
  const unlessPublic = (handler: MiddlewareHandler<WorkerEnv>): MiddlewareHandler<WorkerEnv> =>
    isPublic === undefined ? handler : async (c, next) => (isPublic(c) ? await next() : await handler(c, next));
  app.use("*", rateLimit({ limiter, limits, route: options.route, by: "ip" }));
  app.use("*", async (c, next) => {
    const admitted = admit(c);
    if (admitted !== undefined) await admitted;
    await next();
  });
  app.use("*", unlessPublic(rateLimit({ limiter, limits, route: options.route, by: "user", user: (c) => userIdOf(actorOf(c)) })));
  app.use("*", async (c, next) => {
    await next();
    const traced = traceAdmin(c);
    if (traced !== undefined) await traced;
  });
}

/** The trail an admin entry goes to: the target when it is a valid user id, else the admin trail. */
function trailOf(target: string | undefined): string {
  if (target === undefined || target === ADMIN_TRAIL_USER_ID) return ADMIN_TRAIL_USER_ID;
  try {
    return checkSegment(target, "userId");
  } catch {
    return ADMIN_TRAIL_USER_ID;
  }
}

function userIdOf(actor: Actor | undefined): string | undefined {
  return actor?.kind === "user" ? actor.uid : undefined;
}

/**
 * Refuses a user acting on another user's data (403, and a `security-violation` entry in the
 * actor's own trail). Key-only callers and the admin pass.
 */
export async function requireOwner(
  c: Context<WorkerEnv>,
  access: AccessControl,
  uid: string,
  shown: Record<string, unknown> = { userId: uid },
): Promise<void> {
  const actor = actorOf(c);
  if (actor?.kind !== "user" || actor.uid === uid) return;
  await access.log({
    userId: actor.uid,
    action: "security-violation",
    result: "blocked",
    actor,
    details: { securityDetails: { reason: "cross-user access", attemptedUserId: uid, ...shown } },
    request: requestFacts(c),
  });
  throw ServiceError.forbidden("The identity token's user may act only on their own data", shown);
}

/** Records what the service did for a known actor; nothing in key-only mode without the admin key. */
export async function recordEvent(
  c: Context<WorkerEnv>,
  access: AccessControl,
  event: Omit<ServiceEvent, "actor" | "request" | "userId"> & { userId?: string },
): Promise<void> {
  const actor = actorOf(c);
  if (actor === undefined) return;
  const userId = event.userId ?? (actor.kind === "user" ? actor.uid : ADMIN_TRAIL_USER_ID);
  await access.log({ ...event, userId, actor, request: requestFacts(c) });
  c.set("audited", true);
}
