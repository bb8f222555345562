/**
 * @module
 * A lingering close for Node's HTTP server. When an answer says `Connection: close` while
 * the client is still sending a refused body, Node ends the socket and destroys it at once;
 * the bytes still arriving then make the kernel send a reset, which can destroy the answer
 * before the client has read it. Like nginx's `lingering_close`, the socket here sends its
 * FIN after the answer, keeps reading and discarding until the client closes or a few
 * seconds pass, and only then is destroyed.
 */
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Readable } from "node:stream";

/** How long a closing connection keeps discarding what the client still sends. */
export const LINGER_MS = 2000;

/**
 * Makes Node close `incoming`'s connection lingering once its answer is written: Node calls
 * `destroySoon()` on the socket after an answer marked `Connection: close`.
 */
export function lingerOnClose(incoming: IncomingMessage, lingerMs = LINGER_MS): void {
  const socket: Socket = incoming.socket;
  socket.destroySoon = function lingeringClose(this: Socket): void {
    this.end();
    discardUntilClosed(this, incoming, lingerMs);
  };
}

/**
 * After `socket` was ended (its FIN sent behind the answer): reads and drops what `source`
 * (the request, or the socket itself once no parser reads it) still brings, and destroys the
 * socket when the client closes its side or `lingerMs` pass.
 */
export function discardUntilClosed(socket: Socket, source: Readable, lingerMs = LINGER_MS): void {
  // As Node's own discard of an unread body: nothing reads it any more, let it flow away.
  source.removeAllListeners("data");
  source.resume();
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
  // The client read the answer and closed its side: nothing left to wait for.
  socket.once("end", () => socket.destroy());
}
