/**
 * @module
 * `createService`: the workers mounted on one app, as `serve` runs them (docs/storage.md), with `/health` and `/openapi.json` registered first.
 */
import * as z from "zod";
import { createRoute } from "../http/openapi-app.ts";
import { OPENAPI_TAGS, tagged } from "../http/openapi-tags.ts";
import { loadOpenApiGenerators } from "../http/openapi-document.ts";
import type { BlobStore, CaptchaVerifier, Clock, ImageHost, ImageHostFactory, KvStore, Mailer } from "../ports.ts";
import type { ImagesConfig, ServiceConfig } from "../config/mod.ts";
import { answerJsonText, createWorkerApp, methodNotAllowed, mountOf, mountWorker, type WorkerApp } from "../http/worker-app.ts";
import { createDataWorker } from "../workers/data.ts";
import { createKeyHistories } from "../history/mod.ts";
import { createAuditWorker } from "../workers/audit.ts";
import { createKeysWorker } from "../workers/keys.ts";
import { createCaptchaWorker } from "../workers/captcha.ts";
import { createSiteverifyVerifier } from "../captcha/siteverify.ts";
import { createImageWorker } from "../workers/image.ts";
import { createLocalImageHost } from "../images/local-host.ts";
import { createCloudflareImageHost } from "../images/cloudflare-host.ts";
import { createUserWorker } from "../workers/user.ts";
import { createPdfWorker } from "../workers/pdf.ts";
import { createExchangeWorker } from "../workers/exchange.ts";
import { createReviewWorker } from "../workers/review.ts";
import { ownDeliveryReader } from "../images/own-delivery.ts";
import { portsCaseStore } from "../cases/ports-case-store.ts";
import { mailerOf } from "../mail/transport.ts";
import { accessControl } from "../http/access.ts";
import { credentialsIntroduction, OPEN } from "../http/credentials-doc.ts";
import { registerDocsPage } from "../http/docs-page.ts";
import type { IdentityVerifier } from "../identity/identity-token.ts";
import type { RateLimiter } from "../rate-limit/limiter.ts";
import { createOperations, type RouteDeclaration } from "../http/operations.ts";
import { countedStore, storeCounters } from "./counted-stores.ts";
import { serviceReadiness } from "./readiness.ts";
import { registerOperationsRoutes } from "./operations-routes.ts";
import { legalHoldStore } from "../users/legal-holds.ts";
import { heldImageFinder } from "../users/held-images.ts";
import type { BackupPorts } from "../workers/backup-routes.ts";


/** The stores and services behind the workers. */
export interface ServicePorts {
  /** Cases and annotations (`STRIAE_DATA`). */
  data: BlobStore;
  /** Audit days (`STRIAE_AUDIT`). */
  audit: BlobStore;
  /** User records (`USER_DB`). */
  users: KvStore;
  /** Hosted images. */
  images: BlobStore;
  /** The time audit entries and audit days are dated by. */
  clock: Clock;
  /** Defaults to siteverify at `CAPTCHA_VERIFY_URL`. */
  captcha?: CaptchaVerifier;
  /** The mail outbox (`DATA/outbox/` under `serve`), for `MAIL_TRANSPORT=outbox`. */
  outbox?: BlobStore;
  /** Defaults to the transport `MAIL_TRANSPORT` names (SMTP is passed in by the Node and Bun adapters). */
  mailer?: Mailer;
  /** Defaults to the host `IMAGE_HOST` names: the local host over `images`, or Cloudflare Images. */
  imageHost?: ImageHost;
  /** Counts requests for the rate limits; defaults to memory (one process). */
  rateLimiter?: RateLimiter;
  /**
   * Verifies identity tokens instead of the JWKS `AUTH_JWKS_URL` names; internal.
   *
   * @ignore
   */
  identity?: IdentityVerifier;
  /** The fetch used for the identity provider's key set. */
  fetch?: typeof fetch;
  /**
   * SHA-256 of audit entry hashes, synchronous: the server adapters pass their runtime's native one; default
   * the core's JavaScript one (workerd, browsers). Both give the same hashes.
   */
  auditHash?: (text: string) => string;
  /**
   * SHA-256 of bytes as lower-case hex, synchronous (a version's digest in record history): the
   * server adapters pass their runtime's native one; default web crypto's. Both give the same digests.
   */
  digest?: (bytes: Uint8Array) => string;
  /**
   * Every store as held and as read, for the data worker's `GET /backup` and `POST /restore`
   * (docs/operations.md#backups-through-a-running-service); without it those routes are not there.
   * `serve` passes it; internal.
   *
   * @ignore
   */
  backup?: BackupPorts;
  /** What the runtime tells the operator through the service (docs/operations.md); every field optional. */
  operator?: {
    /** Writes one request-log line (`serve`: standard output). Without it nothing is logged. */
    log?: (line: string) => void;
    /** The log's format when `LOG_FORMAT` is unset (`serve`: `text` on a terminal, else `json`). */
    defaultLogFormat?: "json" | "text";
    /** The process's resident memory in bytes, for `/metrics`. */
    residentMemoryBytes?: () => number;
    /** Open client connections, for `/metrics`. */
    openConnections?: () => number;
    /** Checks `/ready` runs besides the stores and keys (the file store's lock). */
    readiness?: Record<string, () => Promise<void>>;
  };
}

/** {@link ServicePorts.operator}: logs, process metrics and extra readiness checks of the runtime. */
export type OperatorPorts = NonNullable<ServicePorts["operator"]>;

/** The mount point of each worker under `serve`. */
export const WORKER_MOUNTS = {
  user: "/user",
  data: "/data",
  keys: "/keys",
  captcha: "/captcha",
  audit: "/audit",
  image: "/image",
  pdf: "/pdf",
  exchange: "/exchange",
  review: "/review",
} as const;

/** The name of a mounted worker. */
export type WorkerName = keyof typeof WORKER_MOUNTS;

const HealthSchema = z.object({ ok: z.literal(true) });
const HEALTHY = JSON.stringify({ ok: true });

const healthRoute = createRoute({
  tags: tagged("service"),
  method: "get",
  path: "/health",
  summary: "Liveness, without authentication",
  operationId: "health",
  security: OPEN,
  responses: { 200: { description: "Up", content: { "application/json": { schema: HealthSchema } } } },
});

/**
 * The document's own fields; `servers` is where the service is mounted, so that a client
 * generated from a service mounted under a prefix calls the prefixed paths.
 */
function openApiObject(mount: string) {
  return {
    openapi: "3.1.0",
    info: {
      title: "Forensic Annotation Service",
      version: "0.1.0",
      description: credentialsIntroduction(),
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: mount === "" ? "/" : mount, description: "This service, where it is mounted" }],
    tags: [...OPENAPI_TAGS],
  };
}

/** Mounts every worker on one app with `/health` and `/openapi.json`. */
export function createService(given: ServicePorts, config: ServiceConfig): WorkerApp {
  // Here, not at import: a Cloudflare worker bundled alone imports this module but serves no document.
  loadOpenApiGenerators();
  const operator = given.operator ?? {};
  const level = operator.log === undefined ? "off" : config.logLevel;
  const counting = config.metricsToken !== undefined;
  const operations = createOperations({
    level,
    format: config.logFormat ?? operator.defaultLogFormat ?? "json",
    write: operator.log ?? (() => {}),
    now: () => given.clock.now(),
    counting,
  });
  const ports = counting ? countedPorts(given, storeCounters(operations.metrics)) : given;
  // With neither a log nor metrics, the frame observes nothing: no route matching on the hot path.
  const observed = level !== "off" || counting;
  const app = createWorkerApp({ allowedOrigin: config.allowedOrigin, ...(observed ? { observer: operations } : {}) });
  app.openapi(healthRoute, (c) => answerJsonText<{ ok: true }, 200>(c, HEALTHY, 200));
  registerOperationsRoutes(app, {
    readiness: { ...serviceReadiness({ data: ports.data, audit: ports.audit, users: ports.users, images: ports.images, outbox: ports.outbox }, config), ...operator.readiness },
    metrics: operations.metrics,
    metricsToken: config.metricsToken,
  });
  const { residentMemoryBytes, openConnections } = operator;
  if (residentMemoryBytes !== undefined) operations.metrics.gauge("process_resident_memory_bytes", "Resident memory of the process, in bytes.", residentMemoryBytes);
  if (openConnections !== undefined) operations.metrics.gauge("http_open_connections", "Client connections open now (requests in flight where the server counts no connections: docs/operations.md).", openConnections);
  app.doc31("/openapi.json", (c) => openApiObject(mountOf(c)));
  if (config.apiDocs === "on") registerDocsPage(app);
  // Known paths that only read: another method is a 405 with Allow (docs/api.md), not the router's 404.
  for (const path of ["/health", "/openapi.json"]) app.all(path, methodNotAllowed(["GET"], false));

  const captcha = ports.captcha ?? createSiteverifyVerifier({
    url: config.captchaVerifyUrl,
    secret: config.captchaSecret,
    timeoutMs: config.captchaTimeoutMs,
  });
  // One access control for all workers: one key-set cache, one rate limiter, one audit log.
  const access = accessControl(config, {
    audit: ports.audit,
    clock: ports.clock,
    limiter: ports.rateLimiter,
    identity: ports.identity,
    fetch: ports.fetch,
    auditHash: ports.auditHash,
  });
  // One set of histories for every worker that writes data keys, so their writes of a key queue in one process.
  const histories = createKeyHistories(ports.data, { clock: ports.clock, hash: ports.auditHash, digest: ports.digest });
  mountWorker(app, WORKER_MOUNTS.data, createDataWorker({ blobs: ports.data, audit: ports.audit, clock: ports.clock, config, users: ports.users, access, auditHash: ports.auditHash, histories, backup: ports.backup }));
  mountWorker(app, WORKER_MOUNTS.keys, createKeysWorker({ config, access }));
  mountWorker(app, WORKER_MOUNTS.captcha, createCaptchaWorker({ verifier: captcha, config, access }));
  mountWorker(app, WORKER_MOUNTS.audit, createAuditWorker({ audit: ports.audit, clock: ports.clock, config, access, auditHash: ports.auditHash }));
  const images = ports.imageHost ?? imageHostOf(config, ports.clock, () => ports.images);
  // Mounted together, the image worker consults the legal holds before it deletes (docs/api.md#legal-holds).
  const imageHost = hostForDirectUse(images, config);
  const cases = portsCaseStore({ data: ports.data, images: ports.images, imageHost, histories: config.dataHistory === "off" ? undefined : histories }, { onlyOwnedImages: config.identity !== undefined });
  const heldImage = heldImageFinder(legalHoldStore(ports.users), cases);
  mountWorker(app, WORKER_MOUNTS.image, createImageWorker({ host: images, config, access, heldImage }));
  const ownImages = typeof images === "function" ? ownDeliveryReader(images, config.publicUrl) : undefined;
  mountWorker(app, WORKER_MOUNTS.pdf, createPdfWorker({ config, clock: ports.clock, access, ...(ownImages ? { ownImages } : {}) }));
  // Mounted together, the user worker reaches cases and images directly.
  mountWorker(app, WORKER_MOUNTS.user, createUserWorker({
    users: ports.users,
    resources: cases,
    mailer: mailerOf(config, ports),
    clock: ports.clock,
    config,
    access,
  }));
  mountWorker(app, WORKER_MOUNTS.exchange, createExchangeWorker({
    data: ports.data,
    users: ports.users,
    audit: ports.audit,
    images: ports.images,
    imageHost,
    clock: ports.clock,
    config,
    access,
    auditHash: ports.auditHash,
    histories,
  }));
  mountWorker(app, WORKER_MOUNTS.review, createReviewWorker({
    data: ports.data,
    audit: ports.audit,
    users: ports.users,
    clock: ports.clock,
    config,
    access,
    histories,
    signImage: (origin, imageId, owner) => signedImageUrl(images, config, origin, imageId, owner),
  }));
  operations.learnRoutes(declaredRoutes(app), [...Object.values(WORKER_MOUNTS), "/docs"]);
  return app;
}

/** The routes the app documents, and the service's own that it does not, for the log's route patterns. */
function declaredRoutes(app: WorkerApp): RouteDeclaration[] {
  const routes: RouteDeclaration[] = [];
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type === "route") routes.push({ method: definition.route.method, path: definition.route.path });
  }
  for (const path of ["/health", "/ready", "/metrics", "/openapi.json", "/docs"]) routes.push({ method: "*", path });
  return routes;
}

/** The ports with every store's operations counted for `/metrics`. */
function countedPorts(ports: ServicePorts, counters: ReturnType<typeof storeCounters>): ServicePorts {
  return {
    ...ports,
    data: countedStore(ports.data, "data", counters),
    audit: countedStore(ports.audit, "audit", counters),
    users: countedStore(ports.users, "users", counters),
    images: countedStore(ports.images, "images", counters),
    ...(ports.outbox !== undefined ? { outbox: countedStore(ports.outbox, "outbox", counters) } : {}),
  };
}

/**
 * A signed URL of a hosted image, for a client that reaches the service at `origin` (a review's
 * files), when the host records `owner` as its uploader; undefined for anyone else's image, an
 * image without a recorded uploader (the admin's, as on the image worker) or a host that cannot tell.
 */
async function signedImageUrl(images: ImageHost | ImageHostFactory, config: Pick<ServiceConfig, "accountHash" | "imageDeliveryHost">, origin: string, imageId: string, owner: string): Promise<string | undefined> {
  const base = `${origin}${WORKER_MOUNTS.image}/delivery`;
  const host = typeof images === "function" ? images(base) : images;
  if (host.ownerOf === undefined || (await host.ownerOf(imageId)) !== owner) return undefined;
  if (typeof images !== "function") return await host.signedUrl(`https://${config.imageDeliveryHost}/${config.accountHash ?? ""}/${encodeURIComponent(imageId)}/public`);
  return await host.signedUrl(`${base}/${encodeURIComponent(imageId)}/public`);
}

/**
 * The image host for code that reaches images without a request (account deletion in the
 * service, the export/import command): a local host delivers under `PUBLIC_URL` (or
 * localhost) and the image worker's mount.
 */
export function hostForDirectUse(images: ImageHost | ImageHostFactory, config: Pick<ServiceConfig, "publicUrl">): ImageHost {
  return typeof images === "function" ? images(`${config.publicUrl ?? "http://localhost"}${WORKER_MOUNTS.image}/delivery`) : images;
}

/**
 * The image host `IMAGE_HOST` names: Cloudflare Images, or the local host over the image
 * store (asked for only then, so a Cloudflare Images deployment needs no bucket).
 */
export function imageHostOf(config: ImagesConfig & Partial<Pick<ServiceConfig, "dataHistory">>, clock: Clock, images: () => BlobStore): ImageHost | ImageHostFactory {
  if (config.imageHost === "cloudflare") {
    return createCloudflareImageHost({
      apiBase: config.cfImagesApiBase,
      accountId: config.cfAccountId,
      apiToken: config.cfImagesToken,
      accountHash: config.accountHash,
      signingKey: config.hmacKey,
      deliveryHost: config.imageDeliveryHost,
      clock,
      urlLifetimeSeconds: config.imageUrlTtlSeconds,
      timeoutMs: config.imageUpstreamTimeoutMs,
    });
  }
  const store = images();
  return (deliveryBase) =>
    createLocalImageHost({
      store,
      signingKey: config.hmacKey,
      deliveryBase,
      clock,
      urlLifetimeSeconds: config.imageUrlTtlSeconds,
      cloudflareForm: { accountHash: config.accountHash, deliveryHost: config.imageDeliveryHost },
      // Record history keeps a deleted image as its deletion mark (docs/storage.md#record-history).
      keepDeleted: config.dataHistory !== "off",
    });
}
