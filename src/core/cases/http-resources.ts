/**
 * @module
 * The account resources through the data and image workers' HTTP APIs, with the user
 * worker's own credentials (spec 5.3): `R2_KEY_SECRET` for the data worker,
 * `IMAGES_API_TOKEN` for the image worker. A 404 on delete means already gone.
 */
import { ServiceError } from "../errors.ts";
import { fetchRefusingRedirects } from "../outbound/no-redirects.ts";
import { checkSegment } from "../storage/keys.ts";
import { type AccountResources, fileIdsOf } from "./account-resources.ts";

/** Options of {@link httpResources}. */
export interface HttpResourcesOptions {
  /** The data worker's base URL (`DATA_WORKER_URL`). */
  dataWorkerUrl: string;
  /** Its `X-Custom-Auth-Key` (`R2_KEY_SECRET`). */
  dataKey: string;
  /** The image worker's base URL (`IMAGE_WORKER_URL`). */
  imageWorkerUrl: string;
  /** Its bearer token (`IMAGES_API_TOKEN`). */
  imageToken: string;
  /** How long one call may take. */
  timeoutMs: number;
  /** The fetch to call them with (default: the global one). */
  fetch?: typeof fetch;
  /** Sent with every call too: `X-Admin-Key` when identity tokens are on (the workers then need more than their key). */
  extraHeaders?: Record<string, string>;
  /**
   * Delete only images recorded as the account user's: sends `?owner={uid}`, which the image
   * worker enforces, and takes its 403 as "not theirs, kept" (identity mode).
   */
  onlyOwnedImages?: boolean;
}

const segment = (value: string, what: string) => encodeURIComponent(checkSegment(value, what));

/** Creates the HTTP path to cases and images. */
export function httpResources(options: HttpResourcesOptions): AccountResources {
  const doFetch = options.fetch ?? fetch;
  const base = (url: string) => url.replace(/\/+$/, "");
  const data = (path: string) => `${base(options.dataWorkerUrl)}/${path}`;

  async function call(url: string, init: RequestInit, what: string): Promise<Response> {
    try {
      const headers = { ...options.extraHeaders, ...(init.headers as Record<string, string> | undefined) };
      return await fetchRefusingRedirects(doFetch, url, { ...init, headers, signal: AbortSignal.timeout(options.timeoutMs) });
    } catch {
      throw ServiceError.server(`The ${what} could not be reached`);
    }
  }
  /** Deletes; 404 (already gone) and the `kept` statuses count as done. */
  async function remove(url: string, headers: Record<string, string>, what: string, kept: readonly number[] = []): Promise<void> {
    const response = await call(url, { method: "DELETE", headers }, what);
    await response.body?.cancel();
    if (!response.ok && response.status !== 404 && !kept.includes(response.status)) throw ServiceError.server(`The ${what} answered HTTP ${response.status}`);
  }
  const dataHeaders = { "X-Custom-Auth-Key": options.dataKey };
  const caseDocument = (uid: string, caseNumber: string) => data(`${segment(uid, "userUid")}/${segment(caseNumber, "caseNumber")}/data.json`);

  return {
    async caseFileIds(userUid, caseNumber) {
      const response = await call(caseDocument(userUid, caseNumber), { headers: dataHeaders }, "data worker");
      if (!response.ok) {
        await response.body?.cancel();
        throw ServiceError.server(`The data worker answered HTTP ${response.status}`);
      }
      const document: unknown = await response.json().catch(() => ({}));
      // The data worker answers [] for a document that does not exist (spec 4.4).
      if (Array.isArray(document) && document.length === 0) return null;
      return fileIdsOf(document);
    },
    deleteAnnotations: (userUid, caseNumber, fileId) =>
      remove(data(`${segment(userUid, "userUid")}/${segment(caseNumber, "caseNumber")}/${segment(fileId, "fileId")}/data.json`), dataHeaders, "data worker"),
    deleteImage(imageId, ownerUid) {
      const url = `${base(options.imageWorkerUrl)}/${segment(imageId, "imageId")}`;
      const headers = { Authorization: `Bearer ${options.imageToken}` };
      if (options.onlyOwnedImages !== true) return remove(url, headers, "image worker");
      // 403: not recorded as this user's, so it stays.
      return remove(`${url}?owner=${segment(ownerUid, "userUid")}`, headers, "image worker", [403]);
    },
    deleteCase: (userUid, caseNumber) => remove(caseDocument(userUid, caseNumber), dataHeaders, "data worker"),
  };
}
