/**
 * @module
 * `serve` on Bun, with Bun's `node:http` server (../server/node-http-listen.ts, as on Node and
 * Deno), which enforces `MAX_CONNECTIONS`, `MAX_CONNECTIONS_PER_CLIENT` and
 * `HEADERS_TIMEOUT_SECONDS`; or, with `BUN_SERVER=bun-serve`, with `Bun.serve`, which offers no hook
 * at accept and no headers timeout but costs about 40 us less CPU a request
 * (docs/configuration.md#connections). The stores are the embedded default's files (Bun runs
 * `node:fs`).
 */
import type { WorkerApp } from "../../core/http/worker-app.ts";
import type { ConnectionLimits, Listen, Listening, RunningServer, ServeOptions } from "../server/start.ts";
import { listenWithNodeHttp } from "../server/node-http-listen.ts";
import { startService } from "../server/start.ts";
import { withReadableUrl } from "./request-url.ts";
import { serverAuthority } from "../server/request-url.ts";

/** The part of Bun's API this adapter uses (so it type-checks without Bun's types). */
interface BunServer {
  port: number;
  /** Requests in flight (their answers' bodies included). */
  pendingRequests: number;
  /** WebSockets open (none here: the service upgrades nothing). */
  pendingWebSockets: number;
  requestIP(request: Request): { address: string } | null;
  stop(closeActiveConnections?: boolean): Promise<void>;
}
interface BunApi {
  serve(options: {
    port: number;
    hostname: string;
    maxRequestBodySize?: number;
    fetch(request: Request, server: BunServer): Response | Promise<Response>;
  }): BunServer;
}

function bun(): BunApi {
  const api = (globalThis as { Bun?: BunApi }).Bun;
  if (!api) throw new Error("the Bun adapter runs under Bun");
  return api;
}

/**
 * Listens with Bun's `node:http` within the connection limits, as on Node; or, when
 * `limits.bunServe` (`BUN_SERVER=bun-serve`), with `Bun.serve`, whose client IP is
 * `server.requestIP`. `Bun.serve` counts no connections: the `/metrics` gauge is then its
 * requests in flight (`pendingRequests`, `pendingWebSockets`).
 */
export const bunListen: Listen = Object.assign((app: WorkerApp, address: { port: number; hostname: string }, limits?: ConnectionLimits): Promise<Listening> => {
  if (limits?.bunServe !== true) return listenWithNodeHttp(app, address, limits);
  let origin = "";
  const server = bun().serve({
    port: address.port,
    hostname: address.hostname,
    // Bun drops a connection whose body passes this (default 128 MiB) without an answer; the
    // routes' own limits answer 413 instead, and Bun discards the rest of a refused body.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    fetch: (request, srv) => {
      const readable = withReadableUrl(request, origin);
      return readable instanceof Response ? readable : app.fetch(readable, { clientIp: srv.requestIP(request)?.address });
    },
  });
  // A request without a Host is addressed to the server itself, as Node's server does.
  origin = `http://${serverAuthority(address.hostname, server.port)}`;
  // stop(false) stops accepting and resolves once in-flight requests are answered.
  return Promise.resolve({ port: server.port, close: () => server.stop(false), openConnections: () => server.pendingRequests + server.pendingWebSockets });
}, { countsConnections: true });

/** Starts the whole service on Bun over the embedded default (files under `dataDir`). */
export function startServer(options: ServeOptions): Promise<RunningServer> {
  return startService(options, bunListen);
}
