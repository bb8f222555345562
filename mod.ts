/**
 * @module
 * The forensic annotation service: seven HTTP workers (user, image, PDF, data, keys,
 * captcha, audit) as Hono apps over ports, runnable on Node, Bun, Deno and Cloudflare or
 * mounted inside an existing app.
 *
 * @example
 * ```ts
 * import { createService, createBlobStore, createKvStore, parseConfig, systemClock } from "@forensic-annotation/service";
 * import { createStorage } from "unstorage";
 *
 * const store = () => createBlobStore(createStorage());
 * const app = createService(
 *   { data: store(), audit: store(), images: store(), users: createKvStore(createStorage()), clock: systemClock },
 *   parseConfig({ R2_KEY_SECRET: "data-key", KEYS_AUTH: "keys-key" }),
 * );
 * const response = await app.request("/health");
 * ```
 */
export { createService, imageHostOf, type ServicePorts, WORKER_MOUNTS, type WorkerName } from "./src/core/service/service.ts";
export { ConfigError, GENERATED_SECRETS, type IdentityConfig, NEVER_EXPOSED, parseConfig, type ServiceConfig } from "./src/core/config.ts";
export { type AccessControl, accessControl, type AccessControlDeps } from "./src/core/http/access.ts";
export { ADMIN_KEY_HEADER, IDENTITY_TOKEN_HEADER } from "./src/core/http/actor.ts";
export {
  createIdentityVerifier,
  FIREBASE_JWKS_URL,
  firebaseIdentity,
  type Identity,
  IDENTITY_TOKEN_ALGORITHMS,
  IdentityTokenError,
  type IdentityVerifier,
  type IdentityVerifierOptions,
} from "./src/core/identity/identity-token.ts";
export {
  createMemoryRateLimiter,
  type MemoryRateLimiter,
  type MemoryRateLimiterOptions,
  type RateDecision,
  type RateLimiter,
  type RateRule,
} from "./src/core/rate-limit/limiter.ts";
export { ADMIN_TRAIL_USER_ID } from "./src/core/identity/identity-token.ts";
export { DEFAULT_RATE_LIMITS, parseRateLimits, RATE_LIMIT_ROUTES, type RateLimitRoute, type RateLimits } from "./src/core/rate-limit/rules.ts";
export {
  type Actor,
  NO_AUDIT_LOG,
  type ServiceAuditAction,
  type ServiceAuditDetails,
  type ServiceAuditLog,
  type ServiceAuditResult,
  serviceAuditLog,
  type ServiceEvent,
} from "./src/core/audit/service-events.ts";
export {
  type AllCasesExportData,
  type CaseExportData,
  type CaseImportOptions,
  type CaseImportPreview,
  type CaseZipOptions,
  collectAllCasesExport,
  collectCaseExport,
  type ConfirmationImportResult,
  createConfirmation,
  ExchangeError,
  type ExchangeStore,
  exportAllCases,
  exportCase,
  exportCaseZip,
  exportConfirmations,
  type ExportOptions,
  httpExchangeStore,
  importCase,
  importConfirmations,
  type ImportOptions,
  type ImportResult,
  type ManifestSigner,
  portsExchangeStore,
  previewCaseImport,
  type SignatureVerification,
  signerFromJwk,
  verifyCaseCsv,
  writeCaseZip,
} from "./src/core/exchange/mod.ts";
export type {
  BlobStore,
  Bytes,
  CaptchaOutcome,
  CaptchaVerifier,
  Clock,
  HostedImage,
  ImageHost,
  ImageHostFactory,
  ImageUpload,
  KvStore,
  Mailer,
  MailMessage,
} from "./src/core/ports.ts";
export { systemClock } from "./src/core/ports.ts";
export { type BlobStoreOptions, createBlobStore, createKvStore } from "./src/core/storage/unstorage-stores.ts";
export {
  ContentionError,
  createVersionedBlobStore,
  type Versioned,
  type VersionedBackend,
  type VersionedStoreOptions,
} from "./src/core/storage/versioned-store.ts";
export { createMemoryPorts } from "./src/core/service/memory-ports.ts";
export { storageKeys } from "./src/core/storage/keys.ts";
export { createDataWorker, type DataWorkerDeps } from "./src/core/workers/data.ts";
export { createAuditWorker, type AuditWorkerDeps } from "./src/core/workers/audit.ts";
export { createKeysWorker, type KeysWorkerDeps } from "./src/core/workers/keys.ts";
export { createCaptchaWorker, type CaptchaWorkerDeps } from "./src/core/workers/captcha.ts";
export { createImageWorker, type ImageWorkerDeps } from "./src/core/workers/image.ts";
export { createLocalImageHost, type LocalImageHost, type LocalImageHostOptions, PUBLIC_VARIANT } from "./src/core/images/local-host.ts";
export { type CloudflareImageHostOptions, createCloudflareImageHost } from "./src/core/images/cloudflare-host.ts";
export { UpstreamError } from "./src/core/images/upstream-error.ts";
export { createUserWorker, DELETION_MAIL_FAILURE_MESSAGE, type UserWorkerDeps } from "./src/core/workers/user.ts";
export { createPdfWorker, type PdfWorkerDeps, type PdfWorkerOptions, pdfWorkerOptions } from "./src/core/workers/pdf.ts";
export { DEFAULT_CASE_FONT_COLOR, renderReport, type ReportOptions } from "./src/core/pdf/report.ts";
export { parseReportRequest, type ReportAnnotations, type ReportBox, type ReportInput, type ReportRequest } from "./src/core/pdf/report-request.ts";
export { createStandaloneUserWorker, type StandaloneUserWorkerDeps } from "./src/core/service/standalone-user.ts";
export { type AccountResources, storeResources, type StoreResourcesOptions } from "./src/core/cases/account-resources.ts";
export { httpResources, type HttpResourcesOptions } from "./src/core/cases/http-resources.ts";
export { createOutboxMailer } from "./src/core/mail/outbox-mailer.ts";
export { createHttpMailer, type HttpMailerOptions, MailNotSentError } from "./src/core/mail/http-mailer.ts";
export { mailerOf } from "./src/core/mail/transport.ts";
export { composeMessage, escapeHtml, htmlOf } from "./src/core/mail/message.ts";
export { type Mailbox, parseMailbox } from "./src/core/mail/mailbox.ts";
export { createSiteverifyVerifier, type SiteverifyOptions } from "./src/core/captcha/siteverify.ts";
export { type FailureKind, redactSecrets, ServiceError } from "./src/core/errors.ts";
export { type ErrorStatus, statusOf } from "./src/core/http/errors.ts";
export { ERROR_CODES, type ErrorCode } from "./src/core/schemas/error.ts";
export type { ServiceBindings, WorkerApp, WorkerEnv, WorkerVariables } from "./src/core/http/worker-app.ts";
