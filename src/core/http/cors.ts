/**
 * @module
 * CORS for the one configured site origin (docs/api.md#cors). Mounted before authentication so a
 * browser's preflight is answered without credentials.
 *
 * @example
 * ```ts
 * app.use("*", siteCors({ allowedOrigin: "https://lab.example", methods: ["GET", "PUT"] }));
 * ```
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";

/** Request headers a browser may send (docs/api.md#cors, and the identity token of docs/api.md#identity-tokens). */
export const ALLOWED_REQUEST_HEADERS = ["Content-Type", "X-Custom-Auth-Key", "Authorization", "X-Identity-Token"] as const;

/** Response headers a browser script may read (rate limits, and the report's file name). */
export const EXPOSED_RESPONSE_HEADERS = ["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Content-Disposition"] as const;

/** Options of {@link siteCors}. */
export interface SiteCorsOptions {
  /** The single allowed origin; when unset no origin is allowed. */
  allowedOrigin: string | undefined;
  /** The worker's methods; OPTIONS is added. */
  methods: readonly string[];
}

/** CORS middleware that echoes the origin only when it is the configured one. */
export function siteCors(options: SiteCorsOptions): MiddlewareHandler {
  const allowed = options.allowedOrigin;
  return cors({
    origin: (origin) => (allowed !== undefined && origin === allowed ? allowed : null),
    allowHeaders: [...ALLOWED_REQUEST_HEADERS],
    exposeHeaders: [...EXPOSED_RESPONSE_HEADERS],
    allowMethods: [...new Set([...options.methods, "OPTIONS"])],
    maxAge: 600,
  });
}
