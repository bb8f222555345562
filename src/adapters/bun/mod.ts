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
export type { HostMiddleware } from "../../core/http/worker-app.ts";
export type { Listen, Listening, RunningServer, ServeOptions } from "../server/start.ts";
