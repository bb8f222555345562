/**
 * @module
 * The forensic annotation service: HTTP workers (user, image, PDF, data, keys, captcha,
 * audit, review, exchange) as Hono apps over ports, runnable on Node, Bun, Deno and Cloudflare or
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
import { loadOpenApiGenerators } from "./src/core/http/openapi-document.ts";

// The service and its configuration.
export { createService, type ServicePorts } from "./src/core/service/service.ts";
export { ConfigError, type IdentityConfig, parseConfig, type ServiceConfig } from "./src/core/config/mod.ts";
export type { ServiceBindings, WorkerApp, WorkerEnv } from "./src/core/http/worker-app.ts";
// The ports, and the stores and services that can stand behind them.
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
export type { RateDecision, RateLimiter, RateRule } from "./src/core/rate-limit/limiter.ts";
export type { RateLimitRoute, RateLimits } from "./src/core/rate-limit/rules.ts";
export { type BlobStoreOptions, createBlobStore, createKvStore } from "./src/core/storage/unstorage-stores.ts";
export { createMemoryPorts } from "./src/core/service/memory-ports.ts";
export { createVersionedBlobStore, type Versioned, type VersionedBackend, type VersionedStoreOptions } from "./src/core/storage/versioned-store.ts";
// Each worker alone.
export { createDataWorker, type DataWorkerDeps } from "./src/core/workers/data.ts";
export { createAuditWorker, type AuditWorkerDeps } from "./src/core/workers/audit.ts";
export { createKeysWorker, type KeysWorkerDeps } from "./src/core/workers/keys.ts";
export { createCaptchaWorker, type CaptchaWorkerDeps } from "./src/core/workers/captcha.ts";
export { createImageWorker, type ImageWorkerDeps } from "./src/core/workers/image.ts";
export { createUserWorker, type UserWorkerDeps } from "./src/core/workers/user.ts";
export { createPdfWorker, type PdfWorkerDeps, type PdfWorkerOptions } from "./src/core/workers/pdf.ts";
export { createReviewWorker, type ReviewWorkerDeps } from "./src/core/workers/review.ts";
// Errors.
export { type FailureKind, ServiceError } from "./src/core/errors.ts";
// The resources the workers store and answer.
export type { AuditEntry, CaseData, ErrorBody, FileData, UserData } from "./src/core/schemas/resources.ts";
export type { ErrorCode } from "./src/core/schemas/error.ts";
export type { AnnotationData, BoxAnnotation, Confirmation } from "./src/core/schemas/annotation.ts";

// A worker made alone from this entry documents itself as the service does (getOpenAPI31Document, doc31).
loadOpenApiGenerators();
