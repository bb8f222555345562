/**
 * @module
 * The connections Node's HTTP server holds (docs/configuration.md#connections). Without bounds,
 * about 21,000 connections that sent part of a header and stopped held every descriptor for
 * ~80 s each (Node's 60 s headers timeout, checked every 30 s): new clients got empty replies
 * and established ones a 500 (EMFILE) on every file read. Here a connection over
 * `maxConnections` is closed at accept, one over `maxConnectionsPerClient` from its address is
 * answered 503 with `Retry-After` and closed, and headers slower than `headersTimeoutSeconds`
 * are answered 408 (client-error.ts) and closed within a second of the timeout.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import { errorBody } from "../../core/http/errors.ts";
import type { ConnectionLimits } from "./start.ts";

/** How often Node looks for headers past their timeout (its default is 30 s). */
const CHECK_INTERVAL_MS = 500;

/** A refused connection's answer may be read for this long before the socket is destroyed. */
const REFUSED_LINGER_MS = 1000;

/** Retry-After of a client over its connection limit: its other connections' keep-alive ends within seconds. */
const RETRY_AFTER_SECONDS = 5;

/** The options of `createServer` that time out slow headers. */
export function headersTimeoutOptions(limits: ConnectionLimits): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } {
  const headersTimeout = limits.headersTimeoutSeconds * 1000;
  // Node's default request timeout (300 s), never below the headers timeout (Node refuses that).
  return { headersTimeout, requestTimeout: Math.max(300_000, headersTimeout), connectionsCheckingInterval: CHECK_INTERVAL_MS };
}

/** The whole answer to a client over its limit, written before any request is read. */
function busyAnswer(): string {
  const body = JSON.stringify(errorBody(503, "Too many connections from this address; close some or try again shortly", { retryAfterSeconds: RETRY_AFTER_SECONDS }));
  return `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Retry-After: ${RETRY_AFTER_SECONDS}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`;
}

/** What {@link limitConnections} keeps of a server's connections. */
export interface HeldConnections {
  /** Whether a socket was refused: its requests, if Node parses any before it is gone, must not be served. */
  isRefused(socket: Socket): boolean;
  /** The connections open now (the `/metrics` gauge), refused ones still closing included. */
  open(): number;
}

/**
 * Counts `server`'s connections, in all and per client address, and refuses those over the
 * limits before Node's HTTP layer reads from them.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): HeldConnections {
  const refused = new WeakSet<Socket>();
  const perClient = new Map<string, number>();
  let open = 0;
  // Before Node's own listener, which starts reading.
  server.prependListener("connection", (socket: Socket) => {
    if (open >= limits.maxConnections) {
      refused.add(socket);
      socket.destroy();
      return;
    }
    open++;
    const address = socket.remoteAddress ?? "";
    const count = perClient.get(address) ?? 0;
    if (count >= limits.maxConnectionsPerClient) {
      refused.add(socket);
      socket.once("close", () => open--);
      socket.on("error", () => {});
      socket.end(busyAnswer());
      setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
      return;
    }
    perClient.set(address, count + 1);
    socket.once("close", () => {
      open--;
      const left = (perClient.get(address) ?? 1) - 1;
      if (left === 0) perClient.delete(address);
      else perClient.set(address, left);
    });
  });
  return { isRefused: (socket) => refused.has(socket), open: () => open };
}
