/**
 * @module
 * The request-body bytes the service reads into memory at once (`MAX_BODY_BYTES_IN_FLIGHT`),
 * shared by every route that reads a large body whole (image uploads, `/pdf`) in one process
 * or isolate: 60 uploads of 20 MB at once took a server to 1.13 GB. A request reserves its
 * body's size (the declared length, or the route's largest body when it streams one) before
 * a byte is read, and gives it back when its answer is made; requests over the budget wait,
 * in arrival order and unread (their bytes stay in the network's buffers; their number is
 * bounded by the connections the server holds), and a wait past `BODY_WAIT_SECONDS` is a 503
 * with `Retry-After` in the standard body, sent once the body is read and dropped (a client
 * still sending, as fetch does, reads no answer on a connection closed under it). A body
 * larger than the whole budget runs alone.
 *
 * @example
 * ```ts
 * app.openapi({ ...uploadRoute, middleware: reserveBodyBytes(sharedBodyBudget(config.maxBodyBytesInFlight), maxBytes) }, handler);
 * ```
 */
import type { MiddlewareHandler } from "hono";
import { DecodeBudget } from "../pdf/image/decode-budget.ts";
import { discardRest } from "./limits.ts";
import { ServiceError } from "../errors.ts";

/** The longest a request waits for room before its 503, unless `BODY_WAIT_SECONDS` says otherwise. */
export const BODY_WAIT_MS = 10_000;

/** How long a refused body is read and dropped at most, and how long it may stall, before its 503 closes the connection instead. */
const DRAIN_BOUND = { maxMs: 60_000, maxIdleMs: 10_000 };

/** A reservation older than this counts as given back (a request the runtime cancelled without its `finally`). */
const BODY_HOLD_MS = 10 * 60_000;

const budgets = new Map<string, DecodeBudget>();

/** The process's (or isolate's) one budget of `totalBytes`: every service made with the same limit and wait shares it. */
export function sharedBodyBudget(totalBytes: number, maxWaitMs = BODY_WAIT_MS): DecodeBudget {
  const name = `${totalBytes}/${maxWaitMs}`;
  let budget = budgets.get(name);
  if (budget === undefined) {
    budget = new DecodeBudget(totalBytes, {
      maxWaitMs,
      maxHoldMs: BODY_HOLD_MS,
      busyMessage: "The service is reading other large request bodies; try again shortly",
    });
    budgets.set(name, budget);
  }
  return budget;
}

/**
 * Reserves the request body's bytes in `budget` before the route reads it, and gives them back
 * once the route has answered. `maxBytes` is the route's largest body: a declared length above
 * it is left to the route's own refusal, unreserved.
 */
export function reserveBodyBytes(budget: DecodeBudget, maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const raw = c.req.raw;
    if (raw.body === null) return await next();
    const declared = raw.headers.get("content-length");
    const length = declared !== null && !raw.headers.has("transfer-encoding") && /^\d+$/.test(declared.trim()) ? Number(declared) : maxBytes;
    if (length === 0 || length > maxBytes) return await next();
    try {
      await budget.run(length, () => next());
    } catch (err) {
      // Refused before the route read anything: the body is dropped first, its memory never held.
      if (err instanceof ServiceError && err.kind === "unavailable" && !raw.bodyUsed) await discardRest(raw.body, { maxBytes: maxBytes, ...DRAIN_BOUND });
      throw err;
    }
  };
}
