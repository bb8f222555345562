/**
 * @module
 * The edge where failures become HTTP answers: each kind of {@link ServiceError} its status
 * and headers, and every thrown value the standard error body (docs/api.md#errors). Workers
 * throw a `ServiceError` (or let Hono throw an `HTTPException`); the service's `onError`
 * calls {@link errorResponse}.
 */
import { HTTPException } from "hono/http-exception";
import type { Context } from "hono";
import type { ErrorBody, ErrorCode } from "../schemas/error.ts";
import { type FailureKind, ServiceError } from "../errors.ts";
import { failureOf } from "./request-log.ts";

const REASON: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The HTTP statuses the service answers failures with. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 429 | 500 | 502 | 503 | 504;

/** The status each kind of failure answers with. */
export const STATUS_OF_KIND: Readonly<Record<FailureKind, ErrorStatus>> = Object.freeze({
  invalid: 400,
  "method-not-allowed": 405,
  "too-large": 413,
  "unsupported-media-type": 415,
  unauthenticated: 401,
  forbidden: 403,
  conflict: 409,
  "rate-limited": 429,
  "not-found": 404,
  failed: 500,
  "upstream-failed": 502,
  unavailable: 503,
  "upstream-timeout": 504,
  // The stored bytes, not the request, are at fault: a 500 that says so, never garbage.
  "integrity-failed": 500,
});

/** The status a failure answers with. */
export function statusOf(err: ServiceError): ErrorStatus {
  return STATUS_OF_KIND[err.kind];
}

/** The kind a worker's refusal of a missing or wrong credential is (401 user worker, 403 the others). */
export function refusalKind(status: 401 | 403): FailureKind {
  return status === 401 ? "unauthenticated" : "forbidden";
}

/** The code of the error body for any status (for Hono's own exceptions). */
export function codeForStatus(status: number): ErrorCode {
  if (status === 401) return "UNAUTHORIZED";
  if (status === 403 || status === 429) return "FORBIDDEN";
  if (status === 404) return "NOT_FOUND";
  if (status === 409) return "CONFLICT";
  if (status >= 500) return "SERVER_ERROR";
  return "VALIDATION_ERROR";
}

/** A refusal that carries response headers of its own (rate limits: `Retry-After`, `X-RateLimit-*`). */
export class HttpRefusal extends ServiceError {
  /** Headers the answer carries. */
  readonly headers: Record<string, string>;

  /** Builds the refusal with its headers. */
  constructor(kind: FailureKind, message: string, details: Record<string, unknown>, headers: Record<string, string>) {
    super(kind, message, details);
    this.headers = headers;
  }
}

/** The standard body for a status and message. */
export function errorBody(status: number, message: string, details: Record<string, unknown> = {}): ErrorBody {
  return { error: REASON[status] ?? "Error", code: codeForStatus(status), message, details };
}

/**
 * An error in the standard body as a `Response`, for an adapter answering before any app runs
 * (a request the runtime could not make whole): the body every refusal carries, sniffing off.
 */
export function errorAnswer(status: number, message: string): Response {
  // The media type as every other answer names it (Bun's Response.json adds ";charset=utf-8").
  return new Response(JSON.stringify(errorBody(status, message)), { status, headers: { "Content-Type": "application/json", "X-Content-Type-Options": "nosniff" } });
}

/** The headers an error's answer carries: `Allow` on a 405, `Retry-After` on a busy 503, its own for an {@link HttpRefusal}. */
function headersOf(err: ServiceError): Record<string, string> {
  const headers: Record<string, string> = err instanceof HttpRefusal ? { ...err.headers } : {};
  const allowed = err.details.allowed;
  if (err.kind === "method-not-allowed" && Array.isArray(allowed)) headers.Allow = allowed.join(", ");
  const retryAfter = err.details.retryAfterSeconds;
  if ((err.kind === "unavailable" || err.kind === "rate-limited") && typeof retryAfter === "number") headers["Retry-After"] = String(retryAfter);
  return headers;
}

/** What the worker frame tells the error handler about the request (worker-app.ts sets them). */
type FrameVariables = { Variables: { requestId?: string; failuresLogged?: boolean } };

/** A 5xx's details carry the request id, so the operator finds the cause in the log (docs/operations.md#logs). */
function withRequestId(c: Context, status: number, details: Record<string, unknown>): Record<string, unknown> {
  const requestId = status >= 500 ? (c as Context<FrameVariables>).get("requestId") : undefined;
  return requestId === undefined ? details : { ...details, requestId };
}

/** Renders any thrown value as the standard error body; unknown errors become SERVER_ERROR. */
export function errorResponse(err: unknown, c: Context): Response {
  if (err instanceof ServiceError) {
    const status = STATUS_OF_KIND[err.kind];
    return c.json(errorBody(status, err.message, withRequestId(c, status, err.details)), status, headersOf(err));
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    const message = status >= 500 ? "Internal server error" : err.message || (REASON[status] ?? "Error");
    // Hono's own exceptions (validator, body limit) carry no secrets; keep their headers.
    const headers: Record<string, string> = {};
    err.getResponse().headers.forEach((value, key) => {
      if (key.toLowerCase() !== "content-type" && key.toLowerCase() !== "content-length") headers[key] = value;
    });
    return c.json(errorBody(status, message, withRequestId(c, status, {})), status as ErrorStatus, headers);
  }
  // The request log writes the cause with its stack; without one, a line here.
  if ((c as Context<FrameVariables>).get("failuresLogged") !== true) {
    console.error("unhandled error:", failureOf(err).error);
  }
  return c.json(errorBody(500, "Internal server error", withRequestId(c, 500, {})), 500);
}
