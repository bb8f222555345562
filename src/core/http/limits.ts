/**
 * @module
 * Body size limits: a request larger than the limit is refused with 413 and the standard
 * body, whether it declares its length or streams it.
 *
 * @example
 * ```ts
 * app.put("/*", limitBody(config.maxJsonBytes), handler);
 * ```
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ServiceError } from "./errors.ts";

/** Refuses bodies over `maxBytes` with a 413 standard error body. */
export function limitBody(maxBytes: number): MiddlewareHandler {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw ServiceError.tooLarge(maxBytes);
    },
  });
}
