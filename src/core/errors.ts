/**
 * @module
 * The one error base of the service: a kind that says what went wrong, the error-body code
 * it belongs to, a message and details that are safe to show a client. What a kind answers
 * over HTTP (status and headers) is decided at the edge, in `http/errors.ts`. A thrown value
 * that is not a {@link ServiceError} is an internal failure: it answers a generic 500 and
 * its message is only logged, redacted.
 *
 * @example
 * ```ts
 * throw ServiceError.validation("startDate must be an ISO 8601 date", { field: "startDate" });
 * ```
 */
import type { ErrorCode } from "./schemas/error.ts";

/** What went wrong, finer than the codes of the error body. */
export type FailureKind =
  | "invalid"
  | "method-not-allowed"
  | "too-large"
  | "unsupported-media-type"
  | "unauthenticated"
  | "forbidden"
  | "conflict"
  | "rate-limited"
  | "not-found"
  | "failed"
  | "upstream-failed"
  | "unavailable"
  | "upstream-timeout"
  | "integrity-failed";

/** The code of the error body each kind belongs to (docs/api.md#errors). */
export const CODE_OF_KIND: Readonly<Record<FailureKind, ErrorCode>> = Object.freeze({
  invalid: "VALIDATION_ERROR",
  "method-not-allowed": "VALIDATION_ERROR",
  "too-large": "VALIDATION_ERROR",
  "unsupported-media-type": "VALIDATION_ERROR",
  unauthenticated: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  conflict: "CONFLICT",
  "rate-limited": "FORBIDDEN",
  "not-found": "NOT_FOUND",
  failed: "SERVER_ERROR",
  "upstream-failed": "SERVER_ERROR",
  unavailable: "SERVER_ERROR",
  "upstream-timeout": "SERVER_ERROR",
  "integrity-failed": "SERVER_ERROR",
});

/** The kinds of a failure of the service or of a service it depends on. */
export type ServerFailureKind = "failed" | "upstream-failed" | "unavailable" | "upstream-timeout";

/** A failure with a kind, its code, and a message and details safe to show a client. */
export class ServiceError extends Error {
  /** What went wrong. */
  readonly kind: FailureKind;
  /** The code of the error body (`VALIDATION_ERROR`, `NOT_FOUND`, ...). */
  readonly code: ErrorCode;
  /** Facts safe to show the client (a field name, a limit), sent as `details`. */
  readonly details: Record<string, unknown>;

  /** Builds an error; the code follows from the kind. */
  constructor(kind: FailureKind, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = new.target.name;
    this.kind = kind;
    this.code = CODE_OF_KIND[kind];
    this.details = details;
  }

  /** The input is invalid (a bad key, date or body). */
  static validation(message: string, details: Record<string, unknown> = {}): ServiceError {
    return new ServiceError("invalid", message, details);
  }
  /** A credential is missing or wrong where the worker answers "unauthenticated" (the user worker). */
  static unauthorized(message = "Missing or invalid authentication"): ServiceError {
    return new ServiceError("unauthenticated", message);
  }
  /** A credential is missing or wrong, or the caller may not act on what it names. */
  static forbidden(message = "Missing or invalid authentication", details: Record<string, unknown> = {}): ServiceError {
    return new ServiceError("forbidden", message, details);
  }
  /** What is stored stands in the way: doing it would replace something that must be kept (409). */
  static conflict(message: string, details: Record<string, unknown> = {}): ServiceError {
    return new ServiceError("conflict", message, details);
  }
  /** No such case file, user, image or key. */
  static notFound(message: string, details: Record<string, unknown> = {}): ServiceError {
    return new ServiceError("not-found", message, details);
  }
  /** The path accepts other methods only (named in `details.allowed`). */
  static methodNotAllowed(allowed: readonly string[]): ServiceError {
    return new ServiceError("method-not-allowed", `Method not allowed; allowed: ${allowed.join(", ")}`, { allowed });
  }
  /** The request body exceeds a limit (e.g. `MAX_JSON_BYTES`). */
  static tooLarge(limitBytes: number): ServiceError {
    return new ServiceError("too-large", `Request body exceeds ${limitBytes} bytes`, { limitBytes });
  }
  /** The service or one it depends on failed; the message must not leak internals. */
  static server(message = "Internal server error", kind: ServerFailureKind = "failed"): ServiceError {
    return new ServiceError(kind, message);
  }
  /** A storage backend (`Redis`, `S3`) does not answer: the 500 that names it (CONTRACT: a store down, and the body says so). */
  static storeNotAnswering(name: string): ServiceError {
    return new ServiceError("failed", `The storage backend (${name}) is not answering; try again shortly`);
  }
  /** The service is busy with this very thing; the client may try again after `retryAfterSeconds` (503 with Retry-After). */
  static busy(message: string, retryAfterSeconds: number): ServiceError {
    return new ServiceError("unavailable", message, { retryAfterSeconds });
  }
  /**
   * A stored object fails its authentication: encrypted at rest under a key this service
   * does not hold, or altered or swapped in the store (docs/storage.md#encryption-at-rest).
   */
  static integrity(message: string, details: Record<string, unknown> = {}): ServiceError {
    return new ServiceError("integrity-failed", message, details);
  }
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
