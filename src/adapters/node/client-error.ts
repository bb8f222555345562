/**
 * @module
 * What Node's HTTP server answers to bytes it cannot parse as a request (a header block or URL
 * past its 16 KiB limit, a malformed request line, chunk or header): the standard error body,
 * as every other refusal of the service, where Node writes a bare status line; and the
 * connection closes lingering, so a client still sending (a 100 KB URL) reads the answer
 * instead of a reset.
 */
import type { Socket } from "node:net";
import { errorBody } from "../../core/http/errors.ts";
import { BODY_CUT_SHORT } from "../../core/http/body.ts";
import { discardUntilClosed } from "./lingering-close.ts";

/** Node's parser errors by the status they are answered with; any other is a 400. */
const STATUS_OF: Record<string, number> = { HPE_HEADER_OVERFLOW: 431, ERR_HTTP_REQUEST_TIMEOUT: 408 };

const MESSAGE_OF: Record<number, string> = {
  400: "The request is not valid HTTP/1.1",
  408: "The request did not arrive in time",
  431: "The request's URL and headers exceed the server's limit (Node's --max-http-header-size, 16 KiB unless set)",
};

/** A `clientError` listener for a `node:http` server (see the module's comment). */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // As Node's own handler: nothing to answer on a socket already reset, closing, or mid-answer.
  const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (err.code === "ECONNRESET" || !socket.writable || answering) {
    socket.destroy();
    return;
  }
  // Bytes after a request that said Connection: close are no request (RFC 9112 9.6): that
  // request's answer, still on its way, is written and closes the connection; the rest is dropped.
  if (err.code === "HPE_CLOSED_CONNECTION") {
    discardUntilClosed(socket, socket);
    return;
  }
  const status = STATUS_OF[err.code ?? ""] ?? 400;
  // A client that closes its side mid-request: said as the service says it of a body cut short (docs/api.md#errors).
  const message = err.code === "HPE_INVALID_EOF_STATE" ? BODY_CUT_SHORT : MESSAGE_OF[status]!;
  const answer = errorBody(status, message, err.code === undefined ? {} : { reason: err.code });
  const body = JSON.stringify(answer);
  socket.end(
    `HTTP/1.1 ${status} ${answer.error}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
  // The parser is done with this socket: what still arrives is read and dropped until the client closes.
  discardUntilClosed(socket, socket);
}
