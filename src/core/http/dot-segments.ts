/**
 * @module
 * Dot segments of a request's path, resolved as the URL standard resolves them: Node's and
 * Bun's servers and workerd do it before the service sees the request; `Deno.serve` does not.
 */

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

/** A URL as `new URL(url).href` writes it (`%2e` a dot, `\` a `/`) when it may hold a dot segment; else `url` itself. */
export function dotSegmentsResolved(url: string): string {
  // Three native searches spare the common request a URL parse.
  if (!url.includes("/.") && !url.includes("%2") && !url.includes("\\")) return url;
  return new URL(url).href;
}
