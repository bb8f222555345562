/**
 * @module
 * `serve` on Deno, with `Deno.serve`. The stores are the embedded default's files (Deno
 * runs `node:fs`); Deno KV is a storage backend of its own.
 */
import type { WorkerApp } from "../../core/http/worker-app.ts";
import type { Listen, Listening, RunningServer, ServeOptions } from "../server/start.ts";
import { startService } from "../server/start.ts";
import { denoKvStorage } from "./kv-ports.ts";
import { answerUnreadableUrl } from "../server/request-url.ts";
import { withDotSegmentsResolved } from "./request-url.ts";

/** The part of Deno's API this adapter uses (so it type-checks without Deno's types). */
interface DenoHttpServer {
  addr: { port: number };
  finished: Promise<void>;
  shutdown(): Promise<void>;
}
interface DenoApi {
  serve(
    options: { port: number; hostname: string; onListen?: (addr: { port: number }) => void },
    handler: (request: Request, info: { remoteAddr: { hostname: string }; completed?: Promise<void> }) => Response | Promise<Response>,
  ): DenoHttpServer;
}

function deno(): DenoApi {
  const api = (globalThis as { Deno?: DenoApi }).Deno;
  if (!api) throw new Error("the Deno adapter runs under Deno");
  return api;
}

/**
 * Listens with `Deno.serve`; the client IP is the connection's remote address. `Deno.serve` tells
 * nothing of its connections: the `/metrics` gauge counts requests in flight, each until its answer
 * is sent (`info.completed`).
 */
export const denoListen: Listen = Object.assign((app: WorkerApp, address: { port: number; hostname: string }): Promise<Listening> => {
  let inFlight = 0;
  const server = deno().serve(
    { port: address.port, hostname: address.hostname, onListen: () => {} },
    (request, info) => {
      if (info.completed !== undefined) {
        inFlight++;
        // Rejected when the client went before the answer's end: counted out all the same.
        void info.completed.catch(() => undefined).finally(() => inFlight--);
      }
      // Deno hands the URL over as sent: one that does not parse is refused, and dot segments are
      // resolved, as Node's and Bun's servers do before any code runs.
      return answerUnreadableUrl(request) ?? app.fetch(withDotSegmentsResolved(request), { clientIp: info.remoteAddr.hostname });
    },
  );
  // shutdown() stops accepting and resolves once in-flight requests are answered.
  return Promise.resolve({ port: server.addr.port, close: () => server.shutdown(), openConnections: () => inFlight });
}, { countsConnections: true });

/** Starts the whole service on Deno over the embedded default (files under `dataDir`). */
export function startServer(options: ServeOptions): Promise<RunningServer> {
  return startService(options, denoListen, denoKvStorage);
}
