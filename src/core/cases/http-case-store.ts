/**
 * @module
 * The {@link CaseStore} over the data and image workers' HTTP API (docs/api.md): documents at
 * the data worker, images at the image worker, their bytes through a signed delivery URL as
 * clients fetch them. Paths are built from `storageKeys`, so every segment passes the same
 * checks as in the stores. The data worker answers `[]` for a document that does not exist;
 * that is the one "missing" rule here. Updates are read-then-write: the API has no conditional
 * write. Used by the user worker deployed alone and by the exchange's HTTP store.
 */
import { ServiceError } from "../errors.ts";
import { checkSegment, storageKeys } from "../storage/keys.ts";
import { type CaseStore, parseDocument } from "./case-store.ts";
import { baseUrl, type WorkerCallOptions, workerCalls } from "./worker-calls.ts";

/** Options of {@link httpCaseStore}. */
export interface HttpCaseStoreOptions extends WorkerCallOptions {
  /** The data worker's base URL, e.g. `http://127.0.0.1:8787/data` (`DATA_WORKER_URL`). */
  dataWorkerUrl: string;
  /** Its `X-Custom-Auth-Key` (`R2_KEY_SECRET`). */
  dataKey: string;
  /** The image worker's base URL, e.g. `http://127.0.0.1:8787/image` (`IMAGE_WORKER_URL`). */
  imageWorkerUrl: string;
  /** Its bearer token (`IMAGES_API_TOKEN`). */
  imageToken: string;
  /** The delivery URL of an image id; default `{imageWorkerUrl}/delivery/{id}/public` (the local image host). */
  deliveryUrl?: ((imageId: string) => string) | undefined;
  /**
   * `deleteImage(id, owner)` removes only images recorded as `owner`'s: it sends `?owner=`,
   * which the image worker enforces, and takes its 403 as "not theirs, kept" (identity mode).
   */
  onlyOwnedImages?: boolean | undefined;
}

/** A checked storage key as a URL path: each segment percent-encoded. */
const pathOf = (key: string): string => key.split("/").map(encodeURIComponent).join("/");
/** One checked path segment, percent-encoded. */
const segment = (value: string, what: string): string => encodeURIComponent(checkSegment(value, what));

/** Creates the store over the workers' HTTP API. */
export function httpCaseStore(options: HttpCaseStoreOptions): CaseStore {
  const { call, fetchPlain, expectOk } = workerCalls(options);
  const dataUrl = (key: string): string => `${baseUrl(options.dataWorkerUrl)}/${pathOf(key)}`;
  const imageUrl = (path: string): string => `${baseUrl(options.imageWorkerUrl)}/${path}`;
  const deliveryUrl = options.deliveryUrl ?? ((imageId: string) => imageUrl(`delivery/${segment(imageId, "imageId")}/public`));
  const dataHeaders = { "X-Custom-Auth-Key": options.dataKey };
  const imageHeaders = { Authorization: `Bearer ${options.imageToken}` };
  const data = "data worker";
  const images = "image worker";

  async function getDocument(key: string): Promise<unknown> {
    const response = (await expectOk(await call(dataUrl(key), { headers: dataHeaders }, data), data))!;
    const document = parseDocument(await response.text(), key);
    return Array.isArray(document) && document.length === 0 ? null : document;
  }
  async function putDocument(key: string, document: unknown): Promise<void> {
    const init = { method: "PUT", headers: { ...dataHeaders, "Content-Type": "application/json" }, body: JSON.stringify(document) };
    await (await expectOk(await call(dataUrl(key), init, data), data))!.body?.cancel();
  }
  async function updateDocument(key: string, change: (current: unknown) => unknown): Promise<void> {
    await putDocument(key, change(await getDocument(key)));
  }
  async function remove(url: string, headers: Record<string, string>, what: string, kept: readonly number[] = []): Promise<void> {
    await (await expectOk(await call(url, { method: "DELETE", headers }, what), what, true, kept))?.body?.cancel();
  }

  return {
    getCase: async (userUid, caseNumber) => await getDocument(storageKeys.case(userUid, caseNumber)),
    putCase: async (userUid, caseNumber, document) => await putDocument(storageKeys.case(userUid, caseNumber), document),
    updateCase: async (userUid, caseNumber, change) => await updateDocument(storageKeys.case(userUid, caseNumber), change),
    deleteCase: async (userUid, caseNumber) => await remove(dataUrl(storageKeys.case(userUid, caseNumber)), dataHeaders, data),
    getAnnotations: async (userUid, caseNumber, fileId) => await getDocument(storageKeys.annotations(userUid, caseNumber, fileId)),
    putAnnotations: async (userUid, caseNumber, fileId, document) => await putDocument(storageKeys.annotations(userUid, caseNumber, fileId), document),
    updateAnnotations: async (userUid, caseNumber, fileId, change) => await updateDocument(storageKeys.annotations(userUid, caseNumber, fileId), change),
    deleteAnnotations: async (userUid, caseNumber, fileId) => await remove(dataUrl(storageKeys.annotations(userUid, caseNumber, fileId)), dataHeaders, data),
    async readImage(imageId) {
      // The image worker signs a delivery URL (GET /{deliveryUrl}); the bytes come from the signed URL.
      const signing = await expectOk(await call(imageUrl(deliveryUrl(imageId)), { headers: imageHeaders }, images), images, true);
      if (signing === null) return null;
      const signed = (await signing.text()).trim();
      const image = await expectOk(await fetchPlain(signed, "image delivery"), "image delivery", true);
      return image === null ? null : new Uint8Array(await image.arrayBuffer());
    },
    async uploadImage(image) {
      const form = new FormData();
      form.set("file", new Blob([new Uint8Array(image.bytes)], { type: image.contentType }), image.filename);
      const response = (await expectOk(await call(imageUrl(""), { method: "POST", headers: imageHeaders, body: form }, images), images))!;
      const answer = (await response.json()) as { success?: boolean; result?: { id?: unknown } };
      if (answer.success !== true || typeof answer.result?.id !== "string") throw ServiceError.server("The image worker did not store the image");
      return answer.result.id;
    },
    async deleteImage(imageId, ownerUid) {
      const url = imageUrl(segment(imageId, "imageId"));
      if (ownerUid === undefined || options.onlyOwnedImages !== true) return await remove(url, imageHeaders, images);
      // 403: not recorded as this user's, so it stays.
      return await remove(`${url}?owner=${segment(ownerUid, "userUid")}`, imageHeaders, images, [403]);
    },
  };
}
