/**
 * @module
 * The URL `Deno.serve` hands a request over with, made what Node's and Bun's servers and
 * workerd make of it before any code runs: one that does not parse (Deno builds it from the
 * Host header as sent, `Host: a b`) is refused with 400, and the dot segments of its path are
 * resolved as the URL standard resolves them.
 */
import { errorAnswer } from "../../core/http/errors.ts";

/** Where the path starts in `url` (after `scheme://host`), or -1. */
function pathStartOf(url: string): number {
  const scheme = url.indexOf("://");
  return scheme === -1 ? -1 : url.indexOf("/", scheme + 3);
}

// The last origin seen to parse: a server's requests nearly all share one, and a path never
// makes a URL of a good origin fail, so the common request is checked without a URL parse.
let readableOrigin = "";

/** The 400 in the standard body for a request whose URL does not parse, as Node answers it; undefined for any other. */
export function answerUnreadableUrl(request: Request): Response | undefined {
  const url = request.url;
  if (readableOrigin !== "" && url.startsWith(readableOrigin) && url.charCodeAt(readableOrigin.length) === 0x2f) return undefined;
  if (!URL.canParse(url)) return errorAnswer(400, "The request cannot be read: Invalid URL");
  const pathStart = pathStartOf(url);
  if (pathStart !== -1) readableOrigin = url.slice(0, pathStart);
  return undefined;
}

/**
 * `request` with the `.` and `..` segments of its path resolved ({@link dotSegmentsResolved}),
 * so `/data/u1/%2e%2e/u2/data.json` is `/data/u2/data.json` on every runtime; the same request
 * when its path has none. Its body, when any, moves to the new request.
 */
export function withDotSegmentsResolved(request: Request): Request {
  const url = request.url;
  const resolved = dotSegmentsResolved(url);
  return resolved === url ? request : new Request(resolved, request);
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
