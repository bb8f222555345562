/**
 * @module
 * `serve` on Deno, with Deno's `node:http` server (../server/node-http-listen.ts, as on Node).
 * `Deno.serve` offers no hook at accept and no headers timeout: a connection that sends part of
 * a header is held until the client goes. Deno's `node:http` is Node's HTTP server ported: its
 * `connection` event gives the peer's address and it honours `headersTimeout`, so `serve` bounds
 * connections on Deno as on Node (docs/configuration.md#connections), for no more CPU per
 * request than `Deno.serve` took. The stores are the embedded default's files (Deno runs
 * `node:fs`); Deno KV is a storage backend of its own.
 */
import type { WorkerApp } from "../../core/http/worker-app.ts";
import type { ConnectionLimits, Listen, Listening, RunningServer, ServeOptions } from "../server/start.ts";
import { startService } from "../server/start.ts";
import { listenWithNodeHttp } from "../server/node-http-listen.ts";
import { answerBodiesCutShort } from "./bodies-cut-short.ts";
import { denoKvStorage } from "./kv-ports.ts";

/**
 * Listens with Deno's `node:http` server within `limits`; the client IP is the socket's peer, and
 * the `/metrics` gauge counts client connections.
 */
export const denoListen: Listen = Object.assign(
  (app: WorkerApp, address: { port: number; hostname: string }, limits?: ConnectionLimits): Promise<Listening> =>
    listenWithNodeHttp(app, address, limits, answerBodiesCutShort),
  { countsConnections: true },
);

/** Starts the whole service on Deno over the embedded default (files under `dataDir`). */
export function startServer(options: ServeOptions): Promise<RunningServer> {
  return startService(options, denoListen, denoKvStorage);
}
