/**
 * @module
 * The import rules that concern the importer (docs/exchange.md#rules, rules 4 to 6: not their
 * own case nor over a case document of theirs, room for one more) and the package's
 * consistency with itself (`validateIntegrity`). Shared by the preview and the import, so both
 * decide alike.
 */
import { type CheckedPackage, PackageRefusal } from "../package/case-package.ts";
import { describeRefusal } from "../../images/image-structure.ts";
import type { CaseExportData } from "../shapes.ts";
import type { ExchangeUser } from "../sources.ts";
import { MAX_READ_ONLY_CASES } from "../../schemas/user.ts";
import { ServiceError } from "../../errors.ts";
import { UnreadableDocumentError } from "../../cases/case-store.ts";
import type { CaseStore } from "../../cases/case-store.ts";

/** The message of rule 4, as docs/exchange.md words it. */
export const OWN_CASE_REFUSAL = "the original analyst cannot review their own case";

/** Rule 4: the exporter is named and is not the importer. */
export function checkExporter(data: CaseExportData, importerUid: string): void {
  const exporter = data.metadata.exportedByUid;
  if (typeof exporter !== "string" || exporter === "") throw new PackageRefusal("metadata.exportedByUid is required");
  if (exporter === importerUid) throw new PackageRefusal(OWN_CASE_REFUSAL, true);
}

/**
 * Rule 6: a read-only case of the same number is imported already and overwriteExisting was not
 * asked for: a `CONFLICT` (409 over HTTP) that importing again with it resolves.
 */
export class ReadOnlyCaseExists extends ServiceError {
  /** Creates the refusal for the case number. */
  constructor(caseNumber: string) {
    super("conflict", `A read-only case ${caseNumber} already exists; import with overwriteExisting to replace it`, { caseNumber });
  }
}

/** The refusal of an import that would list more than {@link MAX_READ_ONLY_CASES} read-only cases. */
export function readOnlyCasesFull(): PackageRefusal {
  return new PackageRefusal(`You hold ${MAX_READ_ONLY_CASES} read-only cases, the most a record lists: remove one before importing another`);
}

/**
 * Rules 5 and 6 (before anything is written): not an own case, listed or only stored (`existing`,
 * the importer's case document of that number); a same-number read-only case only with
 * overwriteExisting; room for one more read-only case.
 */
export function checkImporterCases(data: CaseExportData, importer: ExchangeUser, overwriteExisting: boolean, existing: unknown): { replaces: boolean } {
  const caseNumber = data.metadata.caseNumber;
  if (importer.cases.some((assignment) => assignment.caseNumber === caseNumber)) {
    throw new PackageRefusal(`Case ${caseNumber} is one of your own cases: ${OWN_CASE_REFUSAL}`, true);
  }
  checkCaseDocument(caseNumber, existing);
  const replaces = (importer.readOnlyCases ?? []).some((entry) => entry.caseNumber === caseNumber);
  if (replaces && !overwriteExisting) {
    throw new ReadOnlyCaseExists(caseNumber);
  }
  if (!replaces && (importer.readOnlyCases ?? []).length >= MAX_READ_ONLY_CASES) throw readOnlyCasesFull();
  return { replaces };
}

/** Whether a stored case document is a read-only import of `caseNumber` (what an import writes, and the v1.0 client's import too). */
function isReadOnlyImportOf(document: unknown, caseNumber: string): boolean {
  if (document === null || typeof document !== "object") return false;
  const fields = document as Record<string, unknown>;
  return fields.isReadOnly === true && typeof fields.importedAt === "string" && fields.caseNumber === caseNumber;
}

/**
 * Rule 5: the importer's case document of that number, when there is one, is a read-only import
 * of the same case. Anything else there (a case they wrote through /data that their record does
 * not list, or no longer lists) is theirs: a `CONFLICT` refusal (409), nothing is replaced.
 */
export function checkCaseDocument(caseNumber: string, existing: unknown): void {
  // `[]` is how the data worker answers a document it does not hold: absent, as the HTTP store reads it.
  if (existing === null || (Array.isArray(existing) && existing.length === 0) || isReadOnlyImportOf(existing, caseNumber)) return;
  throw ServiceError.conflict(
    `A case document ${caseNumber} of your own is stored, not a read-only import of this case: importing would replace it. Remove or rename that case first`,
    { caseNumber },
  );
}

/** The importer's stored case document, or null; one that is not JSON counts as present (and as not an import). */
export async function storedCaseDocument(store: CaseStore, userUid: string, caseNumber: string): Promise<unknown> {
  try {
    return await store.getCase(userUid, caseNumber);
  } catch (err) {
    if (err instanceof UnreadableDocumentError) return { unreadable: true };
    throw err;
  }
}

/** The package against itself: every file has its image, no image is left over, totalFiles matches. */
export function consistencyProblems(pkg: CheckedPackage): string[] {
  const problems: string[] = [];
  for (const file of pkg.filesWithoutImage) {
    problems.push(`File ${file.fileData.id} (${file.fileData.originalFilename}) has no image in the archive`);
  }
  for (const name of pkg.unreferencedImages) problems.push(`The image images/${name} belongs to no file of the data file`);
  if (pkg.data.metadata.totalFiles !== pkg.data.files.length) {
    problems.push(`metadata.totalFiles is ${pkg.data.metadata.totalFiles} but the data file lists ${pkg.data.files.length} files`);
  }
  return problems;
}

/** Rule 8: every image to store is one the image host accepts, checked as an upload is (before anything is written). */
export function checkImages(pkg: CheckedPackage, maxImageBytes?: number): void {
  for (const file of pkg.data.files) {
    const image = pkg.images.get(file.fileData.id);
    if (image !== undefined && maxImageBytes !== undefined && image.size > maxImageBytes) {
      throw new PackageRefusal(`images/${image.name} is ${image.size} bytes, more than the largest image this service stores (MAX_IMAGE_BYTES, ${maxImageBytes} bytes)`);
    }
    if (image === undefined || image.inspection.ok) continue;
    const inspection = image.inspection;
    throw new PackageRefusal(inspection.reason === "not-an-image"
      ? `images/${image.name} is not a JPEG, PNG, GIF, WebP, TIFF or BMP image`
      : describeRefusal(`images/${image.name}`, inspection).message);
  }
}
