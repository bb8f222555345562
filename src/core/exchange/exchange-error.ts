/**
 * @module
 * The one error the exchange functions throw, with a stable code (the spec's error codes)
 * callers branch on. Import refusals are not thrown: they come back in the result.
 */

/** The codes of an {@link ExchangeError} (the spec's error codes). */
export type ExchangeErrorCode = "NOT_FOUND" | "VALIDATION_ERROR" | "FORBIDDEN" | "SERVER_ERROR";

/** An export, confirmation or store call that could not be done, and why. */
export class ExchangeError extends Error {
  /** What kind of failure: branch on this, not on the message. */
  readonly code: ExchangeErrorCode;

  /** Creates the error with its code and message. */
  constructor(code: ExchangeErrorCode, message: string) {
    super(message);
    this.name = "ExchangeError";
    this.code = code;
  }
}

/** The message of anything thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
