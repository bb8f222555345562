/**
 * @module
 * Where exports read and imports write: an {@link ExchangeStore}. Two exist: this one over
 * the service's ports (the stores and the image host, as `serve` and the command use them),
 * and `httpExchangeStore` over the workers' HTTP API (for a browser or a remote script).
 * Keys are the service's storage layout (CONTRACT "Storage layout"), built by `storageKeys`.
 */
import type { BlobStore, Clock, ImageHost, KvStore } from "../ports.ts";
import { storageKeys } from "../storage/keys.ts";
import { appendAuditEntry } from "../audit/trail.ts";
import { createLocalImageHost } from "../images/local-host.ts";
import { userRecords } from "../users/user-records.ts";
import { UserDataSchema } from "../schemas/user.ts";
import { ValidationAuditEntrySchema } from "../schemas/audit.ts";
import { ExchangeError } from "./exchange-error.ts";
import { jsonDepthOverflow, tooDeepMessage } from "../encoding/json-depth.ts";

/** An imported case in a user's `readOnlyCases` (spec 2.1 ReadOnlyCaseMetadata). */
export interface ReadOnlyCaseEntry {
  /** The case number. */
  caseNumber: string;
  /** When it was imported. */
  importedAt: string;
  /** When the package was exported. */
  originalExportDate: string;
  /** The exporter's email (or `Unknown`). */
  originalExportedBy: string;
  /** The manifest hash of the package. */
  sourceHash?: string | undefined;
  /** Always true. */
  isReadOnly: true;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** The user record as exports and imports use it (spec 2.1 UserData). */
export interface ExchangeUser {
  /** The user id. */
  uid: string;
  /** The email, or null. */
  email: string | null;
  /** First name. */
  firstName: string;
  /** Last name. */
  lastName: string;
  /** Company. */
  company: string;
  /** False marks a demo account. */
  permitted: boolean;
  /** The user's own cases. */
  cases: { caseNumber: string; createdAt: string; [field: string]: unknown }[];
  /** Imported read-only cases. */
  readOnlyCases?: ReadOnlyCaseEntry[] | undefined;
  /** When the record was created. */
  createdAt: string;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** An audit entry as the exchange functions write it (spec 2.5 ValidationAuditEntry). */
export interface ExchangeAuditEntry {
  /** When, ISO 8601. */
  timestamp: string;
  /** The acting user. */
  userId: string;
  /** The acting user's email ("" when unknown). */
  userEmail: string;
  /** case-export, case-import, confirmation-create, confirmation-export or confirmation-import. */
  action: "case-export" | "case-import" | "confirmation-create" | "confirmation-export" | "confirmation-import";
  /** success, failure or blocked. */
  result: "success" | "failure" | "blocked";
  /** AuditDetails of spec 2.5. */
  details: {
    /** The case concerned. */
    caseNumber?: string | undefined;
    /** The exported or imported file's name. */
    fileName?: string | undefined;
    /** json, csv, zip, xlsx or confirmation-json. */
    fileType?: string | undefined;
    /** Whether the hashes matched (imports). */
    hashValid?: boolean | undefined;
    /** Why it failed. */
    validationErrors: string[];
    /** The original analyst. */
    originalExaminerUid?: string | undefined;
    /** The reviewer. */
    reviewingExaminerUid?: string | undefined;
    /** The confirmation concerned. */
    confirmationId?: string | undefined;
    /** case-export, case-import or confirmation. */
    workflowPhase: "case-export" | "case-import" | "confirmation";
    /** Time taken and bytes handled. */
    performanceMetrics?: { processingTimeMs: number; fileSizeBytes: number } | undefined;
  };
}

/** An image to store again at import (rule 6). */
export interface ExchangeImageUpload {
  /** The image bytes. */
  bytes: Uint8Array;
  /** Its file name. */
  filename: string;
  /** Its media type, from its bytes. */
  contentType: string;
  /** The importing user. */
  owner: string;
  /** Its size in pixels, read from its header when it was checked. */
  width?: number;
  /** Its height in pixels. */
  height?: number;
}

/**
 * What exports read and imports write. Documents are plain JSON values; `null` means absent.
 * Every method may throw when the backend fails; imports then roll back what they wrote.
 */
export interface ExchangeStore {
  /** The user record, or null. */
  getUser(userUid: string): Promise<ExchangeUser | null>;
  /** Changes the user's `readOnlyCases` (the only field exchanges touch); NOT_FOUND when the user is absent. */
  updateReadOnlyCases(userUid: string, change: (current: ReadOnlyCaseEntry[]) => ReadOnlyCaseEntry[]): Promise<void>;
  /** The case document, or null. */
  getCase(userUid: string, caseNumber: string): Promise<unknown>;
  /** Stores the case document. */
  putCase(userUid: string, caseNumber: string, document: unknown): Promise<void>;
  /** Replaces the case document with `change(current)`, without losing a concurrent change where the backend allows. */
  updateCase(userUid: string, caseNumber: string, change: (current: unknown) => unknown): Promise<void>;
  /** Removes the case document; absent is fine. */
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
  uploadImage(image: ExchangeImageUpload): Promise<string>;
  /** Removes an image; absent is fine. */
  deleteImage(imageId: string): Promise<void>;
  /** Appends an audit entry to the user's audit day. */
  appendAudit(userUid: string, entry: ExchangeAuditEntry): Promise<void>;
  /** The current time (exports, imports and audit entries are dated by it). */
  now(): Date;
}

/** What {@link portsExchangeStore} needs: the service's ports (a `ServicePorts` fits). */
export interface ExchangePorts {
  /** Cases and annotations. */
  data: BlobStore;
  /** User records. */
  users: KvStore;
  /** Audit days. */
  audit: BlobStore;
  /** The image store of the local image host (`images/{id}`). */
  images: BlobStore;
  /** The time. */
  clock: Clock;
  /** The image host imports upload to; default: the local host over `images`. */
  imageHost?: ImageHost | undefined;
  /** How to read an image's bytes; default: `images/{id}` of `images` (the local host's layout). */
  readImage?: ((imageId: string) => Promise<Uint8Array | null>) | undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function parseDocument(bytes: Uint8Array | null, key: string): unknown {
  if (bytes === null) return null;
  const text = decoder.decode(bytes);
  // Documents stored before depth was limited: refused here rather than failing later to serialize.
  if (jsonDepthOverflow(text) !== -1) throw new ExchangeError("SERVER_ERROR", tooDeepMessage(`The stored document ${key}`));
  try {
    return JSON.parse(text);
  } catch {
    throw new ExchangeError("SERVER_ERROR", `The stored document ${key} is not valid JSON`);
  }
}

const encodeDocument = (document: unknown): Uint8Array => encoder.encode(JSON.stringify(document));

/** An {@link ExchangeStore} over the service's stores and image host. */
export function portsExchangeStore(ports: ExchangePorts): ExchangeStore {
  const records = userRecords(ports.users);
  const host = ports.imageHost ?? createLocalImageHost({
    store: ports.images,
    signingKey: undefined,
    deliveryBase: "http://localhost/image/delivery",
    clock: ports.clock,
    urlLifetimeSeconds: 3600,
  });
  const readDocument = async (key: string): Promise<unknown> => parseDocument(await ports.data.get(key), key);
  const updateDocument = async (key: string, change: (current: unknown) => unknown): Promise<void> => {
    await ports.data.update(key, (current) => encodeDocument(change(parseDocument(current, key))));
  };

  return {
    async getUser(userUid) {
      const user = await records.get(userUid);
      return user === null ? null : { ...user, readOnlyCases: user.readOnlyCases?.map((entry) => ({ ...entry, isReadOnly: true as const })) };
    },
    async updateReadOnlyCases(userUid, change) {
      await records.update(userUid, (current) => {
        if (current === null) throw new ExchangeError("NOT_FOUND", `User ${userUid} not found`);
        const next = change((current.readOnlyCases ?? []).map((entry) => ({ ...entry, isReadOnly: true as const })));
        return { next: UserDataSchema.parse({ ...current, readOnlyCases: next }), result: undefined };
      });
    },
    getCase: (userUid, caseNumber) => readDocument(storageKeys.case(userUid, caseNumber)),
    putCase: (userUid, caseNumber, document) => ports.data.put(storageKeys.case(userUid, caseNumber), encodeDocument(document)),
    updateCase: (userUid, caseNumber, change) => updateDocument(storageKeys.case(userUid, caseNumber), change),
    async deleteCase(userUid, caseNumber) {
      await ports.data.delete(storageKeys.case(userUid, caseNumber));
    },
    getAnnotations: (userUid, caseNumber, fileId) => readDocument(storageKeys.annotations(userUid, caseNumber, fileId)),
    putAnnotations: (userUid, caseNumber, fileId, document) =>
      ports.data.put(storageKeys.annotations(userUid, caseNumber, fileId), encodeDocument(document)),
    updateAnnotations: (userUid, caseNumber, fileId, change) => updateDocument(storageKeys.annotations(userUid, caseNumber, fileId), change),
    async deleteAnnotations(userUid, caseNumber, fileId) {
      await ports.data.delete(storageKeys.annotations(userUid, caseNumber, fileId));
    },
    readImage: ports.readImage ?? ((imageId) => ports.images.get(storageKeys.image(imageId))),
    async uploadImage(image) {
      const bytes = image.bytes.buffer instanceof ArrayBuffer ? (image.bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(image.bytes);
      const size = image.width !== undefined && image.height !== undefined ? { width: image.width, height: image.height } : {};
      const hosted = await host.upload({ bytes, filename: image.filename, contentType: image.contentType, owner: image.owner, ...size });
      return hosted.id;
    },
    async deleteImage(imageId) {
      await host.delete(imageId);
    },
    async appendAudit(userUid, entry) {
      await appendAuditEntry(ports.audit, ports.clock, userUid, ValidationAuditEntrySchema.parse(entry));
    },
    now: () => ports.clock.now(),
  };
}
