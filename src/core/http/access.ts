/**
 * @module
 * Access control shared by the user, data, audit, image and keys workers (docs/api.md#access,
 * docs/api.md#identity-tokens): rate limits per client IP before the key check and per user
 * after it, the actor (identity token or admin key), ownership of a user's paths, and the
 * service's own audit entries. One instance is shared by the workers of a service, so they
 * share one key-set cache and one rate limiter.
 */
import type { Context } from "hono";
import type { BlobStore, Clock } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { type AuditKeyConfig, auditKeys } from "../audit/signing-keys.ts";
import { ServiceError } from "../errors.ts";
import { checkSegment } from "../storage/keys.ts";
import { answerError, clientIp, pathnameOf, type WorkerApp, type WorkerEnv } from "./worker-app.ts";
import { rateCounter, reportDecision } from "./rate-limit.ts";
import { createMemoryRateLimiter, type RateDecision, type RateLimiter } from "../rate-limit/limiter.ts";
import type { RateLimitRoute, RateLimits } from "../rate-limit/rules.ts";
import { type Actor, type ServiceAuditLog, serviceAuditLog, type ServiceEvent } from "../audit/service-events.ts";
import { ADMIN_TRAIL_USER_ID } from "../identity/identity-token.ts";
import { createIdentityVerifier, type IdentityVerifier } from "../identity/identity-token.ts";
import { actorOf, identifyActor } from "./actor.ts";
import type { CredentialCheck } from "./auth.ts";
import { type RememberedMember, rememberMember } from "../review/review-members.ts";

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
  /**
   * Remembers the lab and roles a verified token states, so that an owner can ask its user for a
   * review (docs/review.md#labs-and-roles); absent without an audit store.
   */
  rememberMember?: ((uid: string, member: RememberedMember) => Promise<void>) | undefined;
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
export type AccessConfig = Pick<ServiceConfig, "identity" | "adminAuth" | "rateLimits"> & Partial<Pick<ServiceConfig, "maxAuditDayBytes">> & AuditKeyConfig;

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
    // The service's own entries may use the day's reserve past MAX_AUDIT_DAY_BYTES.
    log: serviceAuditLog(deps.audit, deps.clock, { signer: auditKeys(config).signer, hash: deps.auditHash, maxDayBytes: config.maxAuditDayBytes, reserve: true }),
    rememberMember: deps.audit === undefined ? undefined : memberIndex(deps.audit),
  };
}

// Users whose stated lab and roles this process has stored: a request of theirs reads the store only when its claims changed.
const REMEMBERED_USERS = 10_000;

/** Stores a user's stated lab and roles once per change (a read and a write the first time this process sees them). */
function memberIndex(audit: BlobStore): (uid: string, member: RememberedMember) => Promise<void> {
  const known = new Map<string, string>();
  return async (uid, member) => {
    const text = JSON.stringify([member.lab, member.roles]);
    if (known.get(uid) === text) return;
    await rememberMember(audit, uid, member);
    if (known.size >= REMEMBERED_USERS) known.delete(known.keys().next().value!);
    known.set(uid, text);
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
 * limit, and the admin's audit entry for requests no more specific entry covered; on the way
 * out, the admin's trace, then the per-user and the per-IP `X-RateLimit-*` headers. One
 * middleware (each layer of middleware is an async step of its own on every request).
 */
export function protect(app: WorkerApp, access: AccessControl, options: ProtectOptions): void {
  const { limiter, limits } = access;
  const { credential, isPublic } = options;
  const identifies = identifyActor({ identity: access.identity, adminKey: access.adminKey, status: options.status, optional: options.optionalIdentity });
  // RATE_LIMITS=off: no counting at all on the path.
  const countIp = limits === "off" ? undefined : rateCounter({ limiter, limits, route: options.route, by: "ip" });
  const countUser = limits === "off" ? undefined : rateCounter({ limiter, limits, route: options.route, by: "user", user: (c) => userIdOf(actorOf(c)) });
  // The worker's credential, the actor and the per-user count: each refuses (throws) or
  // passes; only a token's verification and a count are waited for. Requests that carry
  // their own credential pass all three.
  const admit = async (c: Context<WorkerEnv>): Promise<RateDecision | undefined> => {
    credential?.(c);
    const identified = identifies(c);
    if (identified !== undefined) await identified;
    return countUser?.(c);
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
  // A refusal after a count is answered here, so that its answer still reports the count
  // (as every answer within a limit does); without a count hono answers it as usual.
  const refuse = async (c: Context<WorkerEnv>, err: unknown, ip: RateDecision | undefined, user?: RateDecision): Promise<void> => {
    if (ip === undefined && user === undefined) throw err;
    await answerError(app, err, c);
    report(c, ip, user);
  };
  app.use("*", async (c, next) => {
    // The per-IP count throws its own 429 (with its headers) before anything else runs.
    const countedIp = countIp?.(c);
    const ip = countedIp instanceof Promise ? await countedIp : countedIp;
    let user: RateDecision | undefined;
    if (isPublic === undefined || !isPublic(c)) {
      // No count and no token: nothing to wait for.
      const admitted = ip === undefined && countUser === undefined ? admitNow(c, credential, identifies) : admit(c);
      try {
        if (admitted !== undefined) user = await admitted;
      } catch (err) {
        return await refuse(c, err, ip);
      }
      await rememberStated(c, access);
    }
    await next();
    const traced = traceAdmin(c);
    if (traced !== undefined) {
      try {
        await traced;
      } catch (err) {
        return await refuse(c, err, ip, user);
      }
    }
    report(c, ip, user);
  });
}

/**
 * Remembers the lab and roles the caller's token states, whichever worker it calls: a reviewer
 * known only by their token's claims can be asked for a review once they have used the service.
 * A store that fails here fails nothing else (the next request tries again).
 */
async function rememberStated(c: Context<WorkerEnv>, access: AccessControl): Promise<void> {
  const actor = actorOf(c);
  if (access.rememberMember === undefined || actor?.kind !== "user" || (actor.lab === undefined && actor.roles === undefined)) return;
  try {
    await access.rememberMember(actor.uid, { lab: actor.lab, roles: actor.roles });
  } catch {
    // Not remembered this time: the review worker reads the record, or what an earlier token said.
  }
}

/** The worker's credential and the actor without a count: a promise only while a token is verified. */
function admitNow(c: Context<WorkerEnv>, credential: CredentialCheck | undefined, identifies: (c: Context<WorkerEnv>) => void | Promise<void>): Promise<undefined> | undefined {
  credential?.(c);
  const identified = identifies(c);
  return identified === undefined ? undefined : identified.then(() => undefined);
}

/** The per-user, then the per-IP decision on the answer (the stricter one stays). */
function report(c: Context<WorkerEnv>, ip: RateDecision | undefined, user: RateDecision | undefined): void {
  if (user !== undefined) reportDecision(c, user);
  if (ip !== undefined) reportDecision(c, ip);
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
 * actor's own trail). Key-only callers and the admin pass. The entry names `uid` as the
 * attempted user only when the caller sent it (`attempted`): an image's owner is not the
 * caller's to learn from its own trail.
 */
export async function requireOwner(
  c: Context<WorkerEnv>,
  access: AccessControl,
  uid: string,
  shown: Record<string, unknown> = { userId: uid },
  attempted: string | null = uid,
): Promise<void> {
  const actor = actorOf(c);
  if (actor?.kind !== "user" || actor.uid === uid) return;
  await access.log({
    userId: actor.uid,
    action: "security-violation",
    result: "blocked",
    actor,
    details: { securityDetails: { reason: "cross-user access", ...(attempted === null ? {} : { attemptedUserId: attempted }), ...shown } },
    request: requestFacts(c),
  });
  c.set("audited", true);
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
