/**
 * @module
 * A request whose URL no parser reads: `Deno.serve` builds the URL from the Host header as
 * sent (`Host: a b`), where Node's server refuses such a request with 400 before any code runs.
 */
import { errorBody } from "./errors.ts";

/** The 400 in the standard body for a request whose URL does not parse, as Node answers it; undefined for any other. */
export function answerUnreadableUrl(request: Request): Response | undefined {
  if (URL.canParse(request.url)) return undefined;
  return Response.json(errorBody(400, "The request cannot be read: Invalid URL"), { status: 400, headers: { "X-Content-Type-Options": "nosniff" } });
}
