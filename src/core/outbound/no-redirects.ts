/**
 * @module
 * Outbound calls that must not follow redirects (siteverify, the mail API, the other
 * workers, Cloudflare Images), the same on every runtime. workerd refuses
 * `redirect: "error"` outright ("does not make sense at the edge"), which made every such
 * call fail under workerd; the call goes out with `redirect: "manual"` instead and a
 * redirect answer becomes the error `redirect: "error"` gives elsewhere.
 *
 * @example
 * ```ts
 * const response = await fetchRefusingRedirects(fetch, url, { method: "POST", body });
 * ```
 */

/** The statuses the Fetch standard calls redirect statuses. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches `input` without following redirects: a redirect answer (or a browser's opaque
 * redirect) is a `TypeError`, as a network error is, and its body is released.
 */
export async function fetchRefusingRedirects(doFetch: typeof fetch, input: string | URL, init: RequestInit = {}): Promise<Response> {
  const response = await doFetch(input, { ...init, redirect: "manual" });
  if (response.type === "opaqueredirect" || REDIRECT_STATUSES.has(response.status)) {
    await response.body?.cancel().catch(() => {});
    throw new TypeError(`refused to follow a redirect (HTTP ${response.status})`);
  }
  return response;
}
