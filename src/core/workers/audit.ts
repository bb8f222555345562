/**
 * @module
 * The audit worker (docs/api.md#audit): the audit endpoints on their own, with the data worker's
 * key (`R2_KEY_SECRET`) and the same audit store.
 */
import type { BlobStore, Clock } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { authKeyCheck } from "../http/auth.ts";
import { createWorkerApp } from "../http/worker-app.ts";
import type { WorkerApp } from "../http/worker-app.ts";
import { registerAuditRoutes } from "./audit-routes.ts";
import { routeFor } from "../rate-limit/rules.ts";
import { type AccessControl, accessControl, protect } from "../http/access.ts";

/** Ports and configuration of the audit worker. */
export interface AuditWorkerDeps {
  /** The audit store: one JSON array per user and audit day (`STRIAE_AUDIT`). */
  audit: BlobStore;
  /** Dates new entries and picks today's audit day (UTC) when no range is asked for. */
  clock: Clock;
  /** The service configuration (`R2_KEY_SECRET`, `ALLOWED_ORIGIN`, `MAX_AUDIT_ENTRY_BYTES`). */
  config: Pick<ServiceConfig, "allowedOrigin" | "r2KeySecret" | "maxAuditEntryBytes" | "maxAuditDayBytes" | "identity" | "adminAuth" | "rateLimits">;
  /**
   * Identity, admin key and rate limits; default from `config` over this audit store.
   * Shared by the workers `createService` mounts together; internal.
   *
   * @ignore
   */
  access?: AccessControl;
  /** SHA-256 of audit entry hashes (a runtime's native one); default the core's JavaScript one. */
  auditHash?: ((text: string) => string) | undefined;
}

/** The audit worker's app, with the types of its routes (for hono's `hc` client). */
export type AuditWorkerApp = ReturnType<typeof auditWorker>;

/** Creates the audit worker: `POST /audit/` and `GET /audit/`. */
export function createAuditWorker(deps: AuditWorkerDeps): WorkerApp {
  return auditWorker(deps);
}

/** The audit worker, its type inferred from its routes. */
function auditWorker(deps: AuditWorkerDeps) {
  const app = createWorkerApp({ allowedOrigin: deps.config.allowedOrigin, methods: ["GET", "POST"] });
  const access = deps.access ?? accessControl(deps.config, { audit: deps.audit, clock: deps.clock, auditHash: deps.auditHash });
  protect(app, access, {
    status: 403,
    route: (c) => routeFor(c.req.method, "audit.read", "audit.write"),
    credential: authKeyCheck({ keys: [deps.config.r2KeySecret], status: 403, variable: "R2_KEY_SECRET" }),
    targetOf: (c) => c.req.query("userId"),
  });
  return registerAuditRoutes(app, { ...deps, access });
}
