/**
 * A minimal HTTP/1.1 client over one `node:net` socket, so a test controls keep-alive
 * exactly: it writes a request's whole body even when the answer comes first (as RFC 9112
 * asks of clients that do not close), reads the answer while writing, and reuses the same
 * socket for the next request unless the server announced `Connection: close`.
 */
import { connect, type Socket } from "node:net";

/** One parsed answer. */
export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
  /** The server announced `Connection: close` (the socket is not reused). */
  closing: boolean;
}

/** A request body: bytes, or `size` bytes of `x` streamed in 64 KiB writes (for 100 MB+). */
export type RawBody = Uint8Array | { size: number; chunked?: boolean };

const CHUNK = new Uint8Array(64 * 1024).fill(0x78);

/** Where a header block ends, or -1. */
function headEnd(buffer: Buffer): number {
  return buffer.indexOf("\r\n\r\n");
}

/**
 * Parses one complete response from `buffer`, or returns undefined while it is incomplete. With
 * `untilEnd`, a body with neither a length nor chunks (HTTP/1.0) runs to the connection's end:
 * complete once `ended`; otherwise such a body is read as empty.
 */
function parseResponse(buffer: Buffer, untilEnd?: { ended: boolean; bodyless?: boolean }): { response: RawResponse; rest: Buffer } | undefined {
  const end = headEnd(buffer);
  if (end < 0) return undefined;
  const [statusLine, ...lines] = buffer.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1]);
  if (!Number.isInteger(status)) throw new Error(`not an HTTP response: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let offset = end + 4;
  let body: Buffer;
  // The answer to a HEAD has no body, whatever its Content-Length says (RFC 9110 9.3.2).
  if (untilEnd?.bodyless === true) {
    body = Buffer.alloc(0);
  } else if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buffer.indexOf("\r\n", offset);
      if (lineEnd < 0) return undefined;
      const size = parseInt(buffer.subarray(offset, lineEnd).toString("latin1"), 16);
      if (buffer.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      offset = lineEnd + 2 + size + 2;
      if (size === 0) break;
    }
    body = Buffer.concat(parts);
  } else if (untilEnd !== undefined && headers["content-length"] === undefined && status !== 204 && status !== 304) {
    if (!untilEnd.ended) return undefined;
    body = buffer.subarray(offset);
    offset = buffer.length;
  } else {
    const length = status === 204 || status === 304 ? 0 : Number(headers["content-length"] ?? 0);
    if (buffer.length < offset + length) return undefined;
    body = buffer.subarray(offset, offset + length);
    offset += length;
  }
  const closing = /\bclose\b/i.test(headers["connection"] ?? "");
  return { response: { status, headers, body: body.toString("utf8"), closing }, rest: buffer.subarray(offset) };
}

/** One keep-alive connection to `http://host:port`. */
export class RawConnection {
  /** How many TCP connections this client has opened (1 while the server keeps the first alive). */
  connections = 0;
  private socket: Socket | undefined;
  private received: Buffer = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  private ended = false;
  private failure: Error | undefined;

  constructor(private readonly url: URL) {}

  /** The socket in use, opening one when the last was closed as the server announced. */
  private async open(): Promise<Socket> {
    if (this.socket) {
      if (this.ended || this.failure) throw new Error(`the server closed the connection without announcing it (${this.failure?.message ?? "FIN"})`);
      return this.socket;
    }
    const socket = connect({ host: this.url.hostname, port: Number(this.url.port) });
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    this.connections += 1;
    this.received = Buffer.alloc(0);
    this.ended = false;
    this.failure = undefined;
    socket.on("data", (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.waiting?.();
    });
    socket.on("end", () => {
      this.ended = true;
      this.waiting?.();
    });
    socket.on("error", (err) => {
      this.failure = err;
      this.waiting?.();
    });
    this.socket = socket;
    return socket;
  }

  /** Writes the body in pieces, waiting for the socket to drain; stops when told to. */
  private async writeBody(socket: Socket, body: RawBody | undefined, stop: { now: boolean }): Promise<void> {
    if (body === undefined) return;
    const chunked = !(body instanceof Uint8Array) && body.chunked === true;
    const pieces = function* (): Generator<Uint8Array> {
      if (body instanceof Uint8Array) {
        for (let at = 0; at < body.length; at += CHUNK.length) yield body.subarray(at, at + CHUNK.length);
        return;
      }
      for (let left = body.size; left > 0; left -= CHUNK.length) yield CHUNK.subarray(0, Math.min(left, CHUNK.length));
    };
    for (const piece of pieces()) {
      if (stop.now || socket.destroyed) return;
      const framed = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]) : piece;
      if (!socket.write(framed)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            socket.off("drain", done).off("close", done);
            resolve();
          };
          socket.once("drain", done).once("close", done);
        });
      }
    }
    if (chunked && !stop.now && !socket.destroyed) socket.write("0\r\n\r\n");
  }

  /** Waits until a whole response is buffered, the socket ends, or `timeoutMs` passes. */
  private async readResponse(timeoutMs: number): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = parseResponse(this.received);
      if (parsed) {
        this.received = parsed.rest;
        return parsed.response;
      }
      if (this.ended || this.failure) {
        throw new Error(`no complete response: the connection ${this.failure ? `failed (${this.failure.message})` : "was closed"} after ${this.received.length} bytes`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          this.waiting = undefined;
          resolve();
        };
      });
    }
  }

  /**
   * Sends one request and reads its answer. The whole body is written unless the server
   * announces `Connection: close`; the call resolves only once the socket is ready for the
   * next request (or closed as announced), so a server that neither reads nor closes fails it.
   */
  async send(method: string, path: string, headers: Record<string, string> = {}, body?: RawBody, timeoutMs = 30_000): Promise<RawResponse> {
    const socket = await this.open();
    const size = body === undefined ? 0 : body instanceof Uint8Array ? body.length : body.size;
    const chunked = body !== undefined && !(body instanceof Uint8Array) && body.chunked === true;
    const head = [
      `${method} ${path} HTTP/1.1`,
      `Host: ${this.url.host}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      ...(body === undefined ? [] : [chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${size}`]),
      "",
      "",
    ].join("\r\n");
    socket.write(head);
    const stop = { now: false };
    const written = this.writeBody(socket, body, stop);
    const response = await this.readResponse(timeoutMs);
    if (response.closing) {
      stop.now = true;
      this.close();
      return response;
    }
    const sent = await Promise.race([written.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs))]);
    if (!sent) throw new Error(`${method} ${path}: the server answered ${response.status} but neither read the body nor closed within ${timeoutMs} ms`);
    return response;
  }

  /** Closes the socket; the next `send` opens a new one. */
  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }
}

/**
 * One connection: `write` sends the request bytes, and the promise resolves with what `complete`
 * makes of the bytes received once it makes something; it rejects when the connection closes
 * first (saying what `incomplete` says) or after `timeoutMs`.
 */
async function exchange<T>(
  url: URL,
  write: (socket: Socket) => Promise<void>,
  complete: (received: Buffer, ended: boolean) => T | undefined,
  incomplete: (received: Buffer) => string,
  timeoutMs: number,
): Promise<T> {
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  let received: Buffer = Buffer.alloc(0);
  try {
    return await new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no response within ${timeoutMs} ms`)), timeoutMs);
      const check = (ended: boolean) => {
        const done = complete(received, ended);
        if (done !== undefined) {
          clearTimeout(timer);
          resolve(done);
        } else if (ended) {
          clearTimeout(timer);
          reject(new Error(incomplete(received)));
        }
      };
      socket.on("data", (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        check(false);
      });
      socket.once("end", () => check(true));
      socket.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.once("connect", () => write(socket).catch(reject));
    });
  } finally {
    socket.destroy();
  }
}

/** Writes `requests` in one packet (pipelined, RFC 9112 9.3.2) and reads their answers in order. */
export function sendPipelined(url: URL, requests: string[], timeoutMs = 15_000): Promise<RawResponse[]> {
  const answersIn = (received: Buffer): RawResponse[] => {
    const answers: RawResponse[] = [];
    let rest = received;
    for (const request of requests) {
      const parsed = parseResponse(rest, { ended: false, bodyless: request.startsWith("HEAD ") });
      if (parsed === undefined) break;
      answers.push(parsed.response);
      rest = parsed.rest;
    }
    return answers;
  };
  return exchange(
    url,
    async (socket) => void socket.write(requests.join("")),
    (received) => {
      const answers = answersIn(received);
      return answers.length === requests.length ? answers : undefined;
    },
    (received) => `${answersIn(received).length} of ${requests.length} answers before the connection was closed`,
    timeoutMs,
  );
}

/**
 * Writes `request` as given (head and body, however malformed; pieces of an async iterable
 * as they come, to send a body slowly) on a new socket and reads one answer; the socket is
 * closed afterwards.
 */
export function sendRawBytes(url: URL, request: string | Uint8Array | AsyncIterable<string | Uint8Array>, timeoutMs = 15_000, options: { halfClose?: boolean } = {}): Promise<RawResponse> {
  const bodyless = typeof request === "string" && request.startsWith("HEAD ");
  return exchange(
    url,
    async (socket) => {
      if (typeof request === "string" || request instanceof Uint8Array) socket.write(request);
      else for await (const piece of request) socket.write(piece);
      // The client closes its side: no more bytes will come.
      if (options.halfClose === true) socket.end();
    },
    (received, ended) => parseResponse(received, { ended, bodyless })?.response,
    (received) => `no complete response: the connection was closed after ${received.length} bytes`,
    timeoutMs,
  );
}
