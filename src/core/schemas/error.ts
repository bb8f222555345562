import * as z from "zod";

/** The error codes of docs/api.md#errors (a union written out, so that it is public on its own). */
export type ErrorCode = "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "CONFLICT" | "VALIDATION_ERROR" | "SERVER_ERROR";
/** Every {@link ErrorCode}; tests/public-api.test.ts keeps the two equal. */
export const ERROR_CODES = ["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "VALIDATION_ERROR", "SERVER_ERROR"] as const satisfies readonly ErrorCode[];
/** Validates an error code. */
export const ErrorCodeSchema = z.enum(ERROR_CODES);

/** The standard error body of docs/api.md#errors. */
export const ErrorBodySchema = z.object({
  error: z.string(),
  code: ErrorCodeSchema,
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** `{success: true}`, the answer of data-worker writes (docs/api.md#data-worker). */
export const SuccessSchema = z.object({ success: z.literal(true) });
