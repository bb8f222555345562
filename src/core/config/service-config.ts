/**
 * @module
 * `ServiceConfig`: parsed once, with zod, from an env-like record, one section per concern
 * (docs/configuration.md). Empty strings count as unset, so `FOO=` in a `.env` file unsets FOO.
 */
import * as z from "zod";
import { AccountsSection } from "./accounts.ts";
import { AuditSection } from "./audit.ts";
import { ApiDocsSection } from "./api-docs.ts";
import { BodyLimitsSection } from "./body-limits.ts";
import { CaptchaSection } from "./captcha.ts";
import { ConfigError } from "./config-error.ts";
import type { RateLimits } from "../rate-limit/rules.ts";
import { CorsSection } from "./cors.ts";
import { EncryptionSection } from "./encryption.ts";
import { ExchangeSection } from "./exchange.ts";
import { type IdentityConfig, IdentitySection } from "./identity.ts";
import { ImagesSection } from "./images.ts";
import { MailSection } from "./mail.ts";
import { OperationsSection } from "./operations.ts";
import { PdfSection } from "./pdf.ts";
import { RateLimitsSection } from "./rate-limits.ts";
import { ServerLimitsSection } from "./server-limits.ts";
import { StorageSection } from "./storage.ts";
import { WorkerKeysSection } from "./worker-keys.ts";
import { HistorySection } from "./history.ts";
import { ReviewSection } from "./review.ts";

/** Every section, in the order of the generated table; each reads the same variables. */
export const CONFIG_SECTIONS = {
  workerKeys: WorkerKeysSection,
  cors: CorsSection,
  identity: IdentitySection,
  rateLimits: RateLimitsSection,
  bodyLimits: BodyLimitsSection,
  serverLimits: ServerLimitsSection,
  accounts: AccountsSection,
  mail: MailSection,
  captcha: CaptchaSection,
  images: ImagesSection,
  pdf: PdfSection,
  storage: StorageSection,
  encryption: EncryptionSection,
  exchange: ExchangeSection,
  audit: AuditSection,
  apiDocs: ApiDocsSection,
  operations: OperationsSection,
  history: HistorySection,
  review: ReviewSection,
} as const;

const ServiceEnvSchema = z.object(CONFIG_SECTIONS);

/** What the sections' schemas parse, section by section; {@link ServiceConfig} must equal it (tests/core/config.test.ts). */
export type ParsedSections = z.output<typeof ServiceEnvSchema>;

/**
 * The parsed configuration every worker takes a slice of. Written out for the public API (JSR
 * documents it, never a type inferred from a schema); tests/core/config.test.ts checks that it
 * equals what the sections parse, field for field. What each variable means:
 * docs/configuration.md and its generated table.
 */
export interface ServiceConfig {
  /** `USER_DB_AUTH`: the `X-Custom-Auth-Key` of the user worker. */
  userDbAuth: string | undefined;
  /** `R2_KEY_SECRET`: the `X-Custom-Auth-Key` of the data worker and the audit endpoints. */
  r2KeySecret: string | undefined;
  /** `KEYS_AUTH`: the `X-Custom-Auth-Key` of the keys worker; never handed out by it. */
  keysAuth: string | undefined;
  /** `IMAGES_API_TOKEN`: the `Authorization: Bearer` token of the image worker. */
  imagesApiToken: string | undefined;
  /** `ADMIN_AUTH`: the admin key. */
  adminAuth: string | undefined;
  /** `KEYS_EXPOSED`: names the keys worker may return (never a secret that must stay inside). */
  keysExposed: readonly string[];
  /** `ALLOWED_ORIGIN`: the one site origin CORS allows. */
  allowedOrigin: string | undefined;
  /** Identity-token mode (`AUTH_*` or `FIREBASE_PROJECT_ID`): where tokens are verified; undefined in key-only mode. */
  identity: IdentityConfig | undefined;
  /** `RATE_LIMITS`: the limit of each route per client IP and per user, or "off". */
  rateLimits: RateLimits | "off";
  /** `MAX_JSON_BYTES`: the largest JSON document (case, annotations) the data worker stores. */
  maxJsonBytes: number;
  /** `MAX_AUDIT_ENTRY_BYTES`: the largest audit entry the audit endpoints accept. */
  maxAuditEntryBytes: number;
  /** `MAX_AUDIT_DAY_BYTES`: the most bytes one day of a user's audit trail takes (appends past it: 429). */
  maxAuditDayBytes: number;
  /** `MAX_CONNECTIONS`: the connections `serve` holds open at once (Node, Deno, Bun unless `BUN_SERVER=bun-serve`). */
  maxConnections: number;
  /** `MAX_CONNECTIONS_PER_CLIENT`: the connections `serve` holds open from one client address (Node, Deno, Bun unless `BUN_SERVER=bun-serve`). */
  maxConnectionsPerClient: number;
  /** `HEADERS_TIMEOUT_SECONDS`: how long a request's headers may take to arrive under `serve` (Node, Deno, Bun unless `BUN_SERVER=bun-serve`). */
  headersTimeoutSeconds: number;
  /** `BUN_SERVER`: on Bun, `serve` runs Bun's Node-compatible HTTP module (the connection limits hold) or Bun's own server (faster, no connection limits). */
  bunServer: "node-http" | "bun-serve";
  /** `MAX_BODY_BYTES_IN_FLIGHT`: the image-upload and PDF request-body bytes read at once in one process. */
  maxBodyBytesInFlight: number;
  /** `BODY_WAIT_SECONDS`: how long such a body waits for room before its 503. */
  bodyWaitSeconds: number;
  /** UserLimits of permitted accounts (`MAX_CASES`, `MAX_FILES_PER_CASE`). */
  limits: { maxCases: number; maxFilesPerCase: number };
  /** UserLimits of demo accounts (`DEMO_MAX_CASES`, `DEMO_MAX_FILES_PER_CASE`). */
  demoLimits: { maxCases: number; maxFilesPerCase: number };
  /** `SELF_REGISTRATION`: what sign-up with an identity token may do. */
  selfRegistration: "permitted" | "demo" | "closed";
  /** `DATA_WORKER_URL`: the data worker the user worker calls when deployed alone. */
  dataWorkerUrl: string | undefined;
  /** `IMAGE_WORKER_URL`: the image worker the user worker calls when deployed alone. */
  imageWorkerUrl: string | undefined;
  /** `MAIL_TRANSPORT`: the `DATA/outbox/` folder (default), SMTP, or an HTTP mail API. */
  mailTransport: "outbox" | "smtp" | "http";
  /** `ADMIN_EMAIL`: the administrator notified when an account is deleted. */
  adminEmail: string | undefined;
  /** `MAIL_FROM`: the sender of the account-deletion mails. */
  mailFrom: string | undefined;
  /** `MAIL_HTTP_URL`: the HTTP mail API endpoint. */
  mailHttpUrl: string | undefined;
  /** `MAIL_HTTP_TOKEN`: the HTTP mail API's bearer token. */
  mailHttpToken: string | undefined;
  /** `SMTP_URL`: `smtp://user:pass@host:port`. */
  smtpUrl: string | undefined;
  /** `MAIL_TIMEOUT_MS`: how long one mail may take before it counts as not sent. */
  mailTimeoutMs: number;
  /** `CAPTCHA_SECRET`: the secret sent to the verification service. */
  captchaSecret: string | undefined;
  /** `CAPTCHA_VERIFY_URL`: the verification endpoint. */
  captchaVerifyUrl: string;
  /** `CAPTCHA_TIMEOUT_MS`: how long a verification may take before it fails. */
  captchaTimeoutMs: number;
  /** `IMAGE_HOST`: the image store served by the image worker, or Cloudflare Images. */
  imageHost: "local" | "cloudflare";
  /** `PUBLIC_URL`: the URL clients reach this service at. */
  publicUrl: string | undefined;
  /** `HMAC_KEY`: signs image delivery URLs. */
  hmacKey: string | undefined;
  /** `ACCOUNT_HASH`: the image delivery account hash. */
  accountHash: string | undefined;
  /** `MAX_IMAGE_BYTES`: the largest image upload. */
  maxImageBytes: number;
  /** `IMAGE_URL_TTL_SECONDS`: lifetime of a signed image URL. */
  imageUrlTtlSeconds: number;
  /** `IMAGE_DELIVERY_HOST`: the Cloudflare Images delivery host. */
  imageDeliveryHost: string;
  /** `CF_ACCOUNT_ID`: the upstream Cloudflare Images account. */
  cfAccountId: string | undefined;
  /** `CF_IMAGES_TOKEN`: the upstream Cloudflare Images API token. */
  cfImagesToken: string | undefined;
  /** `CF_IMAGES_API_BASE`: the Cloudflare Images API base. */
  cfImagesApiBase: string;
  /** `IMAGE_UPSTREAM_TIMEOUT_MS`: how long a call to Cloudflare Images may take. */
  imageUpstreamTimeoutMs: number;
  /** `PDF_IMAGE_HOSTS`: hosts the report's image may come from; unset means the defaults. */
  pdfImageHosts: readonly string[] | undefined;
  /** `PDF_IMAGE_TIMEOUT_MS`: how long the PDF worker waits for the report's image. */
  pdfImageTimeoutMs: number;
  /** `PDF_SERVICE_NAME`: the name in the report footer. */
  pdfServiceName: string;
  /** `STORAGE`: where the stores live under `serve`. */
  storage: "fs" | "memory" | "redis" | "s3" | "deno-kv";
  /** `STORAGE_URL`: the backend's URL (Redis URL, S3 `https://host/bucket`, Deno KV path). */
  storageUrl: string | undefined;
  /** `S3_REGION`: the S3 signing region. */
  s3Region: string;
  /** `S3_ACCESS_KEY_ID`: the S3 access key. */
  s3AccessKeyId: string | undefined;
  /** `S3_SECRET_ACCESS_KEY`: the S3 secret key. */
  s3SecretAccessKey: string | undefined;
  /** `FSYNC`: what the file stores fsync before answering. */
  fsync: "audit" | "all" | "off";
  /** `DATA_ENCRYPTION_KEYS`: the key-encryption keys of encryption at rest (the first encrypts); undefined when off. */
  dataEncryptionKeys: readonly { kty: "oct"; kid: string; k: string }[] | undefined;
  /** `EXPORT_SIGNING_KEY`: a private JWK (JSON) that signs export manifests. */
  exportSigningKey: string | undefined;
  /** `EXPORT_VERIFY_KEYS`: the JWK, JWKs or JWKS (JSON) imports accept. */
  exportVerifyKeys: string | undefined;
  /** `EXPORT_REQUIRE_SIGNATURE`: refuse unsigned or invalid packages. */
  exportRequireSignature: boolean;
  /** `MAX_IMPORT_BYTES`: the largest case package the exchange worker imports. */
  maxImportBytes: number;
  /** `EXCHANGE_DECRYPTION_KEY`: a private JWK (JSON) that opens packages sealed for this service. */
  exchangeDecryptionKey: string | undefined;
  /** `AUDIT_SIGNING_KEY`: a private JWK (JSON) that signs every audit head. */
  auditSigningKey: string | undefined;
  /** `AUDIT_VERIFY_KEYS`: the JWK, JWKs or JWKS (JSON) that verify earlier audit heads. */
  auditVerifyKeys: string | undefined;
  /** `API_DOCS`: whether the service serves its API reference page at `/docs`. */
  apiDocs: "on" | "off";
  /** `LOG_LEVEL`: the least level the request log writes. */
  logLevel: "debug" | "info" | "warn" | "error" | "off";
  /** `LOG_FORMAT`: one JSON object a line, or a readable line; unset, the adapter decides (JSON unless a terminal). */
  logFormat: "json" | "text" | undefined;
  /** `METRICS_TOKEN`: turns on `GET /metrics` behind this bearer token. */
  metricsToken: string | undefined;
  /** `DATA_HISTORY`: whether every write and delete of a data key keeps the version it replaces. */
  dataHistory: "on" | "off";
  /** `HISTORY_RETENTION_DAYS`: versions older than this many days may be pruned; undefined keeps all. */
  historyRetentionDays: number | undefined;
  /** `SIGNATURE_MAX_AUTH_AGE_SECONDS`: the oldest authentication a review signature accepts. */
  signatureMaxAuthAgeSeconds: number;
  /** The raw variables, for the keys worker's by-name lookup. */
  env: ReadonlyMap<string, string>;
}

/** `NAME: why`, or `A, B: why` for a problem of several variables. */
function problemOf(issue: z.core.$ZodIssue): string {
  const params = issue.code === "custom" ? issue.params : undefined;
  const variables = Array.isArray(params?.variables) ? params.variables : issue.path.slice(1);
  return `${variables.join(", ")}: ${issue.message}`;
}

/**
 * Parses the configuration from an env-like record (the adapter passes its runtime's
 * environment, or a Worker's `env`). Non-string values (Cloudflare bindings) are ignored.
 *
 * @throws {ConfigError} when a variable has an invalid value, naming every bad variable.
 */
export function parseConfig(source: Readonly<Record<string, unknown>>): ServiceConfig {
  const env = new Map<string, string>();
  for (const [name, value] of Object.entries(source)) {
    if (typeof value === "string" && value !== "") env.set(name, value);
  }
  const values = Object.fromEntries(env);
  const result = ServiceEnvSchema.safeParse(Object.fromEntries(Object.keys(CONFIG_SECTIONS).map((section) => [section, values])));
  if (!result.success) throw new ConfigError([...new Set(result.error.issues.map(problemOf))]);
  const s = result.data;
  return {
    ...s.workerKeys,
    ...s.cors,
    ...s.identity,
    ...s.rateLimits,
    ...s.bodyLimits,
    ...s.serverLimits,
    ...s.accounts,
    ...s.mail,
    ...s.captcha,
    ...s.images,
    ...s.pdf,
    ...s.storage,
    ...s.encryption,
    ...s.exchange,
    ...s.audit,
    ...s.apiDocs,
    ...s.operations,
    ...s.history,
    ...s.review,
    env,
  };
}
