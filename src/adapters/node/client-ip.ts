/**
 * @module
 * The client IP for a host app on `@hono/node-server` that mounts the service.
 */
import type { HttpBindings } from "@hono/node-server";
import { clientIpMiddleware, type HostMiddleware } from "../../core/http/worker-app.ts";

/**
 * A middleware for your own Hono app served by `@hono/node-server`: passes the socket peer's
 * address to the service mounted in it, so per-IP rate limits count each client (`serve`
 * does this itself). Use it before `app.route(...)`.
 *
 * @example
 * ```ts
 * const app = new Hono();
 * app.use("*", passClientIp());
 * app.route("/forensic", createService(ports, config));
 * serve({ fetch: app.fetch });
 * ```
 */
export function passClientIp(): HostMiddleware {
  return clientIpMiddleware((c) => (c.env as Partial<HttpBindings> | undefined)?.incoming?.socket?.remoteAddress);
}
