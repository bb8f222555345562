/**
 * @module
 * The one port for a user's cases: case documents, the annotations of their files, and their
 * images (docs/storage.md). Account deletion removes through it; case export and import read
 * and write through it (the exchange's store adds the user record and the audit trail). Two
 * implementations: `portsCaseStore` over the service's stores and image host, and
 * `httpCaseStore` over the data and image workers' HTTP API. Documents are plain JSON values;
 * `null` means absent; every removal tolerates what is already gone.
 */
import { ServiceError } from "../errors.ts";
import { jsonDepthOverflow, tooDeepMessage } from "../encoding/json-depth.ts";

/** What is stored with an image beside its bytes. */
export interface CaseImageFacts {
  /** Its file name. */
  filename: string;
  /** Its media type, from its bytes. */
  contentType: string;
  /** The user it is stored for. */
  owner: string;
  /** Its width in pixels, read from its header when it was checked. */
  width?: number;
  /** Its height in pixels. */
  height?: number;
}

/** An image to store at the image host (a case import stores each image of the package again). */
export interface CaseImageUpload extends CaseImageFacts {
  /** The image bytes. */
  bytes: Uint8Array;
}

/** An image to store as a stream of its `size` bytes, for {@link CaseStore.uploadImageStream}. */
export interface CaseImageStream extends CaseImageFacts {
  /** Its length in bytes. */
  size: number;
  /** Its bytes; the stream errors when they are not the image's (a damaged package), and nothing is then stored. */
  body: ReadableStream<Uint8Array>;
}

/** A user's cases, their files' annotations and their images. Every method may throw when the backend fails. */
export interface CaseStore {
  /** The case document, or null. */
  getCase(userUid: string, caseNumber: string): Promise<unknown>;
  /** Stores the case document. */
  putCase(userUid: string, caseNumber: string, document: unknown): Promise<void>;
  /** Replaces the case document with `change(current)`, without losing a concurrent change where the backend allows. */
  updateCase(userUid: string, caseNumber: string, change: (current: unknown) => unknown): Promise<void>;
  /** Removes the case document only; absent is fine. */
  deleteCase(userUid: string, caseNumber: string): Promise<void>;
  /** The annotations of one file, or null. */
  getAnnotations(userUid: string, caseNumber: string, fileId: string): Promise<unknown>;
  /** Stores the annotations of one file. */
  putAnnotations(userUid: string, caseNumber: string, fileId: string, document: unknown): Promise<void>;
  /** Replaces the annotations of one file with `change(current)`. */
  updateAnnotations(userUid: string, caseNumber: string, fileId: string, change: (current: unknown) => unknown): Promise<void>;
  /** Removes the annotations of one file; absent is fine. */
  deleteAnnotations(userUid: string, caseNumber: string, fileId: string): Promise<void>;
  /** The bytes of an image, or null when the host has no such image. */
  readImage(imageId: string): Promise<Uint8Array | null>;
  /** Stores an image at the image host and answers its new id. */
  uploadImage(image: CaseImageUpload): Promise<string>;
  /**
   * As {@link CaseStore.uploadImage}, the bytes streamed into the host's store piece by piece, for
   * a store that can (a case import then holds no image-sized buffer per image). When the
   * stream errors nothing is stored and this rejects. Without it, importers use `uploadImage`;
   * a store that wraps another's `uploadImage` (`{...store, uploadImage}`) wraps or leaves out this one too.
   */
  uploadImageStream?(image: CaseImageStream): Promise<string>;
  /**
   * Removes an image; absent is fine. Given `ownerUid`, a store built with `onlyOwnedImages`
   * (identity mode) keeps an image recorded as another user's or with no recorded owner: a
   * case document is written by its user and cannot prove whose an image is.
   */
  deleteImage(imageId: string, ownerUid?: string): Promise<void>;
  /**
   * Removes everything stored under the case's folder, the case document last (so a removal
   * that fails half-way still finds the case); absent is fine. Only where keys can be listed.
   */
  deleteCaseFolder?(userUid: string, caseNumber: string): Promise<void>;
  /**
   * The case numbers stored under the user's prefix, listed in the record or not. Only where
   * keys can be listed (the data worker's HTTP API has no listing route).
   */
  storedCaseNumbers?(userUid: string): Promise<string[]>;
  /**
   * Removes every key left under `{userUid}/` once the cases are gone (documents a client
   * stored beside them, such as `{userUid}/profile.json`); absent is fine. Only where keys can be listed.
   */
  deleteUserDocuments?(userUid: string): Promise<void>;
}

/** A stored document that is not JSON or nests too deeply; `text` is what was stored. */
export class UnreadableDocumentError extends ServiceError {
  /** Builds the error for the document at `where`. */
  constructor(readonly text: string, message: string) {
    super("failed", message);
  }
}

/** Parses a stored document's text; text that is not JSON or nests too deeply is an {@link UnreadableDocumentError}. */
export function parseDocument(text: string, where: string): unknown {
  // Documents stored before depth was limited: refused here rather than failing later to serialize.
  if (jsonDepthOverflow(text) !== -1) throw new UnreadableDocumentError(text, tooDeepMessage(`The stored document ${where}`));
  try {
    return JSON.parse(text);
  } catch {
    throw new UnreadableDocumentError(text, `The stored document ${where} is not valid JSON`);
  }
}

/** The file ids of a case document, read loosely: a file without a string id is skipped. */
export function fileIdsOf(document: unknown): string[] {
  if (document === null || typeof document !== "object" || !("files" in document) || !Array.isArray(document.files)) return [];
  return document.files.flatMap((file: unknown) =>
    file !== null && typeof file === "object" && "id" in file && typeof file.id === "string" && file.id !== "" ? [file.id] : []
  );
}

/**
 * The file ids of a case, or null when its document does not exist. A document that cannot be
 * read as the store serves it is read as plain JSON once more; if that fails too it names no
 * files (it is still removed with its case).
 */
export async function caseFileIds(store: CaseStore, userUid: string, caseNumber: string): Promise<string[] | null> {
  let document: unknown;
  try {
    document = await store.getCase(userUid, caseNumber);
  } catch (err) {
    if (!(err instanceof UnreadableDocumentError)) throw err;
    try {
      return fileIdsOf(JSON.parse(err.text));
    } catch {
      return [];
    }
  }
  return document === null ? null : fileIdsOf(document);
}
