/**
 * @module
 * The URL `Bun.serve` hands a request over with, made what Node's server makes of it. When the
 * Host header is missing, empty or not a host, Bun gives the path alone (`/health`), which a
 * router reads from its ninth character on (`/health` became `/`). Node then addresses a request
 * without a Host (HTTP/1.0, `Host:`) to the server's own name, and refuses one whose Host is
 * not a host with 400; so does this.
 */
import { answerUnreadableHost, answerUnreadableUrl } from "../server/request-url.ts";

/**
 * `request` with a URL the service can read, or the 400 for one that has none: a path alone is
 * put under `serverOrigin` (`http://127.0.0.1:8787`) when the request names no Host, refused
 * when it names one that is not a host; a full URL that does not parse is refused too.
 */
export function withReadableUrl(request: Request, serverOrigin: string): Request | Response {
  const url = request.url;
  if (url.charCodeAt(0) !== 0x2f) return answerUnreadableUrl(request) ?? request;
  const host = request.headers.get("host");
  // Bun gives the path alone when the Host is not a host: refused as Node's server refuses that Host.
  if (host !== null && host !== "") return answerUnreadableHost(host);
  // Rare (HTTP/1.0 clients, probes): the body, when any, moves to the new request.
  return new Request(serverOrigin + url, request);
}
