/**
 * @module
 * CORS for the one configured site origin (docs/api.md#cors). Mounted before authentication so a
 * browser's preflight is answered without credentials.
 *
 * The headers are set once, on the answer the handler (or the error handler) made: touching
 * the answer before the handler runs would make the runtime rebuild it afterwards.
 *
 * @example
 * ```ts
 * app.use("*", siteCors({ allowedOrigin: "https://lab.example", methods: ["GET", "PUT"] }));
 * ```
 */
import type { Context, MiddlewareHandler } from "hono";
import { editResponseHeaders } from "./response-headers.ts";
import type { WorkerEnv } from "./worker-env.ts";

/** Request headers a browser may send (docs/api.md#cors, and the identity token of docs/api.md#identity-tokens). */
export const ALLOWED_REQUEST_HEADERS = ["Content-Type", "X-Custom-Auth-Key", "Authorization", "X-Identity-Token"] as const;

/** Response headers a browser script may read (rate limits, and the report's file name). */
export const EXPOSED_RESPONSE_HEADERS = ["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Content-Disposition", "X-Request-Id"] as const;

/** Options of {@link siteCors}. */
export interface SiteCorsOptions {
  /** The single allowed origin; when unset no origin is allowed. */
  allowedOrigin: string | undefined;
  /** The worker's methods; OPTIONS is added. */
  methods: readonly string[];
}

const EXPOSED = EXPOSED_RESPONSE_HEADERS.join(",");
const ALLOWED = ALLOWED_REQUEST_HEADERS.join(",");
const MAX_AGE = "600";

/** The two halves of {@link siteCors}, for a middleware that runs them around its own `next()`. */
export interface CorsSteps {
  /**
   * Before the handler: a preflight's answer, or undefined after the CORS headers went into
   * the request's frame. `echoed` tells {@link CorsSteps.finish} whether the origin is allowed.
   */
  start(c: Context<WorkerEnv>): { preflight: Response } | { preflight: undefined; echoed: boolean };
  /** After the handler: the same headers on an answer that was not built with the frame. */
  finish(c: Context<WorkerEnv>, echoed: boolean): void;
}

/** {@link siteCors} as steps before and after the handler. */
export function siteCorsSteps(options: SiteCorsOptions): CorsSteps {
  const allowed = options.allowedOrigin;
  const methods = [...new Set([...options.methods, "OPTIONS"])].join(",");
  return {
    start(c) {
      const origin = c.req.header("origin");
      const echoed = allowed !== undefined && origin === allowed;
      if (c.req.method === "OPTIONS") {
        // A preflight is answered here; the frame's security headers are added on the way out.
        const headers: Record<string, string> = {};
        if (echoed) headers["Access-Control-Allow-Origin"] = allowed;
        headers["Access-Control-Expose-Headers"] = EXPOSED;
        headers["Access-Control-Max-Age"] = MAX_AGE;
        headers["Access-Control-Allow-Methods"] = methods;
        headers["Access-Control-Allow-Headers"] = ALLOWED;
        headers.Vary = "Origin, Access-Control-Request-Headers";
        return { preflight: new Response(null, { status: 204, statusText: "No Content", headers }) };
      }
      // The same headers go into the request's frame, for an answer built with them.
      const frame = c.get("frame");
      if (frame !== undefined) {
        if (echoed) frame["access-control-allow-origin"] = allowed;
        frame["access-control-expose-headers"] = EXPOSED;
        frame.vary = frame.vary === undefined ? "Origin" : `${frame.vary}, Origin`;
      }
      return { preflight: undefined, echoed };
    },
    finish(c, echoed) {
      if (c.res === c.get("framed")) return;
      editResponseHeaders(c, (headers) => {
        if (echoed) headers.set("Access-Control-Allow-Origin", allowed!);
        headers.set("Access-Control-Expose-Headers", EXPOSED);
        headers.append("Vary", "Origin");
      });
    },
  };
}

/** CORS middleware that echoes the origin only when it is the configured one. */
export function siteCors(options: SiteCorsOptions): MiddlewareHandler<WorkerEnv> {
  const steps = siteCorsSteps(options);
  return async (c, next) => {
    const started = steps.start(c);
    if (started.preflight !== undefined) return started.preflight;
    await next();
    steps.finish(c, started.echoed);
  };
}
