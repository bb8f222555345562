/**
 * @module
 * The HTTP server of `serve` on Node and Deno: `node:http` with `@hono/node-server`, within the
 * connection limits (docs/configuration.md#connections). Deno runs Node's HTTP server ported
 * (its `node:http`), so both bound connections the same way.
 */
import type { AddressInfo } from "node:net";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { getRequestListener, type HttpBindings, RequestError } from "@hono/node-server";
import type { WorkerApp } from "../../core/http/worker-app.ts";
import { settleRequestBody } from "../../core/http/limits.ts";
import { lingerOnClose } from "./lingering-close.ts";
import { answerClientError } from "./client-error.ts";
import { errorAnswer } from "../../core/http/errors.ts";
import { serverAuthority } from "./request-url.ts";
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, type Listening } from "./start.ts";
import { headersTimeoutOptions, limitConnections } from "./connection-limits.ts";

/** An absolute-form request target without its user part; any other target as it is. */
function withoutUserPart(target: string): string {
  try {
    const url = new URL(target);
    if (url.username === "" && url.password === "") return target;
    url.username = "";
    url.password = "";
    return url.href;
  } catch {
    // Not a URL: the adapter refuses it as before.
    return target;
  }
}

/**
 * Listens with the runtime's `node:http` server, within `limits`; the client IP is the socket's
 * peer, and `openConnections` counts client connections. `prepare` adds the runtime's own
 * listeners to the server before it accepts anything.
 */
export async function listenWithNodeHttp(
  app: WorkerApp,
  address: { port: number; hostname: string },
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
  prepare?: (server: Server) => void,
): Promise<Listening> {
  const server = createServer(headersTimeoutOptions(limits));
  server.on("clientError", answerClientError);
  const connections = limitConnections(server, limits);
  prepare?.(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const listener = getRequestListener(
    (request, env) => {
      const { incoming } = env as HttpBindings;
      const answered = app.fetch(request, { clientIp: incoming.socket.remoteAddress });
      // The adapter gives a GET or HEAD request no body (null) whatever arrives: there is
      // nothing to settle (settleRequestBody returns the answer as it is), so no extra step.
      if (request.method === "GET" || request.method === "HEAD") return answered;
      // readableEnded: the body was read to its end, nothing of it is left. The answer goes back as
      // it came (no extra async step) then. `complete` is not enough: Deno's parser takes the whole
      // body while it still waits unread in the stream, which @hono/node-server then drains with a
      // 500 ms deadline that destroys the socket, by then carrying the next keep-alive request.
      const settle = (response: Response): Response | Promise<Response> =>
        incoming.readableEnded ? response : settleUnread(request, response, incoming);
      return answered instanceof Promise ? answered.then(settle) : settle(answered);
    },
    // serve() of @hono/node-server takes no error handler: its listener on Node's own server does.
    // A request without a Host is addressed to host:port (the port known once listening), as on Bun.
    { hostname: serverAuthority(address.hostname, port), errorHandler: answerUnbuiltRequest },
  );
  // Attached before the listen callback's tick ends: no request is read before it.
  const onRequest = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    // A connection refused over a limit was answered 503 already: nothing it sends is served.
    if (connections.isRefused(incoming.socket)) {
      incoming.socket.destroy();
      return;
    }
    // An absolute-form target may carry a user part (`http://u:p@host/…`), which a web Request
    // refuses: once anything read the request's body, that was a 500. Not part of the address.
    const target = incoming.url;
    if (target !== undefined && target.charCodeAt(0) !== 47 && target.includes("@")) incoming.url = withoutUserPart(target);
    // A request pipelined behind one still being answered gets its answer queued (no socket yet),
    // but Node runs its handler at once: a GET sent after a PUT read the state before the PUT.
    // It runs once the answer before it is done (Node hands the socket on then), in order (RFC 9112 9.3.2).
    if (outgoing.socket === null) outgoing.once("socket", () => void listener(incoming, outgoing));
    else return listener(incoming, outgoing);
  };
  server.on("request", onRequest);
  // An Expect other than 100-continue: answered as any request (as Bun and Deno do), where Node
  // would answer a bare 417 without the standard body.
  server.on("checkExpectation", onRequest);
  return {
    port,
    openConnections: connections.open,
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
}

/** Reads or refuses what is left of a request body the handler did not read whole; closes the connection when it must. */
async function settleUnread(request: Request, response: Response, incoming: HttpBindings["incoming"]): Promise<Response> {
  const settled = await settleRequestBody(request, response, { incomplete: !incoming.complete });
  if (settled.headers.get("Connection") === "close") lingerOnClose(incoming);
  return settled;
}

/**
 * The answer when no `Request` can be made of what Node parsed (a `\` in the path, a Host header
 * that is not one, a URL that is not one): the standard error body, where @hono/node-server
 * answers a bare 400. Anything else thrown on the way (never the service's own answers, which
 * its error handler makes) is a 500 in the same body.
 */
function answerUnbuiltRequest(err: unknown): Response {
  const refused = err instanceof RequestError;
  if (!refused) console.error(err);
  const status = refused ? 400 : 500;
  return errorAnswer(status, refused ? `The request cannot be read: ${err.message}` : "Internal Server Error");
}
