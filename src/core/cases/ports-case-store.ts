/**
 * @module
 * The {@link CaseStore} over the service's ports: case and annotation documents in the data
 * store under the keys of `storageKeys` (docs/storage.md), images at the image host. Used by
 * account deletion when the user worker is mounted with the others, and by the exchange's
 * ports store (`serve`, the export and import commands).
 */
import type { BlobStore, ImageHost } from "../ports.ts";
import { checkSegment, storageKeys } from "../storage/keys.ts";
import { type CaseImageFacts, type CaseImageStream, type CaseStore, parseDocument } from "./case-store.ts";
import { storedCaseNumbers } from "./stored-cases.ts";
import type { KeyHistories } from "../history/mod.ts";

/** What {@link portsCaseStore} needs. */
export interface CasePorts {
  /** Case and annotation documents. */
  data: BlobStore;
  /** The image store of the local image host (`images/{id}`), read when no `readImage` is given. */
  images: BlobStore;
  /** The image host images are uploaded to and deleted from. */
  imageHost: ImageHost;
  /** How to read an image's bytes; default: `images/{id}` of `images` (the local host's layout). */
  readImage?: ((imageId: string) => Promise<Uint8Array | null>) | undefined;
  /**
   * Record history (`DATA_HISTORY=on`): every write and delete of a document goes through it,
   * keeping the version it replaces, written by `"service"` (account deletion, imports).
   */
  histories?: KeyHistories | undefined;
}

/** The `writtenBy` of versions the service writes itself (account deletion, imports). */
export const SERVICE_WRITER = "service";

/** Options of {@link portsCaseStore}. */
export interface PortsCaseStoreOptions {
  /** `deleteImage(id, owner)` removes only images whose recorded owner is `owner` (on in identity mode). */
  onlyOwnedImages?: boolean | undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const encodeDocument = (document: unknown): Uint8Array => encoder.encode(JSON.stringify(document));

/** The facts the image host keeps beside an image's bytes (its size in pixels only when both are known). */
const hostedFacts = (image: CaseImageFacts) => ({
  filename: image.filename,
  contentType: image.contentType,
  owner: image.owner,
  ...(image.width !== undefined && image.height !== undefined ? { width: image.width, height: image.height } : {}),
});

/** Creates the store over the service's ports. */
export function portsCaseStore(ports: CasePorts, options: PortsCaseStoreOptions = {}): CaseStore {
  const { data: stored, imageHost, histories } = ports;
  // With history, the documents' writes and deletes keep their versions; reads and listings are the store's.
  const data: Pick<BlobStore, "get" | "put" | "update" | "delete" | "list"> = histories === undefined ? stored : {
    get: (key) => stored.get(key),
    list: (prefix) => stored.list(prefix),
    put: async (key, value) => void (await histories.write(key, value, SERVICE_WRITER)),
    update: async (key, change) => (await histories.update(key, change, SERVICE_WRITER)).bytes,
    delete: async (key) => (await histories.remove(key, SERVICE_WRITER)) !== null,
  };
  const readDocument = (bytes: Uint8Array | null, key: string): unknown => (bytes === null ? null : parseDocument(decoder.decode(bytes), key));
  const getDocument = async (key: string): Promise<unknown> => readDocument(await data.get(key), key);
  const updateDocument = async (key: string, change: (current: unknown) => unknown): Promise<void> => {
    await data.update(key, (current) => encodeDocument(change(readDocument(current, key))));
  };

  return {
    getCase: async (userUid, caseNumber) => await getDocument(storageKeys.case(userUid, caseNumber)),
    putCase: async (userUid, caseNumber, document) => await data.put(storageKeys.case(userUid, caseNumber), encodeDocument(document)),
    updateCase: async (userUid, caseNumber, change) => await updateDocument(storageKeys.case(userUid, caseNumber), change),
    async deleteCase(userUid, caseNumber) {
      await data.delete(storageKeys.case(userUid, caseNumber));
    },
    getAnnotations: async (userUid, caseNumber, fileId) => await getDocument(storageKeys.annotations(userUid, caseNumber, fileId)),
    putAnnotations: async (userUid, caseNumber, fileId, document) =>
      await data.put(storageKeys.annotations(userUid, caseNumber, fileId), encodeDocument(document)),
    updateAnnotations: async (userUid, caseNumber, fileId, change) => await updateDocument(storageKeys.annotations(userUid, caseNumber, fileId), change),
    async deleteAnnotations(userUid, caseNumber, fileId) {
      await data.delete(storageKeys.annotations(userUid, caseNumber, fileId));
    },
    readImage: ports.readImage ?? (async (imageId) => await ports.images.get(storageKeys.image(imageId))),
    async uploadImage(image) {
      const bytes = image.bytes.buffer instanceof ArrayBuffer ? (image.bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(image.bytes);
      const hosted = await imageHost.upload({ bytes, ...hostedFacts(image) });
      return hosted.id;
    },
    ...(imageHost.uploadStream === undefined ? {} : {
      uploadImageStream: async (image: CaseImageStream) => (await imageHost.uploadStream!({ size: image.size, body: image.body, ...hostedFacts(image) })).id,
    }),
    async deleteImage(imageId, ownerUid) {
      if (ownerUid !== undefined && options.onlyOwnedImages === true) {
        if (imageHost.ownerOf === undefined) return; // no owners known: nothing is provably theirs
        if ((await imageHost.ownerOf(imageId)) !== ownerUid) return;
      }
      await imageHost.delete(imageId);
    },
    async deleteCaseFolder(userUid, caseNumber) {
      const document = storageKeys.case(userUid, caseNumber);
      const folder = document.slice(0, -"data.json".length);
      for (const key of await data.list(folder)) if (key !== document) await data.delete(key);
      await data.delete(document);
    },
    storedCaseNumbers: async (userUid) => await storedCaseNumbers(stored, userUid),
    async deleteUserDocuments(userUid) {
      for (const key of await data.list(`${checkSegment(userUid, "userUid")}/`)) await data.delete(key);
    },
  };
}
