/**
 * @module
 * A typed client of the forensic annotation service over `fetch` only: every worker's calls
 * with their credentials, typed requests and answers, and error answers as
 * {@link ServiceClientError}. Runs in browsers and on every runtime; it carries no server code.
 *
 * @example
 * ```ts
 * import { createClient, ServiceClientError } from "@forensic-annotation/service/client";
 *
 * const client = createClient({ baseUrl: "http://localhost:8787", userKey: "…", dataKey: "…" });
 * try {
 *   const user = await client.user.get("u1");
 *   const found = await client.data.getCase(user.uid, "C-1");
 * } catch (err) {
 *   if (err instanceof ServiceClientError && err.code === "NOT_FOUND") console.log("no such user");
 * }
 * ```
 */
export {
  type AuditClient,
  type ClientErrorCode,
  type ClientOptions,
  createClient,
  type DataClient,
  type DataKey,
  type ExchangeClient,
  type ExchangeExportOptions,
  type ExchangeFile,
  type ExchangeUpload,
  type ReviewClient,
  type ReviewView,
  type ServiceClient,
  ServiceClientError,
  type UserClient,
  type WorkerName,
} from "./client.ts";
export type {
  AuditAppended,
  AuditEntries,
  AuditEntryInput,
  AuditRange,
  CaptchaResult,
  CaseAssignmentInput,
  HistoryPruneResult,
  ImageClient,
  LegalHold,
  LegalHolds,
  UnreadableAuditEntry,
  UploadedImage,
  UserDeletion,
  UserList,
  UserInput,
} from "./types.ts";
export type { AuditDayVerification, AuditHeadVerification, AuditTamperReason, AuditVerification } from "../core/audit/verify.ts";
export type { HeadSignatureStatus } from "../core/audit/head-signature.ts";
export type { HistoryFailure, HistoryVerification, KeyHistory, VersionRecord } from "../core/history/mod.ts";
export type {
  AuditRoutes,
  AuditWorkerRoutes,
  CaptchaRoutes,
  CaptchaWorkerRoutes,
  DataRoutes,
  DataWorkerRoutes,
  Endpoint,
  HealthRoutes,
  ImageEnvelope,
  ImageRoutes,
  ImageWorkerRoutes,
  KeysRoutes,
  KeysWorkerRoutes,
  PdfRoutes,
  PdfWorkerRoutes,
  ServiceRoutes,
  UserRoutes,
  UserWorkerRoutes,
} from "./routes.ts";
export type { AnnotationData, BoxAnnotation, Confirmation } from "../core/schemas/annotation.ts";
export type { AuditEntry, CaseData, ErrorBody, FileData, UserData } from "../core/schemas/resources.ts";
export type { ErrorCode } from "../core/schemas/error.ts";
export type { CaseImportPreview, ConfirmationExport, ConfirmationImportResult, ImportResult } from "../core/exchange/shapes.ts";
export type {
  Conclusion,
  ConclusionRequest,
  Review,
  ReviewConfirmation,
  ReviewFile,
  ReviewKind,
  ReviewRequest,
  ReviewSignature,
  ReviewVerification,
  SignatureMeaning,
  SignatureRequest,
  SignedRecord,
  SigningUnderWay,
} from "../core/schemas/review.ts";
export type { ReportAnnotations, ReportBox, ReportInput, ReportRequest } from "../core/pdf/mod.ts";
