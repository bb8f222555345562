/**
 * @module
 * The client IP for a host app on `Deno.serve` that mounts the service.
 */
import { clientIpMiddleware, type HostMiddleware } from "../../core/http/worker-app.ts";

/** What `Deno.serve` passes as the second argument of the handler. */
interface DenoServeInfo {
  remoteAddr?: { hostname?: string };
}

/**
 * A middleware for your own Hono app served by `Deno.serve(app.fetch)`: passes the
 * connection's remote address to the service mounted in it, so per-IP rate limits count each
 * client (`serve` does this itself). Use it before `app.route(...)`.
 *
 * @example
 * ```ts
 * const app = new Hono();
 * app.use("*", passClientIp());
 * app.route("/forensic", createService(ports, config));
 * Deno.serve(app.fetch);
 * ```
 */
export function passClientIp(): HostMiddleware {
  return clientIpMiddleware((c) => (c.env as DenoServeInfo | undefined)?.remoteAddr?.hostname);
}
