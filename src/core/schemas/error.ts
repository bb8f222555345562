import * as z from "zod";

/** The error codes of spec section 7.2 (a union written out, so that it is public on its own). */
export type ErrorCode = "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "VALIDATION_ERROR" | "SERVER_ERROR";
/** Every {@link ErrorCode}; tests/public-api.test.ts keeps the two equal. */
export const ERROR_CODES = ["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "VALIDATION_ERROR", "SERVER_ERROR"] as const satisfies readonly ErrorCode[];
/** Validates an error code. */
export const ErrorCodeSchema = z.enum(ERROR_CODES);

/** The standard error body of spec section 7.1. */
export const ErrorBodySchema = z.object({
  error: z.string(),
  code: ErrorCodeSchema,
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** `{success: true}`, the answer of data-worker writes (spec 4.4). */
export const SuccessSchema = z.object({ success: z.literal(true) });
