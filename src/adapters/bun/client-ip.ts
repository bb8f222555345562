/**
 * @module
 * The client IP for a host app on `Bun.serve` that mounts the service.
 */
import { clientIpMiddleware, type HostMiddleware } from "../../core/http/worker-app.ts";

/** What Bun passes as the second argument of `fetch` (the server), or a wrapper holding it. */
interface BunServerLike {
  requestIP?(request: Request): { address: string } | null;
  server?: BunServerLike;
}

/**
 * A middleware for your own Hono app served by Bun (`export default app` or
 * `Bun.serve({ fetch: app.fetch })`): passes `server.requestIP(request)` to the service
 * mounted in it, so per-IP rate limits count each client (`serve` does this itself). Use it
 * before `app.route(...)`.
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
  return clientIpMiddleware((c) => {
    const env = c.env as BunServerLike | undefined;
    const server = typeof env?.requestIP === "function" ? env : env?.server;
    return server?.requestIP?.(c.req.raw)?.address;
  });
}
