/**
 * @module
 * Cloudflare module workers: the whole service, or one worker deployed alone, on the
 * bindings `USER_DB` (KV), `STRIAE_DATA`, `STRIAE_AUDIT`, `STRIAE_IMAGES` and optionally `STRIAE_OUTBOX` (R2), with
 * secrets and settings from `env` (the image worker alone binds no bucket with
 * `IMAGE_HOST=cloudflare`). The app is built once per isolate and `env`.
 */
import { parseConfig, type ServiceConfig } from "../../core/config/mod.ts";
import { systemClock } from "../../core/ports.ts";
import { createService, hostForDirectUse, imageHostOf, type ServicePorts } from "../../core/service/service.ts";
import { createExchangeWorker } from "../../core/workers/exchange.ts";
import { createImageWorker } from "../../core/workers/image.ts";
import { createStandaloneUserWorker } from "../../core/service/standalone-user.ts";
import type { BlobStore } from "../../core/ports.ts";
import { errorBody } from "../../core/http/errors.ts";
import { settleRequestBody } from "../../core/http/limits.ts";
import type { WorkerApp } from "../../core/http/worker-app.ts";
import { createDataWorker } from "../../core/workers/data.ts";
import { createAuditWorker } from "../../core/workers/audit.ts";
import { createReviewWorker } from "../../core/workers/review.ts";
import { createKeyHistories } from "../../core/history/mod.ts";
import { createKeysWorker } from "../../core/workers/keys.ts";
import { createCaptchaWorker } from "../../core/workers/captcha.ts";
import { createSiteverifyVerifier } from "../../core/captcha/siteverify.ts";
import { createPdfWorker } from "../../core/workers/pdf.ts";
import type { KVNamespaceLike, R2BucketLike } from "./bindings.ts";
import { createR2BlobStore } from "./r2-store.ts";
import { createKvNamespaceStore } from "./kv-store.ts";
import { createCloudflareRateLimiter, type RateLimitBindingLike } from "./rate-limiter.ts";
import { type AccessControl, accessControl } from "../../core/http/access.ts";
import { checkBlobCanary, checkKvCanary, encryptedBlobStore, encryptedKvStore, type Keyring } from "../../core/encryption/mod.ts";
import { keyringOf } from "../../core/service/encrypted-ports.ts";
import type { KvStore } from "../../core/ports.ts";
import type { RateLimiter } from "../../core/rate-limit/limiter.ts";
import { checkAuditKeys } from "../../core/audit/signing-keys.ts";

/** The bindings and variables a deployment provides (see `examples/cloudflare`). */
export interface CloudflareEnv {
  /** The KV namespace of user records, keyed by user id. */
  USER_DB?: KVNamespaceLike;
  /** The R2 bucket of cases and annotations (`u1/C-1/data.json`). */
  STRIAE_DATA?: R2BucketLike;
  /** The R2 bucket of audit days (`audit-trails/{userId}-{YYYY-MM-DD}.json`). */
  STRIAE_AUDIT?: R2BucketLike;
  /** The R2 bucket of hosted images. */
  STRIAE_IMAGES?: R2BucketLike;
  /** The R2 bucket of the mail outbox (`MAIL_TRANSPORT=outbox`: one `.eml` object per message). */
  STRIAE_OUTBOX?: R2BucketLike;
  /**
   * A Workers rate-limiting binding shared by every isolate; its wrangler `limit` and `period`
   * apply to every route. Without it, `RATE_LIMITS` is counted per isolate.
   */
  RATE_LIMITER?: RateLimitBindingLike;
  /** Secrets and settings (docs/configuration.md), e.g. `R2_KEY_SECRET`. */
  [variable: string]: unknown;
}

/** The part of the Workers runtime's `ExecutionContext` this adapter uses. */
export interface ExecutionContextLike {
  /** Keeps the request's work running to its end after the client has gone. */
  waitUntil(promise: Promise<unknown>): void;
}

/** A module worker's default export. */
export interface ModuleWorker {
  /** Answers one request with the bindings of the deployment (`ctx`, when given, keeps a write going after a disconnect). */
  fetch(request: Request, env: CloudflareEnv, ctx?: ExecutionContextLike): Promise<Response>;
}

function binding<T>(env: CloudflareEnv, name: string): T {
  const value = env[name];
  if (value === undefined || value === null || typeof value !== "object") {
    throw new MissingBindingError(name);
  }
  return value as T;
}

/** A binding the worker needs is not configured in its wrangler file. */
export class MissingBindingError extends Error {
  /** Names the missing binding, e.g. `STRIAE_DATA`. */
  constructor(readonly binding: string) {
    super(`The binding ${binding} is not configured for this worker`);
    this.name = "MissingBindingError";
  }
}

/** One keyring per parsed configuration, so each key-encryption key is imported once per isolate. */
const keyrings = new WeakMap<ServiceConfig, Keyring | undefined>();
function keyringFor(config: ServiceConfig): Keyring | undefined {
  if (!keyrings.has(config)) keyrings.set(config, keyringOf(config));
  return keyrings.get(config);
}

/** A bound bucket, encrypted at rest when `DATA_ENCRYPTION_KEYS` is set (the audit bucket item by item). */
function bucket(env: CloudflareEnv, name: string, config: ServiceConfig): BlobStore {
  // Audit days in blocks: an append moves one block, not the day.
  // Record histories' arrays (data bucket) in blocks too: appending a version moves one block.
  const store = createR2BlobStore(binding<R2BucketLike>(env, name), name === "STRIAE_AUDIT" ? { arrayBlocks: {} } : name === "STRIAE_DATA" ? { historyBlocks: {} } : {});
  const keyring = keyringFor(config);
  return keyring === undefined ? store : encryptedBlobStore(store, keyring, { appendLog: name === "STRIAE_AUDIT", store: name });
}

/** The `USER_DB` namespace, encrypted at rest when `DATA_ENCRYPTION_KEYS` is set. */
function userDb(env: CloudflareEnv, config: ServiceConfig): KvStore {
  const store = createKvNamespaceStore(binding<KVNamespaceLike>(env, "USER_DB"));
  const keyring = keyringFor(config);
  return keyring === undefined ? store : encryptedKvStore(store, keyring, { store: "USER_DB" });
}

/** The outbox bucket when one is bound (read by whoever relays the mail, so never encrypted). */
function optionalOutbox(env: CloudflareEnv): { outbox?: BlobStore } {
  return env.STRIAE_OUTBOX === undefined ? {} : { outbox: createR2BlobStore(binding<R2BucketLike>(env, "STRIAE_OUTBOX")) };
}

const BUCKETS = ["STRIAE_DATA", "STRIAE_AUDIT", "STRIAE_IMAGES"] as const;

/**
 * The canary of every bound bucket and of `USER_DB` (docs/storage.md#encryption-at-rest),
 * checked before an isolate serves its first request: a missing or wrong key is one clear
 * answer naming the store and the reason, never an object opened as garbage.
 */
async function checkBoundCanaries(env: CloudflareEnv, config: ServiceConfig): Promise<void> {
  const keyring = keyringFor(config);
  for (const name of BUCKETS) {
    if (typeof env[name] === "object" && env[name] !== null) await checkBlobCanary(createR2BlobStore(binding<R2BucketLike>(env, name)), keyring, name);
  }
  if (typeof env.USER_DB === "object" && env.USER_DB !== null) await checkKvCanary(createKvNamespaceStore(binding<KVNamespaceLike>(env, "USER_DB")), keyring, "USER_DB");
}

/** The bound rate limiter, when a `RATE_LIMITER` binding is configured. */
function optionalRateLimiter(env: CloudflareEnv): { rateLimiter?: RateLimiter } {
  const bound = env.RATE_LIMITER;
  return bound === undefined || typeof bound.limit !== "function" ? {} : { rateLimiter: createCloudflareRateLimiter(bound) };
}

/**
 * Access control of a worker deployed alone: audit entries into `STRIAE_AUDIT`. A worker that
 * acts for known users (identity tokens or `ADMIN_AUTH` configured) must be able to write
 * them, so it refuses to start without the bucket; the PDF and captcha workers need none.
 */
function accessOnBindings(env: CloudflareEnv, config: ServiceConfig, auditRequired = true): AccessControl {
  if (auditRequired && env.STRIAE_AUDIT === undefined && (config.identity !== undefined || config.adminAuth !== undefined)) {
    throw new MissingBindingError("STRIAE_AUDIT");
  }
  return accessControl(config, {
    clock: systemClock,
    ...(env.STRIAE_AUDIT === undefined ? {} : { audit: bucket(env, "STRIAE_AUDIT", config) }),
    limiter: optionalRateLimiter(env).rateLimiter,
  });
}

/** The ports of the whole service from the bindings (encrypted at rest when `config` sets `DATA_ENCRYPTION_KEYS`). */
export function cloudflarePorts(env: CloudflareEnv, config?: ServiceConfig): ServicePorts {
  const parsed = config ?? parseConfig(env);
  return {
    data: bucket(env, "STRIAE_DATA", parsed),
    audit: bucket(env, "STRIAE_AUDIT", parsed),
    images: bucket(env, "STRIAE_IMAGES", parsed),
    ...optionalOutbox(env),
    ...optionalRateLimiter(env),
    users: userDb(env, parsed),
    clock: systemClock,
  };
}

/** Builds the app a module worker serves from its bindings and configuration. */
export type BuildApp = (env: CloudflareEnv, config: ServiceConfig) => WorkerApp;

/** All seven workers under their mounts. */
export const serviceOnBindings: BuildApp = (env: CloudflareEnv, config: ServiceConfig): WorkerApp =>
  // Workers Logs (and `wrangler tail`) keep what console.log writes: the request log goes there.
  createService({ ...cloudflarePorts(env, config), operator: { log: (line) => console.log(line), defaultLogFormat: "json" } }, config);

/** The data worker (and its audit endpoints) alone. */
export const dataWorkerOnBindings: BuildApp = (env: CloudflareEnv, config: ServiceConfig): WorkerApp =>
  createDataWorker({
    blobs: bucket(env, "STRIAE_DATA", config),
    audit: bucket(env, "STRIAE_AUDIT", config),
    clock: systemClock,
    config,
    // With USER_DB bound, case documents are held to the owner's maxFilesPerCase.
    ...(env.USER_DB === undefined ? {} : { users: userDb(env, config) }),
    access: accessOnBindings(env, config),
  });

/** The audit worker alone. */
export const auditWorkerOnBindings: BuildApp = (env: CloudflareEnv, config: ServiceConfig): WorkerApp =>
  createAuditWorker({ audit: bucket(env, "STRIAE_AUDIT", config), clock: systemClock, config, access: accessOnBindings(env, config) });

/**
 * The review worker alone: reviews in `STRIAE_AUDIT` (beside the trails), the owners' cases in
 * `STRIAE_DATA`, lab and roles of records in `USER_DB`; no image URLs.
 */
export const reviewWorkerOnBindings: BuildApp = (env: CloudflareEnv, config: ServiceConfig): WorkerApp =>
  createReviewWorker({
    data: bucket(env, "STRIAE_DATA", config),
    histories: createKeyHistories(bucket(env, "STRIAE_DATA", config), { clock: systemClock }),
    audit: bucket(env, "STRIAE_AUDIT", config),
    users: userDb(env, config),
    clock: systemClock,
    config,
    access: accessOnBindings(env, config),
  });

/** The keys worker alone. */
export const keysWorkerOnBindings: BuildApp = (env: CloudflareEnv, config: ServiceConfig): WorkerApp =>
  createKeysWorker({ config, access: accessOnBindings(env, config) });

/** The captcha worker alone. */
export const captchaWorkerOnBindings: BuildApp = (env: CloudflareEnv, config: ServiceConfig): WorkerApp =>
  createCaptchaWorker({
    access: accessOnBindings(env, config, false),
    verifier: createSiteverifyVerifier({ url: config.captchaVerifyUrl, secret: config.captchaSecret, timeoutMs: config.captchaTimeoutMs }),
    config,
  });

/** The PDF worker alone: no bindings; images from `PDF_IMAGE_HOSTS` or `data:` URLs. */
export const pdfWorkerOnBindings: BuildApp = (env: CloudflareEnv, config: ServiceConfig): WorkerApp =>
  createPdfWorker({ config, access: accessOnBindings(env, config, false) });

/** The image worker alone: Cloudflare Images with `IMAGE_HOST=cloudflare`, else the local host over `STRIAE_IMAGES`. */
export const imageWorkerOnBindings: BuildApp = (env: CloudflareEnv, config: ServiceConfig): WorkerApp =>
  createImageWorker({ host: imageHostOf(config, systemClock, () => bucket(env, "STRIAE_IMAGES", config)), config, access: accessOnBindings(env, config) });

/**
 * The exchange worker alone: cases in `STRIAE_DATA`, records in `USER_DB`, entries in
 * `STRIAE_AUDIT`, images in `STRIAE_IMAGES` (with `IMAGE_HOST=cloudflare`, Cloudflare Images,
 * and no image bucket: arriving packages are then kept in `STRIAE_DATA` while they import).
 */
export const exchangeWorkerOnBindings: BuildApp = (env: CloudflareEnv, config: ServiceConfig): WorkerApp => {
  const data = bucket(env, "STRIAE_DATA", config);
  const images = config.imageHost === "cloudflare" && env.STRIAE_IMAGES === undefined ? data : bucket(env, "STRIAE_IMAGES", config);
  return createExchangeWorker({
    data,
    users: userDb(env, config),
    audit: bucket(env, "STRIAE_AUDIT", config),
    images,
    imageHost: hostForDirectUse(imageHostOf(config, systemClock, () => images), config),
    clock: systemClock,
    config,
    access: accessOnBindings(env, config),
  });
};

/**
 * The user worker alone: records in `USER_DB`; cases and images through the data and image
 * workers at `DATA_WORKER_URL` and `IMAGE_WORKER_URL` (docs/api.md); mail over `MAIL_TRANSPORT=http`
 * or into a bound `STRIAE_OUTBOX`.
 */
export const userWorkerOnBindings: BuildApp = (env: CloudflareEnv, config: ServiceConfig): WorkerApp =>
  createStandaloneUserWorker({
    users: userDb(env, config),
    clock: systemClock,
    config,
    ...optionalOutbox(env),
    access: accessOnBindings(env, config),
  });

/**
 * workerd resets a connection whose request body was left unread and cannot announce
 * `Connection: close`, so a refused body is read to the end, up to the largest body any
 * Cloudflare plan admits (500 MB); reading is waiting on I/O, not CPU time. A client whose
 * body stalls for 3 s (as long as Node's server waits) gets its answer then, not after a minute.
 */
const REFUSED_BODY_READ = { maxBytes: 512 * 1024 * 1024, maxMs: 60_000, maxIdleMs: 3_000 };

const noop = (): void => {};

/**
 * Creates a module worker serving the app `build` makes from the request's bindings.
 * Pass one of the `...OnBindings` builders; a bundle holds only the workers it names.
 */
export function createCloudflareWorker(build: BuildApp): ModuleWorker {
  const apps = new WeakMap<CloudflareEnv, Promise<WorkerApp>>();
  const appFor = (env: CloudflareEnv): Promise<WorkerApp> => {
    let app = apps.get(env);
    if (app === undefined) {
      app = (async () => {
        const config = parseConfig(env);
        await checkAuditKeys(config);
        const built = build(env, config);
        await checkBoundCanaries(env, config);
        return built;
      })();
      apps.set(env, app);
      // A failed start is tried again on the next request (a binding may answer by then).
      app.catch(() => apps.delete(env));
    }
    return app;
  };
  return {
    async fetch(request, env, ctx) {
      let app: WorkerApp;
      try {
        app = await appFor(env);
      } catch (err) {
        // A deployment mistake: say which binding, variable or key, nothing else.
        const message = err instanceof Error ? err.message : "Worker configuration failed";
        return Response.json(errorBody(500, message), { status: 500 });
      }
      // Cloudflare sets CF-Connecting-IP itself; a client cannot forge it.
      const answered = Promise.resolve(app.fetch(request, { clientIp: request.headers.get("CF-Connecting-IP") ?? undefined }));
      // workerd cancels a request whose client resets the connection, wherever it is waiting: a
      // write holding a user's lock would never release it. Under waitUntil the work runs to its end.
      ctx?.waitUntil(answered.then(noop, noop));
      const response = await answered;
      return settleRequestBody(request, response, { bound: REFUSED_BODY_READ });
    },
  };
}
