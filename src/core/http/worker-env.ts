/**
 * @module
 * The Hono environment every worker shares: what an adapter passes to `fetch`, and what the
 * middlewares of a request learn on the way.
 */
import type { Actor } from "../audit/service-events.ts";

/** What an adapter may pass as the second argument of `fetch`. */
export interface ServiceBindings {
  /** The client's IP address as the adapter saw it (socket peer, or CF-Connecting-IP on Cloudflare). */
  clientIp?: string;
}

/** What the middlewares of a request learn on the way (who acts, what was audited). */
export interface WorkerVariables {
  /** Who acts: set in identity mode or with the admin key. */
  actor?: Actor;
  /** True once a service audit entry was written for this request. */
  audited?: boolean;
  /** True once the security headers middleware runs for this request (outermost app only). */
  secured?: boolean;
  /** The headers every answer to this request carries (security headers, CORS), lower-case names. */
  frame?: Record<string, string>;
  /** The answer `answerWith` (worker-app.ts) built with the frame's headers in it: nothing to add afterwards. */
  framed?: Response;
  /** The path the innermost worker is mounted at (`""` when it is the app itself). */
  mount?: string;
  /** The client IP a host app's middleware set (`passClientIp` of each adapter); `ServiceBindings.clientIp` wins. */
  clientIp?: string;
  /** A page's own Content-Security-Policy, instead of the one that lets nothing load (the docs page). */
  contentSecurityPolicy?: string;
  /** The request's id (`X-Request-Id`), set by the outermost app. */
  requestId?: string;
  /** True when the request log reports a 5xx's cause (the error handler then writes nothing itself). */
  failuresLogged?: boolean;
}

/** The Hono environment of every worker. */
export interface WorkerEnv {
  /** What the adapter passes to `fetch` (the client IP). */
  Bindings: ServiceBindings;
  /**
   * Per-request values (the actor); internal.
   *
   * @ignore
   */
  Variables: WorkerVariables;
}
