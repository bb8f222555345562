/**
 * @module
 * Import of a case package as a read-only case (docs/exchange.md#what-is-written),
 * the rules in order: 1-3 and the signature in `checkCasePackage`, 4 and 5 against the
 * importer, then 6 (images stored again with new ids, annotations under the new ids, the case
 * document with `isReadOnly`, `importedAt`, `originalImageIds` and, as the v1.0 client writes
 * it, `forensicManifestCreatedAt`) and 7 (`readOnlyCases`). Every
 * write is journalled; on any failure the journal is undone (8). A replaced read-only case is
 * removed only once the new one is in place. The audit entry `case-import` is written either way.
 */
import { heldConflict } from "../../users/legal-holds.ts";
import { fileIdsOf } from "../../cases/case-store.ts";
import { ContentionError } from "../../storage/conflict-retry.ts";
import { ServiceError } from "../../errors.ts";
import { checkCasePackage, type CheckedPackage, type PackageFacts, PackageRefusal } from "../package/case-package.ts";
import { messageOf } from "../exchange-error.ts";
import { recordAudit } from "../exchange-audit.ts";
import { checkCaseDocument, checkExporter, checkImages, checkImporterCases, consistencyProblems, ReadOnlyCaseExists, readOnlyCasesFull, storedCaseDocument } from "./import-rules.ts";
import { MAX_READ_ONLY_CASES } from "../../schemas/user.ts";
import type { ImportOptions, ImportResult } from "../shapes.ts";
import type { SignatureVerification } from "../package/signature.ts";
import type { ExchangeStore, ExchangeUser, ReadOnlyCaseEntry } from "../sources.ts";
import { type ArchiveReader, zipSourceSize } from "../package/zip-read.ts";

/** ImportOptions of docs/exchange.md#single-case-json plus what the library needs beside them. */
export interface CaseImportOptions extends ImportOptions {
  /** Keys to verify manifest signatures with, and whether a valid signature is required. */
  verification?: SignatureVerification | undefined;
  /** The package's file name, for the audit entry. */
  fileName?: string | undefined;
  /**
   * The largest image the import stores, in bytes (the service's `MAX_IMAGE_BYTES`): a package
   * holding a larger one is refused, as an upload of it would be. Default: no limit of its own.
   */
  maxImageBytes?: number | undefined;
  /** Receives `{stage, done, total}` as images are stored. */
  onProgress?: ((progress: { stage: "checking" | "images" | "annotations" | "finishing"; done: number; total: number }) => void) | undefined;
}

/** What was written so far, to undo on failure. */
interface Journal {
  images: string[];
  annotations: string[];
  /** The case document before ours replaced it (undefined: not written yet). */
  previousCase: { value: unknown } | undefined;
  /** The user's read-only entry before ours (undefined: not written yet). */
  previousEntry: { value: ReadOnlyCaseEntry | undefined } | undefined;
}

async function undo(store: ExchangeStore, uid: string, caseNumber: string, journal: Journal): Promise<string[]> {
  const problems: string[] = [];
  const attempt = async (what: string, task: () => Promise<void>) => {
    try {
      await task();
    } catch (err) {
      problems.push(`Rollback could not ${what}: ${messageOf(err)}`);
    }
  };
  if (journal.previousEntry !== undefined) {
    const previous = journal.previousEntry.value;
    await attempt("restore the read-only case list", () =>
      store.updateReadOnlyCases(uid, (current) => {
        const others = current.filter((entry) => entry.caseNumber !== caseNumber);
        return previous === undefined ? others : [...others, previous];
      }));
  }
  if (journal.previousCase !== undefined) {
    const previous = journal.previousCase.value;
    await attempt("restore the case document", () => previous === null ? store.deleteCase(uid, caseNumber) : store.putCase(uid, caseNumber, previous));
  }
  for (const fileId of journal.annotations) await attempt(`remove the annotations of ${fileId}`, () => store.deleteAnnotations(uid, caseNumber, fileId));
  for (const imageId of journal.images) await attempt(`remove the image ${imageId}`, () => store.deleteImage(imageId));
  return problems;
}

/** Rule 6 and 7: writes the case; answers the ids of the replaced case's files to remove afterwards. */
async function writeCase(
  store: ExchangeStore,
  pkg: CheckedPackage,
  importer: ExchangeUser,
  options: CaseImportOptions,
  result: ImportResult,
  journal: Journal,
): Promise<string[]> {
  const uid = importer.uid;
  const { data, manifest } = pkg;
  const caseNumber = data.metadata.caseNumber;
  const importedAt = store.now().toISOString();
  const preserve = options.preserveTimestamps !== false;
  const files = data.files.filter((file) => pkg.images.has(file.fileData.id));
  checkImages(pkg, options.maxImageBytes);

  const originalImageIds: Record<string, string> = {};
  options.onProgress?.({ stage: "images", done: 0, total: files.length });
  for (const [index, file] of files.entries()) {
    const image = pkg.images.get(file.fileData.id)!;
    const inspection = image.inspection;
    const facts = {
      filename: file.fileData.originalFilename,
      contentType: image.contentType!,
      owner: uid,
      ...(inspection.ok ? { width: inspection.width, height: inspection.height } : {}),
    };
    // Streamed from the package into the store where it can be: no image-sized buffer per image.
    const newId = store.uploadImageStream !== undefined
      ? await store.uploadImageStream({ ...facts, size: image.size, body: await image.stream() })
      : await store.uploadImage({ ...facts, bytes: await image.read() });
    journal.images.push(newId);
    originalImageIds[file.fileData.id] = newId;
    result.filesImported++;
    options.onProgress?.({ stage: "images", done: index + 1, total: files.length });
  }

  options.onProgress?.({ stage: "annotations", done: 0, total: files.length });
  for (const [index, file] of files.entries()) {
    if (file.annotations !== undefined && file.annotations !== null) {
      const newId = originalImageIds[file.fileData.id]!;
      const annotations = preserve ? file.annotations : { ...file.annotations, updatedAt: importedAt };
      journal.annotations.push(newId);
      await store.putAnnotations(uid, caseNumber, newId, annotations);
      result.annotationsImported++;
    }
    options.onProgress?.({ stage: "annotations", done: index + 1, total: files.length });
  }

  options.onProgress?.({ stage: "finishing", done: 0, total: 1 });
  const previous = await storedCaseDocument(store, uid, caseNumber);
  // Checked again just before the write: a document of the importer's may have been stored since the first check.
  checkCaseDocument(caseNumber, previous);
  const document = {
    caseNumber,
    files: files.map((file) => ({
      id: originalImageIds[file.fileData.id]!,
      originalFilename: file.fileData.originalFilename,
      uploadedAt: preserve ? file.fileData.uploadedAt : importedAt,
    })),
    createdAt: preserve ? (data.metadata.caseCreatedDate ?? data.metadata.exportDate) : importedAt,
    isReadOnly: true,
    importedAt,
    originalImageIds,
    // The client's confirmation export reads this to fill originalExportCreatedAt.
    forensicManifestCreatedAt: manifest.createdAt,
    originalExportDate: data.metadata.exportDate,
    originalExportedByUid: data.metadata.exportedByUid,
    sourceHash: manifest.manifestHash.toLowerCase(),
  };
  journal.previousCase = { value: previous };
  await store.putCase(uid, caseNumber, document);

  const entry: ReadOnlyCaseEntry = {
    caseNumber,
    importedAt,
    originalExportDate: data.metadata.exportDate,
    originalExportedBy: data.metadata.exportedBy ?? "Unknown",
    sourceHash: manifest.manifestHash.toLowerCase(),
    isReadOnly: true,
  };
  // Noted before the write, as the case document is, so a write that fails after it applied is
  // still undone. The change may run again on a conflict (another process wrote the record):
  // each run notes the entry of the record it read, so the last one is what the write replaced.
  try {
    await store.updateReadOnlyCases(uid, (current) => {
      const next = [...current.filter((candidate) => candidate.caseNumber !== caseNumber), entry];
      // Checked again on the record written: another import may have added one since the check before the images.
      if (next.length > MAX_READ_ONLY_CASES) throw readOnlyCasesFull();
      journal.previousEntry = { value: current.find((candidate) => candidate.caseNumber === caseNumber) };
      return next;
    });
  } catch (err) {
    // Given up on contention, nothing was written: there is no entry to put back (it could undo another process's).
    if (err instanceof ContentionError) journal.previousEntry = undefined;
    throw err;
  }
  options.onProgress?.({ stage: "finishing", done: 1, total: 1 });
  const kept = new Set(Object.values(originalImageIds));
  return fileIdsOf(previous).filter((id) => !kept.has(id));
}

/**
 * Imports a case package (a ZIP export) for `importerUid` as a read-only case. Never throws
 * for a bad package or a failing store: the result says why, and whatever was written is
 * removed again. `zip` is the archive's bytes, a Blob or an {@link ArchiveReader} over a file
 * (read in ranges: memory then follows the largest image, not the archive).
 *
 * @example
 * ```ts
 * const result = await importCase(store, zipBytes, "reviewer-uid", { overwriteExisting: true });
 * if (!result.success) console.error(result.errors);
 * ```
 */
export async function importCase(store: ExchangeStore, zip: Uint8Array | Blob | ArchiveReader, importerUid: string, options: CaseImportOptions = {}): Promise<ImportResult> {
  const startedAt = store.now();
  const result: ImportResult = { success: false, caseNumber: "", isReadOnly: true, filesImported: 0, annotationsImported: 0, errors: [], warnings: [] };
  const journal: Journal = { images: [], annotations: [], previousCase: undefined, previousEntry: undefined };
  let importer: ExchangeUser | null = null;
  let pkg: CheckedPackage | undefined;
  let exporterUid: string | undefined;
  let blocked = false;
  let hashValid = false;
  options.onProgress?.({ stage: "checking", done: 0, total: 1 });
  try {
    const facts: PackageFacts = { hasImages: false };
    try {
      pkg = await checkCasePackage(zip, options.verification, facts);
    } finally {
      result.caseNumber = typeof facts.data?.metadata.caseNumber === "string" ? facts.data.metadata.caseNumber : "";
      exporterUid = typeof facts.data?.metadata.exportedByUid === "string" ? facts.data.metadata.exportedByUid : undefined;
      if (facts.signatureValid !== undefined) result.signatureValid = facts.signatureValid;
    }
    hashValid = true;
    result.warnings!.push(...pkg.warnings);
    checkExporter(pkg.data, importerUid);
    importer = await store.getUser(importerUid);
    if (importer === null) throw new PackageRefusal(`The importing user ${importerUid} does not exist`);
    const existing = await storedCaseDocument(store, importerUid, result.caseNumber);
    const { replaces } = checkImporterCases(pkg.data, importer, options.overwriteExisting === true, existing);
    // Replacing removes the held case's files: refused whole, before anything is written.
    const hold = replaces ? await store.legalHold?.(importerUid, result.caseNumber) : undefined;
    if (hold !== undefined) throw heldConflict(importerUid, hold, "replacing it by an import");
    const problems = consistencyProblems(pkg);
    if (problems.length > 0) {
      if (options.validateIntegrity !== false) throw new PackageRefusal(`The package is inconsistent: ${problems.join("; ")}`);
      result.warnings!.push(...problems);
    }
    options.onProgress?.({ stage: "checking", done: 1, total: 1 });
    const replacedFiles = await writeCase(store, pkg, importer, options, result, journal);
    if (replaces) {
      result.warnings!.push(`The read-only case ${result.caseNumber} was replaced`);
      for (const fileId of replacedFiles) {
        try {
          await store.deleteAnnotations(importerUid, result.caseNumber, fileId);
          await store.deleteImage(fileId);
        } catch (err) {
          result.warnings!.push(`A file of the replaced case could not be removed: ${messageOf(err)}`);
        }
      }
    }
    result.success = true;
  } catch (err) {
    blocked = err instanceof PackageRefusal && err.blocked;
    result.errors!.push(messageOf(err));
    result.errorCode = err instanceof ServiceError ? err.code : "SERVER_ERROR";
    if (err instanceof ReadOnlyCaseExists) result.overwritable = true;
    result.filesImported = 0;
    result.annotationsImported = 0;
    result.warnings!.push(...await undo(store, importerUid, result.caseNumber, journal));
  }
  const auditProblem = await recordAudit(store, {
    userUid: importerUid,
    userEmail: importer?.email,
    action: "case-import",
    result: result.success ? "success" : blocked ? "blocked" : "failure",
    details: {
      caseNumber: result.caseNumber || "unknown",
      fileName: options.fileName,
      fileType: "zip",
      hashValid,
      validationErrors: result.errors,
      originalExaminerUid: exporterUid,
      reviewingExaminerUid: importerUid,
    },
    startedAt,
    bytes: zipSourceSize(zip),
  });
  if (auditProblem !== null) result.warnings!.push(auditProblem);
  if (result.errors!.length === 0) delete result.errors;
  if (result.warnings!.length === 0) delete result.warnings;
  return result;
}
