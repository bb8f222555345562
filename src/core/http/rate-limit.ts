/**
 * @module
 * Rate limits per client IP or per user: each request of a limited route counts
 * one hit of `${by}:${id}:${route}` in the {@link RateLimiter}. Over the limit it is refused
 * with 429, the standard error body, `Retry-After` and the `X-RateLimit-*` headers; within
 * it, the response carries the same `X-RateLimit-*` headers. Two of these middlewares can
 * apply to one request (per IP, then per user): the headers report the stricter of them.
 *
 * @example
 * ```ts
 * const limiter = createMemoryRateLimiter();
 * const limits = parseRateLimits(env.RATE_LIMITS);
 * app.post("/", rateLimit({ limiter, limits, route: "image.upload", by: "ip" }), upload);
 * ```
 */
import type { Context, MiddlewareHandler } from "hono";
import type { RateDecision, RateLimiter } from "../rate-limit/limiter.ts";
import type { RateLimitRoute, RateLimits } from "../rate-limit/rules.ts";
import { redactSecrets } from "../errors.ts";
import { HttpRefusal } from "./errors.ts";
import { editResponseHeaders } from "./response-headers.ts";
import { clientIp, type WorkerEnv } from "./worker-app.ts";

/** Options of {@link rateLimit}. */
export interface RateLimitOptions {
  /** Where hits are counted (memory, Redis, the Cloudflare binding). */
  limiter: RateLimiter;
  /** The parsed `RATE_LIMITS`; `"off"` limits nothing. */
  limits: RateLimits | "off";
  /** The route of every request this middleware sees, or a function of the request; undefined: not limited. */
  route: RateLimitRoute | ((c: Context<WorkerEnv>) => RateLimitRoute | undefined);
  /** Count per client IP (as the adapter passed it) or per user. */
  by: "ip" | "user";
  /** For `by: "user"`: the acting user's id; undefined (no known user) is not counted. */
  user?: (c: Context<WorkerEnv>) => string | undefined;
}

const LIMIT = "X-RateLimit-Limit";
const REMAINING = "X-RateLimit-Remaining";
const RESET = "X-RateLimit-Reset";

function rateHeaders(decision: RateDecision): Record<string, string> {
  return {
    [LIMIT]: String(decision.limit),
    [REMAINING]: String(decision.remaining),
    [RESET]: String(decision.resetSeconds),
  };
}

/** Writes a decision's `X-RateLimit-*` headers on the answer unless it already reports a stricter (or equal) remaining. */
export function reportDecision(c: Context, decision: RateDecision): void {
  editResponseHeaders(c, (headers) => {
    const current = Number(headers.get(REMAINING) ?? Number.NaN);
    if (Number.isFinite(current) && current <= decision.remaining) return;
    headers.set(LIMIT, String(decision.limit));
    headers.set(REMAINING, String(decision.remaining));
    headers.set(RESET, String(decision.resetSeconds));
  });
}

/**
 * The unit an IP limit counts: an IPv4 address, or the /64 network of an IPv6 address (one
 * subscriber is usually given a whole /64, so counting single addresses would let them
 * rotate through fresh limits). IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function clientNetwork(ip: string | undefined): string | undefined {
  if (ip === undefined || !ip.includes(":")) return ip;
  const address = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped) return mapped[1];
  const [head = "", tail] = address.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}

/** At most one log line per this many ms while the limiter fails. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

/**
 * The counting half of {@link rateLimit}: counts one hit of the request and returns the
 * decision to report on its answer ({@link reportDecision}), or throws the 429 past the limit.
 * Undefined when nothing was counted (limits `"off"`, no route, no known IP or user, or a
 * limiter that failed: fail open). Synchronous unless a hit is counted.
 */
export function rateCounter(options: RateLimitOptions): (c: Context<WorkerEnv>) => RateDecision | undefined | Promise<RateDecision | undefined> {
  const { limiter, limits, by } = options;
  if (by === "user" && !options.user) throw new Error('rateLimit: by "user" needs a user function');
  const routeOf = typeof options.route === "function" ? options.route : () => options.route as RateLimitRoute;
  const idOf = by === "ip" ? (c: Context<WorkerEnv>) => clientNetwork(clientIp(c)) : options.user!;
  // While the limiter is down every request fails it: one line, then one per interval with the count since.
  let lastWarned = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  const count = async (route: RateLimitRoute, id: string): Promise<RateDecision | undefined> => {
    let decision: RateDecision;
    try {
      decision = await limiter.hit(`${by}:${id}:${route}`, (limits as RateLimits)[route]);
    } catch (err) {
      // Fail open: a limiter outage (Redis down) must not take the service down with it, and
      // a refused or 500 request would be worse than one unmetered request. Never log the key:
      // it holds the client's IP or user id.
      const now = Date.now();
      if (now - lastWarned < FAILURE_LOG_INTERVAL_MS) {
        unlogged++;
        return undefined;
      }
      const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      const since = unlogged === 0 ? "" : ` (${unlogged} more let through since the last line)`;
      console.warn(redactSecrets(`rate limit check for ${route} (per ${by}) failed; request let through: ${reason}${since}`));
      lastWarned = now;
      unlogged = 0;
      return undefined;
    }
    if (!decision.allowed) {
      throw new HttpRefusal(
        "rate-limited",
        `Too many requests for ${route}; retry in ${decision.resetSeconds} s`,
        { route, retryAfterSeconds: decision.resetSeconds, scope: by },
        { "Retry-After": String(decision.resetSeconds), ...rateHeaders(decision) },
      );
    }
    return decision;
  };
  return (c) => {
    if (limits === "off") return undefined;
    const route = routeOf(c);
    const id = route === undefined ? undefined : idOf(c);
    if (route === undefined || id === undefined || id === "") return undefined;
    return count(route, id);
  };
}

/**
 * Counts each request of a limited route per client IP or per user and refuses it with 429
 * once over the limit. Requests with no known IP (or user), of no route, or with limits
 * `"off"` pass uncounted.
 */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler<WorkerEnv> {
  const counter = rateCounter(options);
  return async (c, next) => {
    const counted = counter(c);
    const decision = counted instanceof Promise ? await counted : counted;
    await next();
    if (decision !== undefined) reportDecision(c, decision);
  };
}
