/**
 * @module
 * Calls from this library to the service's own workers (user, data, image): one deadline,
 * one way to send credentials, redirects refused (a redirect would carry the worker keys
 * elsewhere), and one mapping of a worker's answer to a {@link ServiceError}. The HTTP case
 * store and the exchange's HTTP store both call through here.
 */
import { ServiceError } from "../errors.ts";
import { fetchRefusingRedirects } from "../outbound/no-redirects.ts";

/** How long one call to a worker may take when no timeout is given, in milliseconds. */
export const DEFAULT_WORKER_TIMEOUT_MS = 60_000;

/** Options shared by every client of the workers' HTTP API. */
export interface WorkerCallOptions {
  /** The fetch to call with (default: the global one); any function of its call shape will do (an app's `request`). */
  fetch?: ((input: string | URL | Request, init?: RequestInit) => Promise<Response>) | undefined;
  /** How long one call may take, in milliseconds (default 60,000). */
  timeoutMs?: number | undefined;
  /** `X-Identity-Token` sent with every call when the service requires identity tokens. */
  identityToken?: string | (() => string | Promise<string>) | undefined;
  /** Sent with every call too, e.g. `X-Admin-Key` when identity tokens are on and no user's token is at hand. */
  extraHeaders?: Record<string, string> | undefined;
}

/** The calls of one client: each throws a {@link ServiceError} when the worker cannot be reached or refuses. */
export interface WorkerCalls {
  /** Calls a worker with the client's credentials and deadline; `what` names it in errors. */
  call(url: string, init: RequestInit, what: string): Promise<Response>;
  /** Fetches a URL that needs no credentials (a signed delivery URL), with the deadline; redirects are followed. */
  fetchPlain(url: string, what: string): Promise<Response>;
  /**
   * The response when it is OK; null when it is a 404 and `missingIsFine`, or its status is one
   * of `kept` (a refusal that means "nothing to do"); otherwise its body is released and the
   * error of {@link workerFailure} thrown.
   */
  expectOk(response: Response, what: string, missingIsFine?: boolean, kept?: readonly number[]): Promise<Response | null>;
}

/** The error for a worker's non-OK answer: 404 not found, 401/403 forbidden, anything else a server failure. */
export function workerFailure(status: number, what: string): ServiceError {
  const message = `The ${what} answered HTTP ${status}`;
  if (status === 404) return ServiceError.notFound(message);
  if (status === 401 || status === 403) return ServiceError.forbidden(message);
  return ServiceError.server(message);
}

/** A base URL without trailing slashes. */
export function baseUrl(url: string): string {
  return url.replace(/\/+$/, "");
}

/** Creates the calls of one client. */
export function workerCalls(options: WorkerCallOptions): WorkerCalls {
  const doFetch = options.fetch ?? ((input: string | URL | Request, init?: RequestInit) => fetch(input, init));
  const timeoutMs = options.timeoutMs ?? DEFAULT_WORKER_TIMEOUT_MS;

  return {
    async call(url, init, what) {
      const headers = new Headers(options.extraHeaders);
      for (const [name, value] of new Headers(init.headers)) headers.set(name, value);
      if (options.identityToken !== undefined) {
        const token = typeof options.identityToken === "string" ? options.identityToken : await options.identityToken();
        headers.set("X-Identity-Token", token);
      }
      try {
        return await fetchRefusingRedirects((input, request) => doFetch(input, request), url, { ...init, headers, signal: AbortSignal.timeout(timeoutMs) });
      } catch {
        throw ServiceError.server(`The ${what} could not be reached`);
      }
    },
    async fetchPlain(url, what) {
      try {
        return await doFetch(url, { signal: AbortSignal.timeout(timeoutMs) });
      } catch {
        throw ServiceError.server(`The ${what} could not be reached`);
      }
    },
    async expectOk(response, what, missingIsFine = false, kept = []) {
      if (response.ok) return response;
      await response.body?.cancel();
      if ((missingIsFine && response.status === 404) || kept.includes(response.status)) return null;
      throw workerFailure(response.status, what);
    },
  };
}
