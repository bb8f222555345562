/**
 * @module
 * What the outermost frame reports of each answered request (docs/operations.md): one log line
 * and the HTTP metrics, labelled by the route's pattern, never by the path a client sent.
 */
import type { Context } from "hono";
import { type LogLevel, type LogWrite, requestLogger, type RequestRecord, failureOf, logs } from "./request-log.ts";
import { createMetricsRegistry, type MetricsRegistry } from "./metrics.ts";

/** The methods counted by name; any other is `other`, so a client cannot mint label values. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** A documented route: its method and OpenAPI path (`/user/{userUid}`). */
export interface RouteDeclaration {
  method: string;
  path: string;
}

/** What the outermost frame knows of a request once its answer is ready. */
export interface AnsweredRequest {
  c: Context;
  requestId: string;
  /** The prefix the service is mounted under in a host app (`""` under `serve`). */
  prefix: string;
  startedAt: number;
  sub: string | undefined;
  /** True when a `security-violation` or other service entry was written for a refusal. */
  audited: boolean;
}

/** Receives every answered request of the service. */
export interface RequestObserver {
  answered(request: AnsweredRequest): void;
  /** Whether a 5xx's cause is logged here (the error handler then stays quiet). */
  readonly logsFailures: boolean;
}

/** Options of {@link createOperations}. */
export interface OperationsOptions {
  level: LogLevel;
  format: "json" | "text";
  write: LogWrite;
  /** The time of a log line (ISO 8601). */
  now: () => Date;
  /** Whether `/metrics` is served: without it no request is counted. */
  counting: boolean;
}

/** The request log and the metrics of one service. */
export interface Operations extends RequestObserver {
  readonly metrics: MetricsRegistry;
  /** Teaches the route patterns of the mounted workers (from their OpenAPI registry). */
  learnRoutes(routes: readonly RouteDeclaration[], workers: readonly string[]): void;
}

interface Pattern {
  method: string;
  regex: RegExp;
  path: string;
}

const parameters = (path: string): number => path.split("{").length - 1;

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The log and metrics, before any route is known (every path then reads as its first segment). */
export function createOperations(options: OperationsOptions): Operations {
  const log = requestLogger(options);
  const metrics = createMetricsRegistry();
  const requests = metrics.counter("http_requests_total", "Requests answered, by worker, route pattern, method and status.", ["worker", "route", "method", "status"]);
  const durations = metrics.histogram("http_request_duration_seconds", "Time to the answer's headers, in seconds.", ["worker", "route", "method"]);
  let patterns: Pattern[] = [];
  let mounts = new Set<string>();

  const routeOf = (method: string, path: string): string => {
    const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    // HEAD is answered by the GET route.
    const wanted = method === "HEAD" ? "GET" : method;
    for (const pattern of patterns) if ((pattern.method === wanted || pattern.method === "*") && pattern.regex.test(trimmed)) return pattern.path;
    for (const pattern of patterns) if (pattern.regex.test(trimmed)) return pattern.path;
    const first = /^\/[^/]*/.exec(trimmed)?.[0] ?? "/";
    return mounts.has(first) ? `${first}/*` : "unmatched";
  };

  return {
    metrics,
    logsFailures: options.level !== "off",
    learnRoutes(routes, workers) {
      // The most specific first: `/data/{userId}/{caseNumber}/data.json` before `.../{document}`.
      patterns = routes.map((route) => ({
        method: route.method.toUpperCase(),
        path: route.path,
        regex: new RegExp(`^${route.path.split(/\{[^}]+\}/).map(escapeRegex).join("[^/]+")}$`),
      })).sort((a, b) => parameters(a.path) - parameters(b.path));
      mounts = new Set(workers);
    },
    answered({ c, requestId, prefix, startedAt, sub, audited }) {
      const seconds = (performance.now() - startedAt) / 1000;
      const method = METHODS.has(c.req.method) ? c.req.method : "other";
      const path = c.req.path.startsWith(prefix) ? c.req.path.slice(prefix.length) || "/" : c.req.path;
      const route = routeOf(method, path);
      const segment = /^\/([^/{]+)/.exec(route)?.[1];
      const worker = segment !== undefined && mounts.has(`/${segment}`) ? segment : "service";
      const status = c.res.status;
      if (options.counting) {
        requests.inc({ worker, route, method, status: String(status) });
        durations.observe({ worker, route, method }, seconds);
      }
      const level = status >= 500 ? "error" : status >= 400 && audited ? "warn" : "info";
      if (!logs(options.level, level)) return;
      const length = c.res.headers.get("content-length");
      const record: RequestRecord = {
        time: options.now().toISOString(),
        level,
        requestId,
        method,
        route,
        status,
        durationMs: Math.round(seconds * 1e6) / 1000,
        ...(length !== null ? { bytes: Number(length) } : {}),
        worker,
        ...(sub !== undefined ? { sub } : {}),
        ...(status >= 500 && c.error !== undefined ? failureOf(c.error) : {}),
      };
      log(record);
    },
  };
}
