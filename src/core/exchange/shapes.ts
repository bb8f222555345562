/**
 * @module
 * The export and import shapes (docs/exchange.md). Boxes, annotations and confirmations are
 * the one model of `../schemas/annotation.ts`, their types inferred from its schemas. The
 * export documents around them are written out as interfaces (their schemas in
 * `../schemas/exchange.ts` validate the same shapes; tests/exchange/shapes.test.ts keeps the
 * two in step). Stored and exported documents are loose: fields written by other clients are kept.
 */
import type { FileData } from "../schemas/resources.ts";
import type { ErrorCode } from "../schemas/error.ts";
import type { AnnotationData, Confirmation } from "../schemas/annotation.ts";

export type { FileData };
// The box and annotation model: the types inferred from the schemas of ../schemas/annotation.ts.
export type { AnnotationData, BoxAnnotation, ClassType, Confirmation, IndexType, SupportLevel } from "../schemas/annotation.ts";

/** The schema version every export of this module writes. */
export type ExportSchemaVersion = "1.0";

/** Who exported, when, and in which schema version: the metadata every export starts with. */
export interface ExportProvenance {
  /** When the export was made. */
  exportDate: string;
  /** The exporter's email, or null. */
  exportedBy: string | null;
  /** The exporter's user id (an import requires it). */
  exportedByUid?: string | undefined;
  /** The exporter's name. */
  exportedByName?: string | undefined;
  /** The exporter's company. */
  exportedByCompany?: string | undefined;
  /** `"1.0"` in our exports. */
  exportSchemaVersion?: string | undefined;
  /** The same, as older clients name it. */
  striaeExportSchemaVersion?: string | undefined;
}

/** `metadata` of a single-case export (docs/exchange.md#single-case-json). */
export interface CaseExportMetadata extends ExportProvenance {
  /** The case number. */
  caseNumber: string;
  /** When the case was created. */
  caseCreatedDate?: string | undefined;
  /** Number of files. */
  totalFiles: number;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** One entry of `files` of a single-case export. */
export interface CaseExportFile {
  /** The file. */
  fileData: FileData;
  /** Its annotations, when it has a document and `includeAnnotations` is not false. */
  annotations?: AnnotationData | undefined;
  /** Whether any annotation field is set or a box exists. */
  hasAnnotations: boolean;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** `summary` of a single-case export. */
export interface CaseExportSummary {
  /** Files with annotations. */
  filesWithAnnotations: number;
  /** Files without annotations. */
  filesWithoutAnnotations: number;
  /** Boxes over all files. */
  totalBoxAnnotations: number;
  /** Files whose annotations hold a confirmation. */
  filesWithConfirmations?: number | undefined;
  /** Files whose examiner requests a confirmation. */
  filesWithConfirmationsRequested?: number | undefined;
  /** Latest change of the case or its annotations. */
  lastModified?: string | undefined;
  /** Earliest `updatedAt` of an annotated file. */
  earliestAnnotationDate?: string | undefined;
  /** Latest `updatedAt` of an annotated file. */
  latestAnnotationDate?: string | undefined;
  /** Why the case could not be exported (bulk exports). */
  exportError?: string | undefined;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** CaseExportData of docs/exchange.md#single-case-json: the single-case JSON export. */
export interface CaseExportData {
  /** Who exported which case, when. */
  metadata: CaseExportMetadata;
  /** The files with their annotations. */
  files: CaseExportFile[];
  /** Counts and dates, unless `includeMetadata` was false. */
  summary?: CaseExportSummary | undefined;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** `metadata` of the bulk export (docs/exchange.md#bulk-json). */
export interface AllCasesExportMetadata extends ExportProvenance {
  /** Number of cases. */
  totalCases: number;
  /** Files over all cases. */
  totalFiles: number;
  /** Annotated files over all cases. */
  totalAnnotations: number;
  /** Files with a confirmation over all cases. */
  totalConfirmations?: number | undefined;
  /** Files with a requested confirmation over all cases. */
  totalConfirmationsRequested?: number | undefined;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** `summary` of the bulk export. */
export interface AllCasesExportSummary {
  /** Cases with at least one file. */
  casesWithFiles: number;
  /** Cases with at least one annotated file. */
  casesWithAnnotations: number;
  /** Cases without files (and cases that failed to export). */
  casesWithoutFiles: number;
  /** Latest change over all cases. */
  lastModified?: string | undefined;
  /** Earliest annotation date over all cases. */
  earliestAnnotationDate?: string | undefined;
  /** Latest annotation date over all cases. */
  latestAnnotationDate?: string | undefined;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** AllCasesExportData of docs/exchange.md#single-case-json: every case of a user. */
export interface AllCasesExportData {
  /** Who exported, when, and totals. */
  metadata: AllCasesExportMetadata;
  /** One single-case export per case; a failed case has `files: []` and `summary.exportError`. */
  cases: CaseExportData[];
  /** Counts and dates, unless `includeMetadata` was false. */
  summary?: AllCasesExportSummary | undefined;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** ExportOptions of docs/exchange.md#single-case-json. */
export interface ExportOptions {
  /** Include each file's annotations (default true). */
  includeAnnotations?: boolean | undefined;
  /** Include the `summary` block (default true). */
  includeMetadata?: boolean | undefined;
}

/** ImportOptions of docs/exchange.md#single-case-json. */
export interface ImportOptions {
  /** Replace a read-only case of the same number (docs/exchange.md import rule 7). Default false. */
  overwriteExisting?: boolean | undefined;
  /**
   * Also check the package against itself (default true): every file has its image, no image
   * is left over, `totalFiles` matches. When false these become warnings. The manifest hashes
   * of rule 2 are always checked.
   */
  validateIntegrity?: boolean | undefined;
  /**
   * Keep the package's upload times, annotation `updatedAt` and case creation date (default
   * true); when false they become the import time.
   */
  preserveTimestamps?: boolean | undefined;
}

/** What an import found of the manifest signature: valid, invalid, or none. */
export type SignatureValidity = boolean | "unsigned";

/** ImportResult of docs/exchange.md#single-case-json, plus `signatureValid` (docs/exchange.md#signatures). */
export interface ImportResult {
  /** Whether the case was imported. */
  success: boolean;
  /** The case number ("" when the package has none). */
  caseNumber: string;
  /** Always true: imports are read-only cases. */
  isReadOnly: boolean;
  /** Images stored. */
  filesImported: number;
  /** Annotation documents stored. */
  annotationsImported: number;
  /** Why the import was refused or failed. */
  errors?: string[] | undefined;
  /**
   * On failure, the code of the error body it answers with over HTTP: `CONFLICT` (409) when a
   * case document of the importer's own stands in the way, `VALIDATION_ERROR` for a package
   * refused, `SERVER_ERROR` for a store that failed (docs/exchange.md#rules).
   */
  errorCode?: ErrorCode | undefined;
  /** True when the refusal is a read-only case of the same number (`CONFLICT`): importing with overwriteExisting replaces it. */
  overwritable?: true | undefined;
  /** What the import noticed without refusing. */
  warnings?: string[] | undefined;
  /** The manifest signature, when the manifest could be read. */
  signatureValid?: SignatureValidity | undefined;
}

/** CaseImportPreview of docs/exchange.md#single-case-json, plus `signatureValid`. */
export interface CaseImportPreview {
  /** The case number ("" when the package has none). */
  caseNumber: string;
  /** Files in the data file. */
  fileCount: number;
  /** Files with an annotations document. */
  annotationCount: number;
  /** When the package was exported. */
  exportDate: string;
  /** The exporter's email, or null. */
  exportedBy: string | null;
  /** Whether the package holds images. */
  hasImages: boolean;
  /** Whether an import would pass every rule checked so far. */
  canImport: boolean;
  /** Refusal reasons (when `canImport` is false) and other findings. */
  warnings: string[];
  /** The manifest signature, when the manifest could be read. */
  signatureValid?: SignatureValidity | undefined;
}

/** ConfirmationImportResult of docs/exchange.md#single-case-json. */
export interface ConfirmationImportResult {
  /** Whether the file was accepted and processed (per-image refusals are in `errors`). */
  success: boolean;
  /** The case number. */
  caseNumber: string;
  /** Confirmations attached to annotations. */
  confirmationsImported: number;
  /** Annotation documents updated. */
  imagesUpdated: number;
  /** Refusals: of the file, or of single images. */
  errors?: string[] | undefined;
  /** The file's signature (`metadata.signature`): valid, invalid, or `"unsigned"`; absent when the file was refused before it was read. */
  signatureValid?: SignatureValidity | undefined;
  /** Images skipped. */
  warnings?: string[] | undefined;
}

/** The detached JWS over the manifest hash (docs/exchange.md#signatures). */
export interface ManifestSignature {
  /** JWS `alg`, e.g. `ES256`. */
  algorithm: string;
  /** JWS `kid`: which key signed. */
  keyId: string;
  /** The compact JWS with its payload detached: `header..signature`. */
  value: string;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** `FORENSIC_MANIFEST.json` of a ZIP export. */
export interface ForensicManifest {
  /** SHA-256 (lower-case hex) of the data file. */
  dataHash: string;
  /** SHA-256 of each image, keyed by its name under `images/`, keys sorted. */
  imageHashes: Record<string, string>;
  /** SHA-256 of the compact JSON of `{dataHash, imageHashes, totalFiles, createdAt}`. */
  manifestHash: string;
  /** Images plus the data file. */
  totalFiles: number;
  /** When the manifest was made. */
  createdAt: string;
  /** Present when the exporting service has a signing key. */
  signature?: ManifestSignature | undefined;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** `metadata` of a confirmation export (docs/exchange.md#confirmations). */
export interface ConfirmationExportMetadata {
  /** The case number (the original analyst's case). */
  caseNumber: string;
  /** When the confirmations were exported. */
  exportDate: string;
  /** The reviewer's email, or null. */
  exportedBy: string | null;
  /** The reviewer's user id. */
  exportedByUid: string;
  /** The reviewer's name. */
  exportedByName: string;
  /** The reviewer's company. */
  exportedByCompany: string;
  /** Confirmations in the file. */
  totalConfirmations: number;
  /** `"1.0"`. */
  version: string;
  /** Export date of the case package the reviewer imported. */
  originalExportCreatedAt?: string | undefined;
  /** Upper-case SHA-256 of the 2-space JSON of the file without this field. */
  hash: string;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** A confirmation export: confirmations keyed by the original image id. */
export interface ConfirmationExport {
  /** Who confirmed which case, and the integrity hash. */
  metadata: ConfirmationExportMetadata;
  /** The confirmations of each original image id. */
  confirmations: Record<string, Confirmation[]>;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** One phase of an export as the progress callback reports it. */
export type ExportPhase = "collecting" | "images" | "hashing" | "writing";

/** A progress report: `done` of `total` steps of `phase`. */
export interface ExportProgress {
  /** collecting (files read), images (images written), hashing (manifest), writing (archive end). */
  phase: ExportPhase;
  /** Steps done in this phase. */
  done: number;
  /** Steps in this phase. */
  total: number;
}
