/**
 * @module
 * Headers added to an answer after its handler ran, set in place: the answer is never
 * rebuilt (on Node that would turn the adapter's light response into a full web Response).
 * Only an answer with immutable headers (one passed through from `fetch`) is copied.
 */
import type { Context } from "hono";

/** Applies `change` to the answer's headers, copying the answer first when they are immutable. */
export function editResponseHeaders(c: Context, change: (headers: Headers) => void): void {
  try {
    change(c.res.headers);
  } catch {
    const copy = new Response(c.res.body, c.res);
    change(copy.headers);
    c.res = copy;
  }
}
