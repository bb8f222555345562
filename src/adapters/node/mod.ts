/**
 * @module
 * The Node adapter: `serve` on node:http, with the server layer Node shares with Bun and Deno
 * (start-up, the commands, `.env`, secrets, the file stores, SMTP).
 *
 * @example
 * ```ts
 * import { startServer } from "@forensic-annotation/service/node";
 * const server = await startServer({ port: 8787, host: "127.0.0.1", dataDir: "./data", env: process.env });
 * ```
 */
export { nodeListen, startServer } from "./serve.ts";
export { passClientIp } from "./client-ip.ts";
export type { HostMiddleware } from "../../core/http/worker-app.ts";
export {
  type ConnectionLimits,
  type Listen,
  type Listening,
  type RunningServer,
  type RuntimeStorage,
  type ServeOptions,
  startService,
  type StoragePorts,
} from "../server/start.ts";
export { type ExchangeCommandIo, type ExchangeCommandOptions, runExchangeCommand } from "../server/exchange-command.ts";
export { main, parseServeFlags, runServeCommand, type ServeFlags } from "../server/command.ts";
export { readEnvironment } from "../server/environment.ts";
export { createFileBlobStore, createFilePorts, type FileBlobStoreOptions } from "../server/files/file-ports.ts";
export { atomicFileDriver, type AtomicFileDriverOptions, type FileDriver, writeFileAtomic } from "../server/files/file-driver.ts";
export { createFileJsonArrayAppend } from "../server/files/file-append.ts";
export { ensureSecrets, type SecretsResult } from "../server/secrets.ts";
export { createSmtpMailer, type SmtpMailerOptions } from "../server/smtp-mailer.ts";
