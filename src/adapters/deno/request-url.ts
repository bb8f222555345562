/**
 * @module
 * The path `Deno.serve` hands a request over with, made what Node's and Bun's servers and
 * workerd make of it before any code runs: its dot segments resolved as the URL standard
 * resolves them. (A URL that does not parse is refused by `answerUnreadableUrl`, shared with Bun.)
 */
import { pathStartOf } from "../server/request-url.ts";

/**
 * `request` with the `.` and `..` segments of its path resolved ({@link dotSegmentsResolved}),
 * so `/data/u1/%2e%2e/u2/data.json` is `/data/u2/data.json` on every runtime. It is the same
 * request, its `url` read as resolved: its method as sent (`get` too), its headers and its body.
 */
export function withDotSegmentsResolved(request: Request): Request {
  const url = request.url;
  const resolved = dotSegmentsResolved(url);
  // Not a new Request: that upper-cases `get` and then refuses its body (a bare 500 from Deno).
  return resolved === url ? request : Object.defineProperty(request, "url", { value: resolved, configurable: true });
}

// A `.` or `..` segment, a dot written `%2e` included.
const DOT_SEGMENT = /\/(?:\.|%2e)(?:\.|%2e)?(?:\/|$)/i;

/**
 * `url` with the dot segments of its path resolved as `new URL` resolves them (the path and
 * query as Node writes them then); `url` itself when its path has none, holds a `\` (which Node
 * refuses with 400, and the key rules here too), or its origin is not one `new URL` keeps as
 * written: the request then goes on as it came.
 */
export function dotSegmentsResolved(url: string): string {
  const pathStart = pathStartOf(url);
  if (pathStart === -1) return url;
  const queryStart = url.indexOf("?", pathStart);
  const path = queryStart === -1 ? url.slice(pathStart) : url.slice(pathStart, queryStart);
  if (!DOT_SEGMENT.test(path) || path.includes("\\")) return url;
  const origin = url.slice(0, pathStart);
  try {
    if (new URL(origin).href !== `${origin}/`) return url;
    const resolved = new URL(`http://h${url.slice(pathStart)}`);
    return `${origin}${resolved.pathname}${resolved.search}`;
  } catch {
    return url;
  }
}
