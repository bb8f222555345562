/**
 * @module
 * `createService`: the workers mounted on one app, as `serve` runs them (CONTRACT "One
 * process, seven workers"), with `/health` and `/openapi.json` registered first.
 */
import * as z from "zod";
import type { BlobStore, CaptchaVerifier, Clock, KvStore } from "./ports.ts";
import type { ServiceConfig } from "./config.ts";
import { createWorkerApp, type WorkerApp } from "./http/worker-app.ts";
import { createDataWorker } from "./workers/data.ts";
import { createAuditWorker } from "./workers/audit.ts";
import { createKeysWorker } from "./workers/keys.ts";
import { createCaptchaWorker } from "./workers/captcha.ts";
import { createSiteverifyVerifier } from "./captcha/siteverify.ts";

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
  clock: Clock;
  /** Defaults to siteverify at `CAPTCHA_VERIFY_URL`. */
  captcha?: CaptchaVerifier;
}

/** The mount point of each worker under `serve`. */
export const WORKER_MOUNTS = {
  data: "/data",
  keys: "/keys",
  captcha: "/captcha",
  audit: "/audit",
} as const;

/** The name of a mounted worker. */
export type WorkerName = keyof typeof WORKER_MOUNTS;

const HealthSchema = z.object({ ok: z.literal(true) });

/** Mounts every worker on one app with `/health` and `/openapi.json`. */
export function createService(ports: ServicePorts, config: ServiceConfig): WorkerApp {
  const app = createWorkerApp({ allowedOrigin: config.allowedOrigin });
  app.openAPIRegistry.registerPath({
    method: "get",
    path: "/health",
    summary: "Liveness, without authentication",
    responses: { 200: { description: "Up", content: { "application/json": { schema: HealthSchema } } } },
  });
  app.get("/health", (c) => c.json({ ok: true as const }, 200));
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Forensic Annotation Service",
      version: "0.1.0",
      description: "The workers of the forensic image-annotation back end (worker-api.md).",
    },
  });

  const captcha = ports.captcha ?? createSiteverifyVerifier({
    url: config.captchaVerifyUrl,
    secret: config.captchaSecret,
    timeoutMs: config.captchaTimeoutMs,
  });
  app.route(WORKER_MOUNTS.data, createDataWorker({ blobs: ports.data, audit: ports.audit, clock: ports.clock, config }));
  app.route(WORKER_MOUNTS.keys, createKeysWorker({ config }));
  app.route(WORKER_MOUNTS.captcha, createCaptchaWorker({ verifier: captcha, config }));
  app.route(WORKER_MOUNTS.audit, createAuditWorker({ audit: ports.audit, clock: ports.clock, config }));
  return app;
}
