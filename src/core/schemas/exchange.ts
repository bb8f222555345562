/**
 * @module
 * Export and import of cases and confirmations (docs/exchange.md#single-case-json and docs/exchange.md). Exported
 * documents are loose objects: files made by other clients keep their extra fields. Parsing
 * may reorder keys (known fields first), so hashes are checked on the raw JSON, never on a
 * parsed value.
 */
import * as z from "zod";
import { AnnotationDataSchema, ConfirmationSchema } from "./annotation.ts";
import { FileDataSchema } from "./case.ts";
import { CasesDeleteBodySchema } from "./user.ts";
import { ErrorCodeSchema } from "./error.ts";

export { type Confirmation, ConfirmationSchema } from "./annotation.ts";

const count = z.int().min(0);
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/i, "expected a SHA-256 as 64 hex digits");

/** Format of an export (docs/exchange.md#single-case-json ExportFormat). */
export const ExportFormatSchema = z.enum(["json", "csv"]);
export type ExportFormat = z.infer<typeof ExportFormatSchema>;

/** ExportOptions of docs/exchange.md#single-case-json. */
export const ExportOptionsSchema = z.object({
  includeAnnotations: z.boolean().optional(),
  includeMetadata: z.boolean().optional(),
});
export type ExportOptions = z.infer<typeof ExportOptionsSchema>;

/** Who exported (docs/exchange.md#single-case-json, docs/exchange.md): shared by the case and bulk metadata. */
const exporterShape = {
  exportDate: z.string(),
  exportedBy: z.string().nullable(),
  exportedByUid: z.string().optional(),
  exportedByName: z.string().optional(),
  exportedByCompany: z.string().optional(),
};

/** The schema version under either name: older clients write `striaeExportSchemaVersion`. */
const schemaVersionShape = {
  exportSchemaVersion: z.string().optional(),
  striaeExportSchemaVersion: z.string().optional(),
};

function hasSchemaVersion(metadata: { exportSchemaVersion?: string | undefined; striaeExportSchemaVersion?: string | undefined }): boolean {
  return metadata.exportSchemaVersion !== undefined || metadata.striaeExportSchemaVersion !== undefined;
}

const schemaVersionRequired = {
  error: "exportSchemaVersion (or striaeExportSchemaVersion) is required",
  path: ["exportSchemaVersion"],
};

/**
 * `metadata` of CaseExportData (docs/exchange.md#single-case-json, docs/exchange.md#single-case-json). The version is
 * `exportSchemaVersion` or, from older clients, `striaeExportSchemaVersion`: each is optional
 * and at least one must be present (prefer `exportSchemaVersion` when reading).
 * `exportedByUid` is optional here; an import requires it (docs/exchange.md import rule 4).
 */
export const CaseExportMetadataSchema = z
  .looseObject({
    caseNumber: z.string(),
    caseCreatedDate: z.string().optional(),
    ...exporterShape,
    ...schemaVersionShape,
    totalFiles: count,
  })
  .refine(hasSchemaVersion, schemaVersionRequired);
export type CaseExportMetadata = z.infer<typeof CaseExportMetadataSchema>;

/** One entry of CaseExportData `files` (docs/exchange.md#single-case-json): the file, its annotations if any, and whether it has any. */
export const CaseExportFileSchema = z.looseObject({
  fileData: FileDataSchema,
  annotations: AnnotationDataSchema.optional(),
  hasAnnotations: z.boolean(),
});
export type CaseExportFile = z.infer<typeof CaseExportFileSchema>;

/** `summary` of CaseExportData (docs/exchange.md#single-case-json, docs/exchange.md#single-case-json); the fields docs/exchange.md adds are optional for older files. */
export const CaseExportSummarySchema = z.looseObject({
  filesWithAnnotations: count,
  filesWithoutAnnotations: count,
  totalBoxAnnotations: count,
  filesWithConfirmations: count.optional(),
  filesWithConfirmationsRequested: count.optional(),
  lastModified: z.string().optional(),
  earliestAnnotationDate: z.string().optional(),
  latestAnnotationDate: z.string().optional(),
  exportError: z.string().optional(),
});
export type CaseExportSummary = z.infer<typeof CaseExportSummarySchema>;

/** CaseExportData of docs/exchange.md#single-case-json: the single-case JSON export (docs/exchange.md). */
export const CaseExportDataSchema = z.looseObject({
  metadata: CaseExportMetadataSchema,
  files: z.array(CaseExportFileSchema),
  summary: CaseExportSummarySchema.optional(),
});
export type CaseExportData = z.infer<typeof CaseExportDataSchema>;

/** `metadata` of AllCasesExportData (docs/exchange.md#single-case-json, docs/exchange.md#bulk-json); the version as in {@link CaseExportMetadataSchema}. */
export const AllCasesExportMetadataSchema = z
  .looseObject({
    ...exporterShape,
    ...schemaVersionShape,
    totalCases: count,
    totalFiles: count,
    totalAnnotations: count,
    totalConfirmations: count.optional(),
    totalConfirmationsRequested: count.optional(),
  })
  .refine(hasSchemaVersion, schemaVersionRequired);
export type AllCasesExportMetadata = z.infer<typeof AllCasesExportMetadataSchema>;

/** `summary` of AllCasesExportData (docs/exchange.md#single-case-json, docs/exchange.md#bulk-json). */
export const AllCasesExportSummarySchema = z.looseObject({
  casesWithFiles: count,
  casesWithAnnotations: count,
  casesWithoutFiles: count,
  lastModified: z.string().optional(),
  earliestAnnotationDate: z.string().optional(),
  latestAnnotationDate: z.string().optional(),
});
export type AllCasesExportSummary = z.infer<typeof AllCasesExportSummarySchema>;

/** AllCasesExportData of docs/exchange.md#single-case-json: the bulk JSON export of every case (docs/exchange.md#bulk-json). */
export const AllCasesExportDataSchema = z.looseObject({
  metadata: AllCasesExportMetadataSchema,
  cases: z.array(CaseExportDataSchema),
  summary: AllCasesExportSummarySchema.optional(),
});
export type AllCasesExportData = z.infer<typeof AllCasesExportDataSchema>;

/** ImportOptions of docs/exchange.md#single-case-json. */
export const ImportOptionsSchema = z.object({
  overwriteExisting: z.boolean().optional(),
  validateIntegrity: z.boolean().optional(),
  preserveTimestamps: z.boolean().optional(),
});
export type ImportOptions = z.infer<typeof ImportOptionsSchema>;

/** What an import found of the manifest signature (docs/exchange.md#signatures): valid, invalid or absent. */
export const SignatureValiditySchema = z.union([z.boolean(), z.literal("unsigned")]);
export type SignatureValidity = z.infer<typeof SignatureValiditySchema>;

/** ImportResult of docs/exchange.md#single-case-json, plus `signatureValid` of docs/exchange.md#signatures. */
export const ImportResultSchema = z.object({
  success: z.boolean(),
  caseNumber: z.string(),
  isReadOnly: z.boolean(),
  filesImported: count,
  annotationsImported: count,
  errors: z.array(z.string()).optional(),
  /** On failure, the error body's code it answers with over HTTP (`CONFLICT`: a case document of the importer's own is in the way). */
  errorCode: ErrorCodeSchema.optional(),
  /** True when the refusal is a read-only case of the same number: importing with overwriteExisting replaces it. */
  overwritable: z.literal(true).optional(),
  warnings: z.array(z.string()).optional(),
  signatureValid: SignatureValiditySchema.optional(),
});
export type ImportResult = z.infer<typeof ImportResultSchema>;

/** ConfirmationImportResult of docs/exchange.md#single-case-json. */
export const ConfirmationImportResultSchema = z.object({
  success: z.boolean(),
  caseNumber: z.string(),
  confirmationsImported: count,
  imagesUpdated: count,
  errors: z.array(z.string()).optional(),
  signatureValid: SignatureValiditySchema.optional(),
  warnings: z.array(z.string()).optional(),
});
export type ConfirmationImportResult = z.infer<typeof ConfirmationImportResultSchema>;

/** CaseImportPreview of docs/exchange.md#single-case-json, plus `signatureValid` of docs/exchange.md#signatures. */
export const CaseImportPreviewSchema = z.object({
  caseNumber: z.string(),
  fileCount: count,
  annotationCount: count,
  exportDate: z.string(),
  exportedBy: z.string().nullable(),
  hasImages: z.boolean(),
  canImport: z.boolean(),
  warnings: z.array(z.string()),
  signatureValid: SignatureValiditySchema.optional(),
});
export type CaseImportPreview = z.infer<typeof CaseImportPreviewSchema>;

/** CasesToDelete of docs/exchange.md#single-case-json: the same schema as the body of DELETE /{userUid}/cases. */
export const CasesToDeleteSchema = CasesDeleteBodySchema;
export type CasesToDelete = z.infer<typeof CasesToDeleteSchema>;

/** CaseActionType of docs/exchange.md#single-case-json: loaded, created, deleted or null. */
export const CaseActionTypeSchema = z.enum(["loaded", "created", "deleted"]).nullable();
export type CaseActionType = z.infer<typeof CaseActionTypeSchema>;

/** The detached JWS over the manifest hash in `FORENSIC_MANIFEST.json` (docs/exchange.md#signatures). */
export const ManifestSignatureSchema = z.looseObject({
  algorithm: z.string(),
  keyId: z.string(),
  value: z.string(),
});
export type ManifestSignature = z.infer<typeof ManifestSignatureSchema>;

/**
 * `FORENSIC_MANIFEST.json` of a ZIP export (docs/exchange.md#zip-package): SHA-256 hex of the data file
 * and of each image entry (any letter case accepted; we write lower case), optional signature.
 */
export const ForensicManifestSchema = z.looseObject({
  dataHash: sha256Hex,
  imageHashes: z.record(z.string(), sha256Hex),
  manifestHash: sha256Hex,
  totalFiles: z.int().min(1),
  createdAt: z.string(),
  signature: ManifestSignatureSchema.optional(),
});
export type ForensicManifest = z.infer<typeof ForensicManifestSchema>;

/**
 * A confirmation export (docs/exchange.md#confirmations): metadata with the SHA-256 `hash` of the
 * file without it, and the confirmations by original image id. `originalExportCreatedAt` is
 * optional for files of older clients.
 */
export const ConfirmationExportSchema = z.looseObject({
  metadata: z.looseObject({
    caseNumber: z.string(),
    exportDate: z.string(),
    exportedBy: z.string().nullable(),
    exportedByUid: z.string(),
    exportedByName: z.string(),
    exportedByCompany: z.string(),
    totalConfirmations: count,
    version: z.string(),
    originalExportCreatedAt: z.string().optional(),
    /** The service's signature over the file's hash without it (docs/exchange.md#confirmations). */
    signature: ManifestSignatureSchema.optional(),
    hash: sha256Hex,
  }),
  confirmations: z.record(z.string(), z.array(ConfirmationSchema)),
});
export type ConfirmationExport = z.infer<typeof ConfirmationExportSchema>;
