/**
 * @module
 * `serve` on Node, with `node:http` and `@hono/node-server` (../server/node-http-listen.ts).
 */
import type { WorkerApp } from "../../core/http/worker-app.ts";
import type { ConnectionLimits, Listen, Listening, RunningServer, ServeOptions } from "../server/start.ts";
import { startService } from "../server/start.ts";
import { listenWithNodeHttp } from "../server/node-http-listen.ts";

/** Listens with Node's HTTP server, within `limits`; the client IP is the socket's peer. */
export const nodeListen: Listen = Object.assign(
  (app: WorkerApp, address: { port: number; hostname: string }, limits?: ConnectionLimits): Promise<Listening> => listenWithNodeHttp(app, address, limits),
  { countsConnections: true },
);

/** Starts the whole service on Node over the embedded default (files under `dataDir`). */
export function startServer(options: ServeOptions): Promise<RunningServer> {
  return startService(options, nodeListen);
}
