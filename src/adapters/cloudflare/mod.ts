/**
 * @module
 * The Cloudflare adapter: module workers on KV and R2 bindings, used directly so stored
 * keys match existing buckets (`u1/C-1/data.json`).
 *
 * @example
 * ```ts
 * // worker.ts, deployed with a wrangler.jsonc that binds USER_DB, STRIAE_DATA, STRIAE_AUDIT, STRIAE_IMAGES
 * import { createCloudflareWorker, serviceOnBindings } from "@forensic-annotation/service/cloudflare";
 * export default createCloudflareWorker(serviceOnBindings);
 * ```
 */
export {
  auditWorkerOnBindings,
  type BuildApp,
  captchaWorkerOnBindings,
  type CloudflareEnv,
  cloudflarePorts,
  createCloudflareWorker,
  dataWorkerOnBindings,
  exchangeWorkerOnBindings,
  imageWorkerOnBindings,
  keysWorkerOnBindings,
  MissingBindingError,
  type ExecutionContextLike,
  type ModuleWorker,
  pdfWorkerOnBindings,
  reviewWorkerOnBindings,
  serviceOnBindings,
  userWorkerOnBindings,
} from "./worker.ts";
export { passClientIp } from "./client-ip.ts";
// Not loaded by this entry (a worker serving no document carries no generator): call it to document a worker made alone.
export { loadOpenApiGenerators } from "../../core/http/openapi-document.ts";
export type { HostMiddleware } from "../../core/http/worker-app.ts";
export { createR2BlobStore, r2Backend, type R2BlobStoreOptions } from "./r2-store.ts";
export type { ArrayBlockOptions } from "../../core/storage/array-blocks.ts";
export { type CloudflareRateLimiterOptions, createCloudflareRateLimiter, type RateLimitBindingLike } from "./rate-limiter.ts";
export { createKvNamespaceStore } from "./kv-store.ts";
export type { KVNamespaceLike, R2BucketLike, R2ObjectBodyLike, R2ObjectLike } from "./bindings.ts";
