/**
 * @module
 * Export and import of cases (docs/exchange.md): single-case JSON, CSV
 * and ZIP (images, README.txt, READ_ONLY_INSTRUCTIONS.txt, FORENSIC_MANIFEST.json, optionally
 * signed), every case as JSON or an XLSX workbook, import of a ZIP as a read-only case, and
 * confirmations. Isomorphic: web crypto, web streams, fflate, jose and zod only, so it runs in
 * a browser, Deno, Bun, workerd and Node. It reads and writes through an
 * {@link ExchangeStore}: the service's ports ({@link portsExchangeStore}) or the workers'
 * HTTP API ({@link httpExchangeStore}).
 *
 * @example
 * ```ts
 * import { exportCaseZip, httpExchangeStore, importCase } from "@forensic-annotation/service/exchange";
 *
 * const store = httpExchangeStore({
 *   userWorkerUrl: "http://127.0.0.1:8787/user", userKey: "USER_DB_AUTH value",
 *   dataWorkerUrl: "http://127.0.0.1:8787/data", dataKey: "R2_KEY_SECRET value",
 *   imageWorkerUrl: "http://127.0.0.1:8787/image", imageToken: "IMAGES_API_TOKEN value",
 * });
 * // The analyst exports a case...
 * const zip = new Uint8Array(await new Response(exportCaseZip(store, "analyst-uid", "CASE-1", {
 *   onProgress: ({ phase, done, total }) => console.log(phase, done, total),
 * })).arrayBuffer());
 * // ...and a reviewer imports it as a read-only case.
 * const result = await importCase(store, zip, "reviewer-uid");
 * console.log(result.success, result.errors);
 * ```
 */
export type {
  AllCasesExportData,
  AllCasesExportMetadata,
  AllCasesExportSummary,
  AnnotationData,
  BoxAnnotation,
  CaseExportData,
  CaseExportFile,
  CaseExportMetadata,
  CaseExportSummary,
  CaseImportPreview,
  ClassType,
  Confirmation,
  ConfirmationExport,
  ConfirmationExportMetadata,
  ConfirmationImportResult,
  ExportOptions,
  ExportPhase,
  ExportProgress,
  ExportProvenance,
  FileData,
  ForensicManifest,
  ImportOptions,
  ImportResult,
  IndexType,
  ManifestSignature,
  SignatureValidity,
  SupportLevel,
} from "./shapes.ts";
export {
  type ExchangeAuditEntry,
  type ExchangeImageUpload,
  type ExchangePorts,
  type ExchangeStore,
  type ExchangeUser,
  portsExchangeStore,
  type ReadOnlyCaseEntry,
} from "./sources.ts";
export { httpExchangeStore, type HttpExchangeOptions } from "./http-source.ts";
export type { CaseImageFacts, CaseImageStream, CaseImageUpload, CaseStore } from "../cases/case-store.ts";
export type { UserData } from "../schemas/resources.ts";
export type { HttpCaseStoreOptions } from "../cases/http-case-store.ts";
export type { WorkerCallOptions } from "../cases/worker-calls.ts";
export { ExchangeError, type ExchangeErrorCode } from "./exchange-error.ts";
export type { CaseExportOptions } from "./case-export.ts";
export { exportAllCases, exportCase, type ExportedFile, type ExportSaving } from "./export-files.ts";
export { type CaseZipOptions, type CaseZipSummary, exportCaseZip, writeCaseZip } from "./package/zip-export.ts";
export { type CsvVerification, verifyCaseCsv } from "./formats/csv.ts";
export { type PreviewContext, previewCaseImport } from "./import/import-preview.ts";
export { type CaseImportOptions, importCase } from "./import/case-import.ts";
export type { ArchiveReader } from "./package/zip-read.ts";
export { type ConfirmationExportOptions, createConfirmation, exportConfirmations, importConfirmations, type ReviewerDetails } from "./confirmations.ts";
export { type ExchangeJwk, type ManifestSigner, publicJwkOf, type SignatureVerification, signerFromJwk } from "./package/signature.ts";
export {
  isSealedPackage,
  type OpenedPackage,
  type OpeningKey,
  openingKeyOf,
  openSealedPackage,
  type RecipientKey,
  recipientKeyOf,
  type SealedHeader,
  type SealingAlgorithm,
  sealPackage,
  type SealOptions,
} from "./sealed/mod.ts";
export { type ExchangeKeySet, exchangeKeySet } from "./exchange-keys.ts";
