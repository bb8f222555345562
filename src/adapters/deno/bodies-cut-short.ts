/**
 * @module
 * A body cut short on Deno's `node:http` (2.9): when a client closes its side before the body it
 * announced has arrived, Node's parser reports it (`HPE_INVALID_EOF_STATE`, answered 400 by
 * ../server/client-error.ts); Deno's destroys the socket first and reports a reset, so nothing
 * could be answered. Here the 400 docs/api.md#errors names is written when the client's side
 * ends, before Deno's own listener runs.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import { BODY_CUT_SHORT } from "../../core/http/body.ts";
import { answerAndClose } from "../server/client-error.ts";

/** Makes `server` answer a request whose body the client cut short with 400, as on Node. */
export function answerBodiesCutShort(server: Server): void {
  const reading = new WeakMap<Socket, IncomingMessage>();
  server.on("request", (incoming: IncomingMessage) => reading.set(incoming.socket, incoming));
  // Before Deno's own listener, which adds its `end` listener to the socket.
  server.prependListener("connection", (socket: Socket) => {
    socket.once("end", () => {
      const incoming = reading.get(socket);
      // Not over an answer already on its way (a route that answered before reading the whole body).
      const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
      if (incoming !== undefined && !incoming.complete && socket.writable && !answering) answerAndClose(socket, 400, BODY_CUT_SHORT);
    });
  });
}
