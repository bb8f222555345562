/**
 * @module
 * The Deno adapter: `serve` on Deno's `node:http` over the embedded default stores, Deno KV
 * stores, and what an app of your own on `Deno.serve` needs (the client IP, the URL as `serve` reads it).
 *
 * @example
 * ```ts
 * import { startServer } from "@forensic-annotation/service/deno";
 * const server = await startServer({ port: 8787, host: "127.0.0.1", dataDir: "./data", env: Deno.env.toObject() });
 * ```
 */
export { denoListen, startServer } from "./serve.ts";
export { passClientIp } from "./client-ip.ts";
// For an app on Deno.serve of its own: what Node's server (serve on Node and Deno) and workerd do to the URL Deno.serve hands over (./bun has its own).
export { answerUnreadableUrl } from "../server/request-url.ts";
export { withDotSegmentsResolved } from "./request-url.ts";
export type { HostMiddleware } from "../../core/http/worker-app.ts";
export { denoKvPorts, denoKvStorage } from "./kv-ports.ts";
export { createDenoKvBlobStore, createDenoKvStore, denoKvBackend, type DenoKvLike, type KvKey } from "./kv-blob-store.ts";
export type { ConnectionLimits, Listen, Listening, RunningServer, RuntimeStorage, ServeOptions, StoragePorts } from "../server/start.ts";
