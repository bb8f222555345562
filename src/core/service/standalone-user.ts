/**
 * @module
 * The user worker deployed alone (docs/api.md#account-deletion): cases and images are reached through the data
 * and image workers at `DATA_WORKER_URL` and `IMAGE_WORKER_URL`, with this worker's own
 * credentials (`R2_KEY_SECRET`, `IMAGES_API_TOKEN`). The deletion code is the same.
 */
import type { BlobStore, Clock, KvStore, Mailer } from "../ports.ts";
import { ConfigError, type MailConfig, type ServiceConfig } from "../config/mod.ts";
import type { WorkerApp } from "../http/worker-app.ts";
import { createUserWorker, type UserWorkerDeps } from "../workers/user.ts";
import { mailerOf } from "../mail/transport.ts";
import { httpCaseStore } from "../cases/http-case-store.ts";
import type { AccessControl } from "../http/access.ts";
import { ADMIN_KEY_HEADER } from "../http/actor.ts";

/** What the user worker needs when it runs alone. */
export interface StandaloneUserWorkerDeps {
  /** The user store (`USER_DB`). */
  users: KvStore;
  /** Dates records and mails. */
  clock: Clock;
  /** URLs, credentials, mail settings. */
  config: UserWorkerDeps["config"] & MailConfig & Pick<ServiceConfig, "dataWorkerUrl" | "imageWorkerUrl" | "r2KeySecret" | "imagesApiToken">;
  /** The outbox store for `MAIL_TRANSPORT=outbox`. */
  outbox?: BlobStore;
  /** A ready mailer (SMTP under Node or Bun); wins over `MAIL_TRANSPORT`. */
  mailer?: Mailer;
  /** The fetch to call the other workers with (default: the global one). */
  fetch?: typeof fetch;
  /**
   * Identity, admin key, rate limits and service audit entries; default from `config`.
   * Shared by the workers `createService` mounts together; internal.
   *
   * @ignore
   */
  access?: AccessControl;
}

/**
 * Creates the user worker that calls the data and image workers over HTTP.
 *
 * @throws {ConfigError} when `DATA_WORKER_URL`, `IMAGE_WORKER_URL` or their credentials are missing.
 */
export function createStandaloneUserWorker(deps: StandaloneUserWorkerDeps): WorkerApp {
  const { config } = deps;
  const problems = [
    config.dataWorkerUrl === undefined ? "DATA_WORKER_URL: required by the user worker deployed alone" : "",
    config.imageWorkerUrl === undefined ? "IMAGE_WORKER_URL: required by the user worker deployed alone" : "",
    config.r2KeySecret === undefined ? "R2_KEY_SECRET: the user worker's key for the data worker" : "",
    config.imagesApiToken === undefined ? "IMAGES_API_TOKEN: the user worker's token for the image worker" : "",
    // With identity tokens on, the data and image workers also want an identity: the admin key's.
    config.identity !== undefined && config.adminAuth === undefined
      ? "ADMIN_AUTH: required by the user worker deployed alone when identity tokens are on (it deletes through the data and image workers)"
      : "",
  ].filter((problem) => problem !== "");
  if (problems.length > 0) throw new ConfigError(problems);
  const resources = httpCaseStore({
    dataWorkerUrl: config.dataWorkerUrl!,
    dataKey: config.r2KeySecret!,
    imageWorkerUrl: config.imageWorkerUrl!,
    imageToken: config.imagesApiToken!,
    timeoutMs: config.mailTimeoutMs,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(config.identity !== undefined ? { extraHeaders: { [ADMIN_KEY_HEADER]: config.adminAuth! }, onlyOwnedImages: true } : {}),
  });
  return createUserWorker({ users: deps.users, resources, mailer: mailerOf(config, deps), clock: deps.clock, config, ...(deps.access ? { access: deps.access } : {}) });
}
