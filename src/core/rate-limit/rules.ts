/**
 * @module
 * The rate-limited routes, their default limits, and the parser of `RATE_LIMITS`
 * (docs/configuration.md: `off`, or per-route limits such as `image.upload=30/60s,pdf=20/60s`; on with
 * the defaults when unset). Limits apply per client IP and per user alike.
 *
 * @example
 * ```ts
 * const limits = parseRateLimits("image=60/60s,image.upload=10/1m");
 * if (limits !== "off") console.log(limits["image.upload"], limits["image.sign"]);
 * // { limit: 10, windowSeconds: 60 } { limit: 60, windowSeconds: 60 }
 * ```
 */
import type { RateRule } from "./limiter.ts";

/** Every route a limit can name: `worker.action`, or the worker alone when it has one kind of request. */
export const RATE_LIMIT_ROUTES = [
  "user.read",
  "user.write",
  "data.read",
  "data.write",
  "audit.read",
  "audit.write",
  "image.upload",
  "image.sign",
  "image.serve",
  "image.delete",
  "pdf",
  "captcha",
  "keys",
  "exchange.export",
  "exchange.import",
  "review.read",
  "review.write",
] as const satisfies readonly RateLimitRoute[];

/**
 * A rate-limited route, e.g. `image.upload` (a union written out, so that it is public on its
 * own; tests/public-api.test.ts keeps it equal to {@link RATE_LIMIT_ROUTES}).
 */
export type RateLimitRoute =
  | "user.read"
  | "user.write"
  | "data.read"
  | "data.write"
  | "audit.read"
  | "audit.write"
  | "image.upload"
  | "image.sign"
  | "image.serve"
  | "image.delete"
  | "pdf"
  | "captcha"
  | "keys"
  | "exchange.export"
  | "exchange.import"
  | "review.read"
  | "review.write";

/** The limit of every route. */
export type RateLimits = Readonly<Record<RateLimitRoute, RateRule>>;

const perMinute = (limit: number): RateRule => Object.freeze({ limit, windowSeconds: 60 });

/**
 * The limits when `RATE_LIMITS` is unset, per client IP and per user: reads are generous,
 * uploads, PDF renders and CAPTCHA checks (costly, or abused by scripts) are stricter. The
 * Striae client asks the keys worker before nearly every call and a lab often shares one
 * address, so a minute of normal work there is hundreds of key and record reads.
 */
export const DEFAULT_RATE_LIMITS: RateLimits = Object.freeze({
  "user.read": perMinute(1200),
  "user.write": perMinute(300),
  "data.read": perMinute(1200),
  "data.write": perMinute(600),
  "audit.read": perMinute(600),
  // Clients append an entry for most actions; refusing one loses audit history.
  "audit.write": perMinute(1200),
  // A case import uploads its images one after another.
  "image.upload": perMinute(200),
  "image.sign": perMinute(1200),
  "image.serve": perMinute(2400),
  "image.delete": perMinute(300),
  pdf: perMinute(60),
  captcha: perMinute(60),
  keys: perMinute(3000),
  // An export or import reads or writes a whole case with its images.
  "exchange.export": perMinute(60),
  "exchange.import": perMinute(30),
  "review.read": perMinute(600),
  "review.write": perMinute(120),
});

/**
 * The route of a request by its method: reads (GET, HEAD) and writes; a preflight (OPTIONS)
 * is not limited. A worker with one route passes it once.
 */
export function routeFor(method: string, read: RateLimitRoute, write: RateLimitRoute = read): RateLimitRoute | undefined {
  if (method === "OPTIONS") return undefined;
  return method === "GET" || method === "HEAD" ? read : write;
}

/** A worker name (the part before the dot) and the routes it covers. */
function routesOfWorker(name: string): RateLimitRoute[] {
  return RATE_LIMIT_ROUTES.filter((route) => route === name || route.startsWith(`${name}.`));
}

const WORKERS: readonly string[] = [...new Set(RATE_LIMIT_ROUTES.map((route) => route.split(".")[0]!))];

const SYNTAX =
  'expected "off" or a comma list of name=N/W, where name is a route ' +
  `(${RATE_LIMIT_ROUTES.join(", ")}) or a worker (${WORKERS.join(", ")}), ` +
  "N a whole number of requests (at least 1) and W a window such as 60s, 5m, 1h or bare seconds (1 s to 24 h), " +
  "e.g. image.upload=30/60s,pdf=20/60s";

const ENTRY = /^([a-z]+(?:\.[a-z]+)?)\s*=\s*(\d+)\s*\/\s*(\d+)\s*([smh]?)$/i;
const UNIT_SECONDS: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600 };
const MAX_WINDOW_SECONDS = 86_400;
const MAX_LIMIT = 1_000_000_000;

function badEntry(entry: string, why: string): Error {
  return new Error(`bad entry "${entry}": ${why}; ${SYNTAX}`);
}

/**
 * Parses `RATE_LIMITS`. Unset or blank: {@link DEFAULT_RATE_LIMITS}. `off`: no limits.
 * Otherwise each `name=N/W` entry overrides the defaults of the route it names, or of every
 * route of the worker it names; an entry naming a route wins over its worker's entry,
 * whatever their order. Throws an `Error` naming the bad entry and the accepted syntax.
 */
export function parseRateLimits(value: string | undefined): RateLimits | "off" {
  const text = value?.trim() ?? "";
  if (text === "") return DEFAULT_RATE_LIMITS;
  if (text.toLowerCase() === "off") return "off";

  const byWorker = new Map<RateLimitRoute, RateRule>();
  const byRoute = new Map<RateLimitRoute, RateRule>();
  const seen = new Set<string>();
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue; // a trailing or doubled comma
    const match = ENTRY.exec(entry);
    if (!match) throw badEntry(entry, "not of the form name=N/W");
    const name = match[1]!.toLowerCase();
    const limit = Number(match[2]);
    const windowSeconds = Number(match[3]) * UNIT_SECONDS[match[4]!.toLowerCase()]!;
    if (seen.has(name)) throw badEntry(entry, `"${name}" is given twice`);
    seen.add(name);
    if (limit < 1 || limit > MAX_LIMIT) throw badEntry(entry, `the limit must be between 1 and ${MAX_LIMIT}`);
    if (windowSeconds < 1 || windowSeconds > MAX_WINDOW_SECONDS) {
      throw badEntry(entry, "the window must be between 1 second and 24 hours");
    }
    const rule: RateRule = Object.freeze({ limit, windowSeconds });
    if ((RATE_LIMIT_ROUTES as readonly string[]).includes(name)) {
      byRoute.set(name as RateLimitRoute, rule);
    } else if (WORKERS.includes(name)) {
      for (const route of routesOfWorker(name)) byWorker.set(route, rule);
    } else {
      throw badEntry(entry, `unknown route or worker "${name}"`);
    }
  }
  const limits = {} as Record<RateLimitRoute, RateRule>;
  for (const route of RATE_LIMIT_ROUTES) {
    limits[route] = byRoute.get(route) ?? byWorker.get(route) ?? DEFAULT_RATE_LIMITS[route];
  }
  return Object.freeze(limits);
}
