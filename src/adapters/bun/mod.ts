/**
 * @module
 * The Bun adapter: `Bun.serve` over the embedded default stores.
 *
 * @example
 * ```ts
 * import { startServer } from "@forensic-annotation/service/bun";
 * const server = await startServer({ port: 8787, host: "127.0.0.1", dataDir: "./data", env: process.env });
 * ```
 */
export { bunListen, startServer } from "./serve.ts";
export { passClientIp } from "./client-ip.ts";
// For an app on Bun.serve of its own: what `serve` does to the URL Bun hands over when the Host is missing or not a host.
export { withReadableUrl } from "./request-url.ts";
export type { HostMiddleware } from "../../core/http/worker-app.ts";
export type { ConnectionLimits, Listen, Listening, RunningServer, ServeOptions } from "../server/start.ts";
