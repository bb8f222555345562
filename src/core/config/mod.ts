/**
 * @module
 * The service's configuration: {@link parseConfig} reads the environment into a
 * {@link ServiceConfig}, one zod section per concern; each worker takes the slice it reads.
 */
export { ConfigError } from "./config-error.ts";
export { CONFIG_SECTIONS, parseConfig, type ParsedSections, type ServiceConfig } from "./service-config.ts";
export { GENERATED_SECRETS, NEVER_EXPOSED, type WorkerKeysConfig } from "./worker-keys.ts";
export type { IdentityConfig, IdentitySectionConfig } from "./identity.ts";
export type { AccountsConfig } from "./accounts.ts";
export type { AuditConfig } from "./audit.ts";
export type { ApiDocsConfig } from "./api-docs.ts";
export type { BodyLimitsConfig } from "./body-limits.ts";
export type { CaptchaConfig } from "./captcha.ts";
export type { CorsConfig } from "./cors.ts";
export type { ExchangeConfig } from "./exchange.ts";
export type { ImagesConfig } from "./images.ts";
export type { MailConfig } from "./mail.ts";
export type { OperationsConfig } from "./operations.ts";
export type { PdfConfig } from "./pdf.ts";
export type { RateLimitsConfig } from "./rate-limits.ts";
export type { ServerLimitsConfig } from "./server-limits.ts";
export type { StorageConfig } from "./storage.ts";
export type { EncryptionConfig } from "./encryption.ts";
export type { ReviewConfig } from "./review.ts";
export { type VariableRow, variableRows, variableTable } from "./variable-table.ts";
