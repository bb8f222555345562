/**
 * @module
 * The one place that turns failures into the standard error body of spec section 7.
 * Workers throw a {@link ServiceError} (or let Hono throw an `HTTPException`); the
 * service's `onError` calls {@link errorResponse}.
 *
 * @example
 * ```ts
 * throw ServiceError.validation("startDate must be YYYY-MM-DD", { field: "startDate" });
 * ```
 */
import { HTTPException } from "hono/http-exception";
import type { Context } from "hono";
import type { ErrorBody, ErrorCode } from "../schemas/error.ts";

const REASON: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The spec knows five codes; every status maps onto one of them. */
export function codeForStatus(status: number): ErrorCode {
  if (status === 401) return "UNAUTHORIZED";
  if (status === 403 || status === 429) return "FORBIDDEN";
  if (status === 404) return "NOT_FOUND";
  if (status >= 500) return "SERVER_ERROR";
  return "VALIDATION_ERROR";
}

/** The HTTP statuses a {@link ServiceError} may carry (spec section 7.3, plus 413, 415, 429 and 502-504). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 413 | 415 | 429 | 500 | 502 | 503 | 504;

/** A failure with a stable spec code, an HTTP status and details safe to show a client. */
export class ServiceError extends Error {
  /** The HTTP status the error answers with. */
  readonly status: ErrorStatus;
  /** The spec code of the status (spec section 7.2), e.g. `VALIDATION_ERROR` for 400. */
  readonly code: ErrorCode;
  /** Facts safe to show the client (a field name, a limit), sent as `details`. */
  readonly details: Record<string, unknown>;
  /** Extra response headers, e.g. `Allow` on a 405. */
  readonly headers: Record<string, string>;

  /** Builds an error; the code follows from the status. */
  constructor(
    status: ErrorStatus,
    message: string,
    details: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ServiceError";
    this.status = status;
    this.code = codeForStatus(status);
    this.details = details;
    this.headers = headers;
  }

  /** 400 `VALIDATION_ERROR`: the request data is invalid (a bad key, date or body). */
  static validation(message: string, details: Record<string, unknown> = {}): ServiceError {
    return new ServiceError(400, message, details);
  }
  /** 401 `UNAUTHORIZED`: the user worker's missing or wrong `X-Custom-Auth-Key` (spec 5.2). */
  static unauthorized(message = "Missing or invalid authentication"): ServiceError {
    return new ServiceError(401, message);
  }
  /** 403 `FORBIDDEN`: a missing or wrong key or token on the data, image, keys and audit endpoints (spec 5.2). */
  static forbidden(message = "Missing or invalid authentication", details: Record<string, unknown> = {}): ServiceError {
    return new ServiceError(403, message, details);
  }
  /** 404 `NOT_FOUND`: no such case file, user, image or key. */
  static notFound(message: string, details: Record<string, unknown> = {}): ServiceError {
    return new ServiceError(404, message, details);
  }
  /** 405 with an `Allow` header naming the methods the path does accept. */
  static methodNotAllowed(allowed: readonly string[]): ServiceError {
    return new ServiceError(405, `Method not allowed; allowed: ${allowed.join(", ")}`, { allowed }, {
      Allow: allowed.join(", "),
    });
  }
  /** 413: the request body exceeds the limit (e.g. `MAX_JSON_BYTES`). */
  static tooLarge(limitBytes: number): ServiceError {
    return new ServiceError(413, `Request body exceeds ${limitBytes} bytes`, { limitBytes });
  }
  /** A dependency (store, upstream service) failed; the message must not leak internals. */
  static server(message = "Internal server error", status: 500 | 502 | 503 | 504 = 500): ServiceError {
    return new ServiceError(status, message);
  }
}

/** The standard body for a status, code and message. */
export function errorBody(status: number, message: string, details: Record<string, unknown> = {}): ErrorBody {
  return { error: REASON[status] ?? "Error", code: codeForStatus(status), message, details };
}

/**
 * Removes what looks like a credential from a log line: URL user-info, `password=`-style
 * pairs, bearer tokens and JWTs. Error messages of drivers (Redis, S3, SMTP) can carry
 * connection strings; logs must never hold secrets or tokens.
 */
export function redactSecrets(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, "$1[redacted]@")
    .replace(/\b(password|passwd|pwd|secret|token|api[_-]?key|auth[_-]?key|authorization|signature|sig)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&]+)/gi, "$1$2[redacted]")
    .replace(/\bBearer\s+[\w.~+/=-]+/gi, "Bearer [redacted]")
    .replace(/\beyJ[\w-]+\.[\w-]+\.[\w-]*/g, "[redacted token]");
}

/** Renders any thrown value as the standard error body; unknown errors become SERVER_ERROR. */
export function errorResponse(err: unknown, c: Context): Response {
  if (err instanceof ServiceError) {
    return c.json(errorBody(err.status, err.message, err.details), err.status, err.headers);
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    const message = status >= 500 ? "Internal server error" : err.message || (REASON[status] ?? "Error");
    // Hono's own exceptions (validator, body limit) carry no secrets; keep their headers.
    const headers: Record<string, string> = {};
    err.getResponse().headers.forEach((value, key) => {
      if (key.toLowerCase() !== "content-type" && key.toLowerCase() !== "content-length") headers[key] = value;
    });
    return c.json(errorBody(status, message), status as ErrorStatus, headers);
  }
  console.error("unhandled error:", redactSecrets(err instanceof Error ? `${err.name}: ${err.message}` : String(err)));
  return c.json(errorBody(500, "Internal server error"), 500);
}
