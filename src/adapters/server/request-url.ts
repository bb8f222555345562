/**
 * @module
 * A request whose URL cannot be read, refused as Node's server refuses it (400 in the standard
 * body) by the adapters whose server hands such a URL over: Deno builds it from the Host header
 * as sent (`http://a b/health`, and `Host: h/data/u1` before `GET /x` is `http://h/data/u1/x`),
 * Bun gives the path alone when the Host is not one.
 */
import { errorAnswer } from "../../core/http/errors.ts";

/** Where the path starts in `url` (after `scheme://host`), or -1. */
export function pathStartOf(url: string): number {
  const scheme = url.indexOf("://");
  return scheme === -1 ? -1 : url.indexOf("/", scheme + 3);
}

// The last origin seen to parse: a server's requests nearly all share one, and a path never
// makes a URL of a good origin fail, so the common request is checked without a URL parse.
let readableOrigin = "";

/** The message of that 400, as Node's server words it. */
export const UNREADABLE_URL = "The request cannot be read: Invalid URL";
const INVALID_HOST = "The request cannot be read: Invalid host header";

// What ends a URL's host: a Host header holding one would move the routed path (`Host:
// 127.0.0.1/data/u1/C-1` before `GET /data.json` is `/data/u1/C-1/data.json` on Deno).
const ENDS_HOST = /[/?#@\\]/;

/**
 * The 400 in the standard body, as Node answers it, for a request whose URL does not parse or
 * whose Host header holds more than a host (a path, a query, a user); undefined for any other.
 */
export function answerUnreadableUrl(request: Request): Response | undefined {
  const host = request.headers.get("host");
  if (host !== null && ENDS_HOST.test(host)) return errorAnswer(400, INVALID_HOST);
  const url = request.url;
  if (readableOrigin !== "" && url.startsWith(readableOrigin) && url.charCodeAt(readableOrigin.length) === 0x2f) return undefined;
  if (!URL.canParse(url)) return errorAnswer(400, UNREADABLE_URL);
  const pathStart = pathStartOf(url);
  if (pathStart !== -1) readableOrigin = url.slice(0, pathStart);
  return undefined;
}

/** The 400 for a Host header no URL can be made of, in Node's words: more than a host, or not a host at all. */
export function answerUnreadableHost(host: string): Response {
  return errorAnswer(400, ENDS_HOST.test(host) ? INVALID_HOST : UNREADABLE_URL);
}

/** `host` as a URL writes it: an IPv6 address in brackets, its zone's `%` encoded (`[fe80::1%25eth0]`). */
export function hostInUrl(host: string): string {
  return host.includes(":") ? `[${host.replaceAll("%", "%25")}]` : host;
}

/**
 * The `host:port` a request that names no Host (HTTP/1.0, `Host:` empty) is addressed to: the
 * address the server listens on, or `localhost` where no URL can hold that address (an IPv6 zone).
 */
export function serverAuthority(host: string, port: number): string {
  const authority = `${hostInUrl(host)}:${port}`;
  return URL.canParse(`http://${authority}/`) ? authority : `localhost:${port}`;
}
