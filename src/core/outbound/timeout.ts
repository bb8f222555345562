/**
 * @module
 * Telling a deadline apart from other fetch failures, the same way for every upstream call
 * (`AbortSignal.timeout` rejects with `TimeoutError`; some runtimes report `AbortError`).
 */

/** Whether a thrown value is an `AbortSignal.timeout` deadline firing. */
export function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
}
