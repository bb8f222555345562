/**
 * @module
 * CORS for the one configured site origin (spec 5.4). Mounted before authentication so a
 * browser's preflight is answered without credentials.
 *
 * @example
 * ```ts
 * app.use("*", siteCors({ allowedOrigin: "https://lab.example", methods: ["GET", "PUT"] }));
 * ```
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";

/** Request headers a browser may send (spec 5.4). */
export const ALLOWED_REQUEST_HEADERS = ["Content-Type", "X-Custom-Auth-Key", "Authorization"] as const;

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
    allowMethods: [...new Set([...options.methods, "OPTIONS"])],
    maxAge: 600,
  });
}
