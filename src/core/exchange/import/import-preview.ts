/**
 * @module
 * `previewCaseImport`: what a package holds and whether it would import, without writing
 * anything. Runs the same checks as the import, in the same order (rules 1 to 7, the stored
 * case document included), as far as the context given allows: without an importer only the
 * package itself is checked.
 */
import { checkCasePackage, type PackageFacts } from "../package/case-package.ts";
import type { CaseImportOptions } from "./case-import.ts";
import { readCaseCsv } from "../formats/csv.ts";
import { messageOf } from "../exchange-error.ts";
import { checkExporter, checkImages, checkImporterCases, consistencyProblems, storedCaseDocument } from "./import-rules.ts";
import type { CaseImportPreview } from "../shapes.ts";
import type { ExchangeStore } from "../sources.ts";
import type { ArchiveReader } from "../package/zip-read.ts";

/** Who would import, and how: everything optional. */
export interface PreviewContext extends Pick<CaseImportOptions, "overwriteExisting" | "validateIntegrity" | "verification" | "maxImageBytes"> {
  /** The store, to check the importer's own and read-only cases. */
  store?: ExchangeStore | undefined;
  /** The importing user. */
  importerUid?: string | undefined;
}

/**
 * A package whose data file is the client's CSV: it cannot be imported (rule 1), but the
 * preview reads it, warning line and all, and says whether its data rows match their hash.
 */
async function csvPreview(facts: PackageFacts, warnings: string[]): Promise<CaseImportPreview> {
  const csv = await readCaseCsv(facts.csv!);
  warnings.push(
    csv.verification.valid
      ? "The CSV data rows match their SHA-256 hash"
      : csv.verification.expected === null
      ? "The CSV states no SHA-256 hash for its data rows"
      : "The CSV data rows do not match their SHA-256 hash: they were changed after the export",
  );
  return {
    caseNumber: csv.caseNumber,
    fileCount: csv.fileCount,
    annotationCount: csv.annotatedCount,
    exportDate: csv.exportDate,
    exportedBy: csv.exportedBy,
    hasImages: facts.hasImages,
    canImport: false,
    warnings,
  };
}

/**
 * Previews a package. Never throws: a package that would be refused has `canImport: false`
 * and the reason first in `warnings`. `zip` is read as by `importCase`.
 */
export async function previewCaseImport(zip: Uint8Array | Blob | ArchiveReader, context: PreviewContext = {}): Promise<CaseImportPreview> {
  const facts: PackageFacts = { hasImages: false };
  const warnings: string[] = [];
  let canImport = true;
  try {
    const pkg = await checkCasePackage(zip, context.verification, facts);
    warnings.push(...pkg.warnings);
    if (context.importerUid !== undefined) {
      checkExporter(pkg.data, context.importerUid);
      if (context.store !== undefined) {
        const importer = await context.store.getUser(context.importerUid);
        if (importer === null) throw new Error(`The importing user ${context.importerUid} does not exist`);
        const existing = await storedCaseDocument(context.store, context.importerUid, pkg.data.metadata.caseNumber);
        const { replaces } = checkImporterCases(pkg.data, importer, context.overwriteExisting === true, existing);
        if (replaces) warnings.push(`The read-only case ${pkg.data.metadata.caseNumber} would be replaced`);
      }
    }
    const problems = consistencyProblems(pkg);
    if (problems.length > 0 && context.validateIntegrity !== false) throw new Error(`The package is inconsistent: ${problems.join("; ")}`);
    warnings.push(...problems);
    checkImages(pkg, context.maxImageBytes);
  } catch (err) {
    canImport = false;
    warnings.unshift(messageOf(err));
  }
  const data = facts.data;
  if (data === undefined && facts.csv !== undefined) return await csvPreview(facts, warnings);
  return {
    caseNumber: typeof data?.metadata.caseNumber === "string" ? data.metadata.caseNumber : "",
    fileCount: data?.files.length ?? 0,
    annotationCount: data?.files.filter((file) => file.annotations !== undefined && file.annotations !== null).length ?? 0,
    exportDate: typeof data?.metadata.exportDate === "string" ? data.metadata.exportDate : "",
    exportedBy: typeof data?.metadata.exportedBy === "string" ? data.metadata.exportedBy : null,
    hasImages: facts.hasImages,
    canImport,
    warnings,
    ...(facts.signatureValid !== undefined ? { signatureValid: facts.signatureValid } : {}),
  };
}
