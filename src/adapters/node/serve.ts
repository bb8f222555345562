/**
 * @module
 * `serve` on Node, with `@hono/node-server`.
 */
import type { AddressInfo } from "node:net";
import { serve as serveHono, type HttpBindings } from "@hono/node-server";
import type { WorkerApp } from "../../core/http/worker-app.ts";
import { settleRequestBody } from "../../core/http/limits.ts";
import { lingerOnClose } from "./lingering-close.ts";
import { answerClientError } from "./client-error.ts";
import { type Listen, type Listening, type RunningServer, type ServeOptions, startService } from "../server/start.ts";

/** Listens with Node's HTTP server; the client IP is the socket's peer. */
export const nodeListen: Listen = async (app: WorkerApp, address: { port: number; hostname: string }): Promise<Listening> => {
  const server = await new Promise<ReturnType<typeof serveHono>>((resolve, reject) => {
    const started = serveHono(
      {
        fetch: (request, env) => {
          const { incoming } = env as HttpBindings;
          const answered = app.fetch(request, { clientIp: incoming.socket.remoteAddress });
          // The adapter gives a GET or HEAD request no body (null) whatever arrives: there is
          // nothing to settle (settleRequestBody returns the answer as it is), so no extra step.
          if (request.method === "GET" || request.method === "HEAD") return answered;
          // complete: the whole request arrived, nothing of it is left on the connection.
          // The answer goes back as it came (no extra async step) when it is.
          const settle = (response: Response): Response | Promise<Response> =>
            incoming.complete ? response : settleIncomplete(request, response, incoming);
          return answered instanceof Promise ? answered.then(settle) : settle(answered);
        },
        port: address.port,
        hostname: address.hostname,
      },
      () => resolve(started),
    );
    started.once("error", reject);
    started.on("clientError", answerClientError);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Keep-alive sockets would hold close() open: close each one as soon as its
        // in-flight request is answered.
        const sweep = setInterval(() => "closeIdleConnections" in server && server.closeIdleConnections(), 50);
        server.close((err) => {
          clearInterval(sweep);
          if (err) reject(err);
          else resolve();
        });
        if ("closeIdleConnections" in server) server.closeIdleConnections();
      }),
  };
};

/** Reads or refuses what is left of a request body the handler did not read whole; closes the connection when it must. */
async function settleIncomplete(request: Request, response: Response, incoming: HttpBindings["incoming"]): Promise<Response> {
  const settled = await settleRequestBody(request, response, { incomplete: true });
  if (settled.headers.get("Connection") === "close") lingerOnClose(incoming);
  return settled;
}

/** Starts the whole service on Node over the embedded default (files under `dataDir`). */
export function startServer(options: ServeOptions): Promise<RunningServer> {
  return startService(options, nodeListen);
}
