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

/**
 * What is wrong with a request Node's parser refuses (400), in a sentence: its codes
 * (`HPE_INVALID_METHOD`) are Node's, no part of the service's answers (docs/api.md#errors).
 */
const REASON_OF: Record<string, string> = {
  HPE_INVALID_METHOD: "The method is not one HTTP/1.1 knows (methods are written in upper case)",
  HPE_INVALID_URL: "The request target is not a valid path",
  HPE_INVALID_VERSION: "The HTTP version is not one the server speaks (HTTP/1.0 or HTTP/1.1)",
  HPE_INVALID_CONSTANT: "The request line is malformed",
  HPE_INVALID_HEADER_TOKEN: "A header's name or value holds a character HTTP does not allow there",
  HPE_INVALID_CONTENT_LENGTH: "Content-Length is not one decimal number",
  HPE_UNEXPECTED_CONTENT_LENGTH: "Content-Length and Transfer-Encoding are both given",
  HPE_INVALID_TRANSFER_ENCODING: "Transfer-Encoding is not chunked, or chunked is not its last coding",
  HPE_INVALID_CHUNK_SIZE: "A chunk's size is not a hexadecimal number",
  HPE_CHUNK_EXTENSIONS_OVERFLOW: "A chunk's extensions are too long",
  HPE_CR_EXPECTED: "A line does not end with CR LF",
  HPE_LF_EXPECTED: "A line does not end with CR LF",
};
const MALFORMED = "The request line, a header or the body's framing is malformed";

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
  if (err.code === "HPE_CLOSED_CONNECTION" || (err.code === "HPE_ERROR" && afterClosingRequest(socket))) {
    discardUntilClosed(socket, socket);
    return;
  }
  const status = STATUS_OF[err.code ?? ""] ?? 400;
  // A client that closes its side mid-request: said as the service says it of a body cut short (docs/api.md#errors).
  const cutShort = err.code === "HPE_INVALID_EOF_STATE";
  const message = cutShort ? BODY_CUT_SHORT : MESSAGE_OF[status]!;
  // A 408, a 431 and a body cut short are said in full by the message.
  const details = status === 400 && !cutShort ? { reason: REASON_OF[err.code ?? ""] ?? MALFORMED } : {};
  answerAndClose(socket, status, message, details);
}

/** Writes the standard error body on `socket` and closes it, lingering (see the module's comment). */
export function answerAndClose(socket: Socket, status: number, message: string, details: Record<string, unknown> = {}): void {
  const answer = errorBody(status, message, details);
  const body = JSON.stringify(answer);
  socket.end(
    `HTTP/1.1 ${status} ${answer.error}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
  // The parser is done with this socket: what still arrives is read and dropped until the client closes.
  discardUntilClosed(socket, socket);
}

/**
 * Whether the bytes that failed follow a whole request whose answer, still being made, closes the
 * connection (it said `Connection: close`): Deno's `node:http` (2.9) reports every parser error as
 * `HPE_ERROR`, these (Node's `HPE_CLOSED_CONNECTION`) included. A request still incomplete failed
 * in its own framing (`Transfer-Encoding: gzip`, a bad chunk): that is answered 400.
 */
function afterClosingRequest(socket: Socket): boolean {
  const answering = (socket as { _httpMessage?: { shouldKeepAlive?: boolean; req?: { complete?: boolean } } })._httpMessage;
  return answering?.shouldKeepAlive === false && answering.req?.complete === true;
}
