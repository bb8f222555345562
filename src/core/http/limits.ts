/**
 * @module
 * Body size limits, and what happens to a body the service refused before reading it.
 *
 * A request larger than the limit is refused with 413 and the standard body, whether it
 * declares its length or streams it. A refusal (401, 403, 404, 413...) is often decided
 * before the body is read; HTTP/1.1 then leaves the rest of that body on the connection, and
 * a server that closes without saying so makes the client's next request on it fail.
 * {@link settleRequestBody} reads and discards that rest up to a bound, so the connection
 * carries the next request, or marks the answer `Connection: close` when the rest is larger.
 *
 * @example
 * ```ts
 * app.put("/*", limitBody(config.maxJsonBytes), handler);
 * // in an adapter:
 * const response = await settleRequestBody(request, await app.fetch(request));
 * ```
 */
import type { MiddlewareHandler } from "hono";
import { ServiceError } from "../errors.ts";
import { failedBodyRead } from "./body.ts";

/** How much of a refused body is read and discarded to keep the connection, and for how long. */
export interface UnreadBodyBound {
  /** Bytes read at most; a longer body closes the connection instead. */
  maxBytes: number;
  /** Milliseconds spent at most; a slower body closes the connection instead. */
  maxMs: number;
  /** Milliseconds waited at most for the next bytes; a body stalled longer closes the connection instead. Default `maxMs`. */
  maxIdleMs?: number;
}

/** A few MB: reading them costs less than a new connection; 100 MB is not worth reading. */
export const UNREAD_BODY_BOUND: UnreadBodyBound = { maxBytes: 8 * 1024 * 1024, maxMs: 3000 };

/** Whether the request declares a body longer than `maxBytes` (a `Content-Length` without chunked framing). */
export function declaresMoreThan(headers: Headers, maxBytes: number): boolean {
  const declared = headers.get("content-length");
  return declared !== null && !headers.has("transfer-encoding") && Number(declared) > maxBytes;
}

/** Refuses bodies over `maxBytes` with a 413 standard error body. */
export function limitBody(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const raw = c.req.raw;
    // The declared length is checked first: on Node, asking for the body stream turns the
    // adapter's light request into a full web Request, which a body read whole does not need.
    const declared = raw.headers.get("content-length");
    if (declared !== null && !raw.headers.has("transfer-encoding")) {
      // Refused unread: the adapter's settleRequestBody deals with the bytes still coming.
      if (Number(declared) > maxBytes && raw.body !== null) throw ServiceError.tooLarge(maxBytes);
      return await next();
    }
    if (raw.body === null) return await next();
    const reader = raw.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read().catch(failedBodyRead);
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        // Hand the rest back so settleRequestBody can discard it; cancelling could drop the connection.
        reader.releaseLock();
        throw ServiceError.tooLarge(maxBytes);
      }
      chunks.push(value);
    }
    const body = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      body.set(chunk, offset);
      offset += chunk.byteLength;
    }
    c.req.raw = new Request(raw, { body });
    await next();
  };
}

/** Resolves to `"timeout"` after `ms` unless `read` settles first. */
function readWithin<T>(read: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), Math.max(0, ms));
  });
  return Promise.race([read, timeout]).finally(() => clearTimeout(timer));
}

/** Reads and discards the rest of `body` within the bound; true when it ended. */
export async function discardRest(body: ReadableStream<Uint8Array>, bound: UnreadBodyBound): Promise<boolean> {
  const reader = body.getReader();
  const deadline = Date.now() + bound.maxMs;
  let read = 0;
  try {
    for (;;) {
      const next = await readWithin(reader.read(), Math.min(deadline - Date.now(), bound.maxIdleMs ?? Infinity));
      if (next === "timeout") return false;
      if (next.done) return true;
      read += next.value.byteLength;
      if (read > bound.maxBytes) return false;
    }
  } catch {
    // The client went away mid-body: there is no connection left to keep.
    return true;
  } finally {
    // Released, not cancelled: on some servers a cancelled body tears the connection down
    // before the answer is written. A read still pending is rejected by the release.
    try {
      reader.releaseLock();
    } catch {
      // Older stream implementations refuse to release with a read pending; nothing to do.
    }
  }
}

/** The answer with `Connection: close`, so the client opens a new connection for its next request. */
function closing(response: Response): Response {
  const answer = new Response(response.body, response);
  answer.headers.set("Connection", "close");
  return answer;
}

/** Options of {@link settleRequestBody}. */
export interface SettleOptions {
  /** How much to read and for how long; default {@link UNREAD_BODY_BOUND}. */
  bound?: UnreadBodyBound;
  /**
   * The adapter knows part of the body has not arrived yet. A body a handler holds locked is
   * then not assumed read to the end: the answer closes the connection.
   */
  incomplete?: boolean;
}

/**
 * Deals with the part of `request`'s body the app did not read before answering: reads and
 * discards it when it is within the bound, so the keep-alive connection carries the next
 * request, and otherwise returns the answer with `Connection: close`. Adapters call it on
 * every answer; a body the app read to the end costs nothing.
 */
export async function settleRequestBody(request: Request, response: Response, options: SettleOptions = {}): Promise<Response> {
  const bound = options.bound ?? UNREAD_BODY_BOUND;
  const body = request.body;
  if (body === null) return response;
  // Locked: a handler holds it, having read it to the end (limitBody releases what it refuses).
  if (body.locked) return options.incomplete === true ? closing(response) : response;
  if (!request.bodyUsed && declaresMoreThan(request.headers, bound.maxBytes)) return closing(response);
  return (await discardRest(body, bound)) ? response : closing(response);
}
