/**
 * @module
 * The error the exchange functions throw: the service's error base with the code callers
 * branch on. Import refusals are not thrown: they come back in the result.
 */
import type { ErrorCode } from "../schemas/error.ts";
import { type FailureKind, ServiceError } from "../errors.ts";

/** The codes of an {@link ExchangeError}: those of the error body but `UNAUTHORIZED`. */
export type ExchangeErrorCode = Exclude<ErrorCode, "UNAUTHORIZED">;

const KIND: Record<ExchangeErrorCode, FailureKind> = {
  NOT_FOUND: "not-found",
  VALIDATION_ERROR: "invalid",
  FORBIDDEN: "forbidden",
  CONFLICT: "conflict",
  SERVER_ERROR: "failed",
};

/** An export, confirmation or store call that could not be done, and why. */
export class ExchangeError extends ServiceError {
  /** Creates the error with its code and message. */
  constructor(code: ExchangeErrorCode, message: string) {
    super(KIND[code], message);
  }
}

/** The message of anything thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
