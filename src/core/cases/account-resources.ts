/**
 * @module
 * What an account deletion removes besides the user record: case documents, the
 * annotations of their files, and their images. Mounted in one service the user worker
 * reaches them in the stores and the image host; deployed alone, over HTTP (spec 5.3).
 * Every removal tolerates what is already gone, so a failed deletion can be run again.
 */
import type { BlobStore, ImageHost } from "../ports.ts";
import { storageKeys } from "../storage/keys.ts";
import { storedCaseNumbers } from "./stored-cases.ts";

/** The case documents, annotations and images of one user. */
export interface AccountResources {
  /** The file ids of a case document, or null when the case document does not exist. */
  caseFileIds(userUid: string, caseNumber: string): Promise<string[] | null>;
  /** Removes the annotations document of one file; absent is fine. */
  deleteAnnotations(userUid: string, caseNumber: string, fileId: string): Promise<void>;
  /**
   * Removes one image of `ownerUid`; absent is fine. With owners enforced (identity mode) an
   * image recorded as another user's, or with no recorded owner, is kept: a case document is
   * written by its user and cannot prove whose an image is.
   */
  deleteImage(imageId: string, ownerUid: string): Promise<void>;
  /** Removes the case document, and in the stores everything else under the case's folder; absent is fine. */
  deleteCase(userUid: string, caseNumber: string): Promise<void>;
  /**
   * The case numbers stored under the user's prefix, listed in the record or not; undefined
   * where the resources cannot be listed (over HTTP: the data worker has no listing route).
   */
  storedCaseNumbers?(userUid: string): Promise<string[]>;
}

/** The file ids of a stored case document, read loosely: a file without a string id is skipped. */
export function fileIdsOf(document: unknown): string[] {
  if (document === null || typeof document !== "object" || !("files" in document) || !Array.isArray(document.files)) return [];
  return document.files.flatMap((file: unknown) =>
    file !== null && typeof file === "object" && "id" in file && typeof file.id === "string" && file.id !== "" ? [file.id] : []
  );
}

const decoder = new TextDecoder();

/** Options of {@link storeResources}. */
export interface StoreResourcesOptions {
  /** Delete only images whose recorded owner is the account's user (on in identity mode). */
  onlyOwnedImages?: boolean;
}

/** The resources in the stores of this service and its image host. */
export function storeResources(data: BlobStore, images: ImageHost, options: StoreResourcesOptions = {}): AccountResources {
  return {
    async caseFileIds(userUid, caseNumber) {
      const stored = await data.get(storageKeys.case(userUid, caseNumber));
      if (stored === null) return null;
      try {
        return fileIdsOf(JSON.parse(decoder.decode(stored)));
      } catch {
        return []; // an unreadable document names no files; it is still removed
      }
    },
    async deleteAnnotations(userUid, caseNumber, fileId) {
      await data.delete(storageKeys.annotations(userUid, caseNumber, fileId));
    },
    async deleteImage(imageId, ownerUid) {
      if (options.onlyOwnedImages === true) {
        if (images.ownerOf === undefined) return; // no owners known: nothing is provably theirs
        if ((await images.ownerOf(imageId)) !== ownerUid) return;
      }
      await images.delete(imageId);
    },
    async deleteCase(userUid, caseNumber) {
      const document = storageKeys.case(userUid, caseNumber);
      const folder = document.slice(0, -"data.json".length);
      // The case document goes last, so a deletion that fails half-way still finds the case.
      for (const key of await data.list(folder)) if (key !== document) await data.delete(key);
      await data.delete(document);
    },
    storedCaseNumbers: (userUid) => storedCaseNumbers(data, userUid),
  };
}
