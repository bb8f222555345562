/**
 * @module
 * The client IP for a host app on Cloudflare Workers that mounts the service.
 */
import { clientIpMiddleware, type HostMiddleware } from "../../core/http/worker-app.ts";

/**
 * A middleware for your own Hono app deployed as a Worker: passes `CF-Connecting-IP` (set by
 * Cloudflare, which a client cannot forge there) to the service mounted in it, so per-IP rate
 * limits count each client (`createCloudflareWorker` does this itself). Use it before
 * `app.route(...)`, and only on Cloudflare: elsewhere the header is whatever the client sent.
 *
 * @example
 * ```ts
 * const app = new Hono();
 * app.use("*", passClientIp());
 * app.route("/forensic", createService(ports, config));
 * export default app;
 * ```
 */
export function passClientIp(): HostMiddleware {
  return clientIpMiddleware((c) => c.req.header("CF-Connecting-IP"));
}
