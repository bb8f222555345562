/**
 * @module
 * An {@link ExchangeStore} over the workers' HTTP API (spec 4), for a browser client or a
 * script that holds the worker keys: the user worker for the user record, the data worker
 * for cases, annotations and the audit trail, the image worker for images. Image bytes are
 * fetched through a signed delivery URL, as clients do. Updates are read-then-write here:
 * the HTTP API has no conditional write.
 */
import { ExchangeError } from "./exchange-error.ts";
import type { ExchangeAuditEntry, ExchangeImageUpload, ExchangeStore, ExchangeUser, ReadOnlyCaseEntry } from "./sources.ts";

/** Options of {@link httpExchangeStore}. */
export interface HttpExchangeOptions {
  /** The user worker's base URL, e.g. `http://127.0.0.1:8787/user`. */
  userWorkerUrl: string;
  /** Its `X-Custom-Auth-Key` (`USER_DB_AUTH`). */
  userKey: string;
  /** The data worker's base URL, e.g. `http://127.0.0.1:8787/data`. */
  dataWorkerUrl: string;
  /** Its `X-Custom-Auth-Key` (`R2_KEY_SECRET`), also the audit endpoints' key. */
  dataKey: string;
  /** The image worker's base URL, e.g. `http://127.0.0.1:8787/image`. */
  imageWorkerUrl: string;
  /** Its bearer token (`IMAGES_API_TOKEN`). */
  imageToken: string;
  /** Base URL of the audit endpoints (`/audit/` under it); default the data worker. */
  auditUrl?: string | undefined;
  /** The delivery URL of an image id; default `{imageWorkerUrl}/delivery/{id}/public` (the local image host). */
  deliveryUrl?: ((imageId: string) => string) | undefined;
  /** `X-Identity-Token` sent with every call when the service requires identity tokens. */
  identityToken?: string | (() => string | Promise<string>) | undefined;
  /** The fetch to call with (default: the global one). */
  fetch?: ((input: string | URL | Request, init?: RequestInit) => Promise<Response>) | undefined;
  /** How long one call may take, in milliseconds (default 60,000). */
  timeoutMs?: number | undefined;
  /** The time exports and audit entries are dated by (default: the system clock). */
  now?: (() => Date) | undefined;
}

const base = (url: string): string => url.replace(/\/+$/, "");
const part = (value: string): string => encodeURIComponent(value);

/** Creates the HTTP store. */
export function httpExchangeStore(options: HttpExchangeOptions): ExchangeStore {
  const doFetch = options.fetch ?? ((input: string | URL | Request, init?: RequestInit) => fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deliveryUrl = options.deliveryUrl ?? ((imageId: string) => `${base(options.imageWorkerUrl)}/delivery/${part(imageId)}/public`);
  const dataHeaders = { "X-Custom-Auth-Key": options.dataKey };
  const userHeaders = { "X-Custom-Auth-Key": options.userKey };
  const imageHeaders = { Authorization: `Bearer ${options.imageToken}` };

  async function call(url: string, init: RequestInit, what: string): Promise<Response> {
    const headers = new Headers(init.headers);
    if (options.identityToken !== undefined) {
      const token = typeof options.identityToken === "string" ? options.identityToken : await options.identityToken();
      headers.set("X-Identity-Token", token);
    }
    try {
      return await doFetch(url, { ...init, headers, signal: AbortSignal.timeout(timeoutMs) });
    } catch {
      throw new ExchangeError("SERVER_ERROR", `The ${what} could not be reached`);
    }
  }
  async function expectOk(response: Response, what: string, allow404 = false): Promise<Response | null> {
    if (response.ok) return response;
    await response.body?.cancel();
    if (allow404 && response.status === 404) return null;
    const code = response.status === 404 ? "NOT_FOUND" : response.status === 403 || response.status === 401 ? "FORBIDDEN" : "SERVER_ERROR";
    throw new ExchangeError(code, `The ${what} answered HTTP ${response.status}`);
  }

  const documentUrl = (...segments: string[]) => `${base(options.dataWorkerUrl)}/${segments.map(part).join("/")}/data.json`;
  async function getDocument(url: string): Promise<unknown> {
    const response = await expectOk(await call(url, { headers: dataHeaders }, "data worker"), "data worker");
    const document: unknown = await response!.json();
    // The data worker answers [] for a document that does not exist (spec 4.4).
    return Array.isArray(document) && document.length === 0 ? null : document;
  }
  async function putDocument(url: string, document: unknown): Promise<void> {
    const response = await call(url, {
      method: "PUT",
      headers: { ...dataHeaders, "Content-Type": "application/json" },
      body: JSON.stringify(document),
    }, "data worker");
    await (await expectOk(response, "data worker"))!.body?.cancel();
  }
  async function updateDocument(url: string, change: (current: unknown) => unknown): Promise<void> {
    await putDocument(url, change(await getDocument(url)));
  }
  async function deleteDocument(url: string): Promise<void> {
    const response = await expectOk(await call(url, { method: "DELETE", headers: dataHeaders }, "data worker"), "data worker", true);
    await response?.body?.cancel();
  }

  async function getUser(userUid: string): Promise<ExchangeUser | null> {
    const response = await expectOk(await call(`${base(options.userWorkerUrl)}/${part(userUid)}`, { headers: userHeaders }, "user worker"), "user worker", true);
    return response === null ? null : (await response.json()) as ExchangeUser;
  }

  return {
    getUser,
    async updateReadOnlyCases(userUid, change) {
      const user = await getUser(userUid);
      if (user === null) throw new ExchangeError("NOT_FOUND", `User ${userUid} not found`);
      const readOnlyCases: ReadOnlyCaseEntry[] = change(user.readOnlyCases ?? []);
      const response = await call(`${base(options.userWorkerUrl)}/${part(userUid)}`, {
        method: "PUT",
        headers: { ...userHeaders, "Content-Type": "application/json" },
        body: JSON.stringify({ readOnlyCases }),
      }, "user worker");
      await (await expectOk(response, "user worker"))!.body?.cancel();
    },
    getCase: (userUid, caseNumber) => getDocument(documentUrl(userUid, caseNumber)),
    putCase: (userUid, caseNumber, document) => putDocument(documentUrl(userUid, caseNumber), document),
    updateCase: (userUid, caseNumber, change) => updateDocument(documentUrl(userUid, caseNumber), change),
    deleteCase: (userUid, caseNumber) => deleteDocument(documentUrl(userUid, caseNumber)),
    getAnnotations: (userUid, caseNumber, fileId) => getDocument(documentUrl(userUid, caseNumber, fileId)),
    putAnnotations: (userUid, caseNumber, fileId, document) => putDocument(documentUrl(userUid, caseNumber, fileId), document),
    updateAnnotations: (userUid, caseNumber, fileId, change) => updateDocument(documentUrl(userUid, caseNumber, fileId), change),
    deleteAnnotations: (userUid, caseNumber, fileId) => deleteDocument(documentUrl(userUid, caseNumber, fileId)),
    async readImage(imageId) {
      const signing = await call(`${base(options.imageWorkerUrl)}/${deliveryUrl(imageId)}`, { headers: imageHeaders }, "image worker");
      const signedResponse = await expectOk(signing, "image worker", true);
      if (signedResponse === null) return null;
      const signed = (await signedResponse.text()).trim();
      const image = await expectOk(await call(signed, {}, "image delivery"), "image delivery", true);
      return image === null ? null : new Uint8Array(await image.arrayBuffer());
    },
    async uploadImage(image: ExchangeImageUpload) {
      const form = new FormData();
      form.set("file", new Blob([new Uint8Array(image.bytes)], { type: image.contentType }), image.filename);
      const response = await expectOk(await call(`${base(options.imageWorkerUrl)}/`, { method: "POST", headers: imageHeaders, body: form }, "image worker"), "image worker");
      const answer = (await response!.json()) as { success?: boolean; result?: { id?: unknown } };
      if (answer.success !== true || typeof answer.result?.id !== "string") {
        throw new ExchangeError("SERVER_ERROR", "The image worker did not store the image");
      }
      return answer.result.id;
    },
    async deleteImage(imageId) {
      const response = await call(`${base(options.imageWorkerUrl)}/${part(imageId)}`, { method: "DELETE", headers: imageHeaders }, "image worker");
      await (await expectOk(response, "image worker", true))?.body?.cancel();
    },
    async appendAudit(userUid, entry: ExchangeAuditEntry) {
      const url = `${base(options.auditUrl ?? options.dataWorkerUrl)}/audit/?userId=${part(userUid)}`;
      const response = await call(url, { method: "POST", headers: { ...dataHeaders, "Content-Type": "application/json" }, body: JSON.stringify(entry) }, "audit endpoint");
      await (await expectOk(response, "audit endpoint"))!.body?.cancel();
    },
    now: options.now ?? (() => new Date()),
  };
}
