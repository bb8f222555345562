/**
 * @module
 * `ServiceConfig`: parsed once, with zod, from an env-like record (CONTRACT
 * "Configuration"). Empty strings count as unset, so `FOO=` in a `.env` file unsets FOO.
 */
import * as z from "zod";
import { parseRateLimits, type RateLimits } from "./rate-limit/rules.ts";
import { firebaseIdentity } from "./identity/identity-token.ts";

/** Secrets that no worker ever hands out, whatever `KEYS_EXPOSED` says. */
export const NEVER_EXPOSED = [
  "KEYS_AUTH",
  "HMAC_KEY",
  "CF_IMAGES_TOKEN",
  "CF_ACCOUNT_ID",
  "CAPTCHA_SECRET",
  "SMTP_URL",
  "MAIL_HTTP_TOKEN",
  "ADMIN_AUTH",
  "EXPORT_SIGNING_KEY",
  "STORAGE_URL",
  "S3_ACCESS_KEY_ID",
  "S3_SECRET_ACCESS_KEY",
] as const;

/**
 * The values `serve` generates and persists when they are not configured. `ACCOUNT_HASH` is
 * no secret, but the Striae client needs one to name images (with the local image host only:
 * Cloudflare Images has its own).
 */
export const GENERATED_SECRETS = ["USER_DB_AUTH", "R2_KEY_SECRET", "KEYS_AUTH", "IMAGES_API_TOKEN", "HMAC_KEY", "ACCOUNT_HASH"] as const;

const DEFAULT_KEYS_EXPOSED = "USER_DB_AUTH,R2_KEY_SECRET,IMAGES_API_TOKEN,ACCOUNT_HASH";
const TURNSTILE_SITEVERIFY = "https://challenges.cloudflare.com/turnstile/v0/siteverify";

const optional = z.string().optional();
/** The outbox's recipients when none are configured: the operator reads `DATA/outbox/`. */
const DEFAULT_ADMIN_EMAIL = "admin@localhost";
const DEFAULT_MAIL_FROM = "Forensic Annotation <no-reply@localhost>";
const list = (fallback: string) =>
  z.string().default(fallback).transform((value) =>
    value.split(",").map((item) => item.trim()).filter((item) => item !== "")
  );
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const url = z.url({ protocol: /^https?$/ });

/** The environment variables the service reads (CONTRACT "Configuration"). */
export const ServiceEnvSchema = z.object({
  USER_DB_AUTH: optional,
  R2_KEY_SECRET: optional,
  KEYS_AUTH: optional,
  IMAGES_API_TOKEN: optional,
  ACCOUNT_HASH: optional,
  HMAC_KEY: optional,
  KEYS_EXPOSED: list(DEFAULT_KEYS_EXPOSED),
  ALLOWED_ORIGIN: optional,
  ADMIN_EMAIL: optional,
  MAIL_FROM: optional,
  MAIL_TRANSPORT: z.enum(["outbox", "smtp", "http"]).default("outbox"),
  MAIL_HTTP_URL: url.optional(),
  MAIL_HTTP_TOKEN: optional,
  SMTP_URL: optional,
  /** How long one mail may take to be accepted before it counts as not sent, in milliseconds. */
  MAIL_TIMEOUT_MS: positiveInt(15_000),
  /** The data worker the user worker calls when deployed alone (spec 5.3). */
  DATA_WORKER_URL: url.optional(),
  /** The image worker the user worker calls when deployed alone (spec 5.3). */
  IMAGE_WORKER_URL: url.optional(),
  /** UserLimits of permitted accounts; unset means unlimited. */
  MAX_CASES: positiveInt(Number.MAX_SAFE_INTEGER),
  MAX_FILES_PER_CASE: positiveInt(Number.MAX_SAFE_INTEGER),
  /** UserLimits of demo accounts (`permitted: false`). */
  DEMO_MAX_CASES: positiveInt(3),
  DEMO_MAX_FILES_PER_CASE: positiveInt(10),
  /** Who a user may make of themselves on sign-up with an identity token: `permitted`, `demo` or `closed`. */
  SELF_REGISTRATION: z.enum(["permitted", "demo", "closed"]).default("permitted"),
  CAPTCHA_SECRET: optional,
  CAPTCHA_VERIFY_URL: url.default(TURNSTILE_SITEVERIFY),
  CAPTCHA_TIMEOUT_MS: positiveInt(10_000),
  IMAGE_HOST: z.enum(["local", "cloudflare"]).default("local"),
  CF_ACCOUNT_ID: optional,
  CF_IMAGES_TOKEN: optional,
  PUBLIC_URL: url.optional(),
  /** Largest image upload, in bytes (default 25 MB). */
  MAX_IMAGE_BYTES: positiveInt(25 * 1024 * 1024),
  /** Lifetime of a signed image URL, in seconds (default one hour). */
  IMAGE_URL_TTL_SECONDS: positiveInt(3600),
  /** The Cloudflare Images API base (`cloudflare` host); tests point it at a local server. */
  CF_IMAGES_API_BASE: url.default("https://api.cloudflare.com/client/v4"),
  /** The Cloudflare Images delivery host whose URLs the signer accepts. */
  IMAGE_DELIVERY_HOST: z.string().regex(/^[a-z0-9.-]+(:\d+)?$/i).default("imagedelivery.net"),
  /** How long a call to Cloudflare Images may take, in milliseconds. */
  IMAGE_UPSTREAM_TIMEOUT_MS: positiveInt(30_000),
  PDF_IMAGE_HOSTS: z.string().optional(),
  /** How long the PDF worker waits for the report's image, in milliseconds. */
  PDF_IMAGE_TIMEOUT_MS: positiveInt(10_000),
  /** The name in the report footer's "Notes formatted by …". */
  PDF_SERVICE_NAME: z.string().trim().min(1).max(100).default("Forensic Annotation Service"),
  RATE_LIMITS: optional,
  /** Identity-token mode: the provider's JWKS, and the `iss` and `aud` tokens must carry. */
  AUTH_JWKS_URL: url.optional(),
  AUTH_ISSUER: optional,
  AUTH_AUDIENCE: optional,
  /** Firebase Authentication: the project id gives issuer, audience and Google's JWKS URL. */
  FIREBASE_PROJECT_ID: z.string().regex(/^[a-z0-9-]{1,64}$/, "a Firebase project id (lower-case letters, digits, -)").optional(),
  /** Tolerated clock difference for a token's `exp` and `nbf`, in seconds. */
  AUTH_CLOCK_SKEW_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  /** The admin key (`X-Admin-Key`), which may act on any user; every use is audited. */
  ADMIN_AUTH: optional,
  /** Where the stores live under `serve`: files under --data, memory, Redis, S3, or Deno KV (under Deno). */
  STORAGE: z.enum(["fs", "memory", "redis", "s3", "deno-kv"]).default("fs"),
  /** The backend's URL: `redis://127.0.0.1:6379/0`, or the S3 endpoint and bucket `https://host/bucket`. */
  STORAGE_URL: z.string().optional(),
  S3_REGION: z.string().default("us-east-1"),
  S3_ACCESS_KEY_ID: optional,
  S3_SECRET_ACCESS_KEY: optional,
  /** What the file stores fsync before answering: the audit trail (default), every write, or nothing. */
  FSYNC: z.enum(["audit", "all", "off"]).default("audit"),
  /** Largest JSON document the data worker stores, in bytes. */
  MAX_JSON_BYTES: positiveInt(10 * 1024 * 1024),
  /** Largest audit entry, in bytes. */
  MAX_AUDIT_ENTRY_BYTES: positiveInt(64 * 1024),
});

/** The parsed configuration every worker receives. */
export interface ServiceConfig {
  /** `USER_DB_AUTH`: the `X-Custom-Auth-Key` of the user worker. */
  userDbAuth: string | undefined;
  /** `R2_KEY_SECRET`: the `X-Custom-Auth-Key` of the data worker and the audit endpoints. */
  r2KeySecret: string | undefined;
  /** `KEYS_AUTH`: the `X-Custom-Auth-Key` of the keys worker; never handed out by it. */
  keysAuth: string | undefined;
  /** `IMAGES_API_TOKEN`: the `Authorization: Bearer` token of the image worker. */
  imagesApiToken: string | undefined;
  /** `ACCOUNT_HASH`: the image delivery account hash (Cloudflare Images). */
  accountHash: string | undefined;
  /** `HMAC_KEY`: signs image delivery URLs; never handed out by the keys worker. */
  hmacKey: string | undefined;
  /** Names the keys worker may return (never one of {@link NEVER_EXPOSED}). */
  keysExposed: readonly string[];
  /** `ALLOWED_ORIGIN`: the one site origin CORS allows (spec 5.4). */
  allowedOrigin: string | undefined;
  /** `ADMIN_EMAIL`: the administrator notified when an account is deleted. */
  adminEmail: string | undefined;
  /** `MAIL_FROM`: the sender of the account-deletion mails. */
  mailFrom: string | undefined;
  /** `MAIL_TRANSPORT`: where mail goes: the `DATA/outbox/` folder (default), SMTP, or an HTTP mail API. */
  mailTransport: "outbox" | "smtp" | "http";
  /** `MAIL_HTTP_URL`: the HTTP mail API endpoint (`http` transport). */
  mailHttpUrl: string | undefined;
  /** `MAIL_HTTP_TOKEN`: the HTTP mail API's bearer token (`http` transport). */
  mailHttpToken: string | undefined;
  /** `SMTP_URL`: `smtp://user:pass@host:port` (`smtp` transport). */
  smtpUrl: string | undefined;
  /** `MAIL_TIMEOUT_MS`: how long one mail may take before it counts as not sent (default 15 000 ms). */
  mailTimeoutMs: number;
  /** `DATA_WORKER_URL`: the data worker the user worker calls when deployed alone; unset means the stores directly. */
  dataWorkerUrl: string | undefined;
  /** `IMAGE_WORKER_URL`: the image worker the user worker calls when deployed alone; unset means the image host directly. */
  imageWorkerUrl: string | undefined;
  /** UserLimits of permitted accounts (`MAX_CASES`, `MAX_FILES_PER_CASE`; default unlimited). */
  limits: { maxCases: number; maxFilesPerCase: number };
  /** UserLimits of demo accounts (`DEMO_MAX_CASES` default 3, `DEMO_MAX_FILES_PER_CASE` default 10). */
  demoLimits: { maxCases: number; maxFilesPerCase: number };
  /**
   * `SELF_REGISTRATION`: with identity tokens, a user creating their own record stores what
   * they send (`permitted`, the Striae client's sign-up), is made a demo account whatever
   * they send (`demo`), or is refused (`closed`). Default `permitted`.
   */
  selfRegistration: "permitted" | "demo" | "closed";
  /** `CAPTCHA_SECRET`: the secret sent to the CAPTCHA verification service. */
  captchaSecret: string | undefined;
  /** `CAPTCHA_VERIFY_URL`: the verification endpoint; default Cloudflare Turnstile's siteverify. */
  captchaVerifyUrl: string;
  /** `CAPTCHA_TIMEOUT_MS`: how long a verification may take before it fails (default 10 000 ms). */
  captchaTimeoutMs: number;
  /** `IMAGE_HOST`: `local` (images in the blob store, served by the image worker) or `cloudflare`. */
  imageHost: "local" | "cloudflare";
  /** `CF_ACCOUNT_ID`: the upstream Cloudflare Images account (`cloudflare` host). */
  cfAccountId: string | undefined;
  /** `CF_IMAGES_TOKEN`: the upstream Cloudflare Images API token (`cloudflare` host). */
  cfImagesToken: string | undefined;
  /** `PUBLIC_URL`: the URL clients reach this service at; signed image delivery URLs are built on it. */
  publicUrl: string | undefined;
  /** `MAX_IMAGE_BYTES`: the largest image upload (default 25 MB). */
  maxImageBytes: number;
  /** `IMAGE_URL_TTL_SECONDS`: lifetime of a signed image URL (default 3600). */
  imageUrlTtlSeconds: number;
  /** `CF_IMAGES_API_BASE`: the Cloudflare Images API base (default `https://api.cloudflare.com/client/v4`). */
  cfImagesApiBase: string;
  /** `IMAGE_DELIVERY_HOST`: the Cloudflare Images delivery host (default `imagedelivery.net`). */
  imageDeliveryHost: string;
  /** `IMAGE_UPSTREAM_TIMEOUT_MS`: how long a call to Cloudflare Images may take (default 30 000 ms). */
  imageUpstreamTimeoutMs: number;
  /** `PDF_IMAGE_HOSTS`: hosts whose images the PDF worker may fetch; unset means its own and `imagedelivery.net`. */
  pdfImageHosts: readonly string[] | undefined;
  /** `PDF_IMAGE_TIMEOUT_MS`: how long the PDF worker waits for the report's image (default 10 000 ms). */
  pdfImageTimeoutMs: number;
  /** `PDF_SERVICE_NAME`: the name in the report footer (default "Forensic Annotation Service"). */
  pdfServiceName: string;
  /** `RATE_LIMITS`: the limit of each route per client IP and per user, or "off" (defaults when unset). */
  rateLimits: RateLimits | "off";
  /**
   * Identity-token mode (`AUTH_JWKS_URL`, `AUTH_ISSUER`, `AUTH_AUDIENCE`, or `FIREBASE_PROJECT_ID`):
   * where tokens are verified; undefined in key-only mode.
   */
  identity: IdentityConfig | undefined;
  /** `ADMIN_AUTH`: the admin key. */
  adminAuth: string | undefined;
  /** `STORAGE`: where the stores live under `serve` (files under `--data` by default). */
  storage: "fs" | "memory" | "redis" | "s3" | "deno-kv";
  /** `STORAGE_URL`: the storage backend's URL (Redis URL, S3 `https://host/bucket`, Deno KV path). */
  storageUrl: string | undefined;
  /** `S3_REGION`: the S3 signing region (default `us-east-1`). */
  s3Region: string;
  /** `S3_ACCESS_KEY_ID`: the S3 access key (`STORAGE=s3`). */
  s3AccessKeyId: string | undefined;
  /** `S3_SECRET_ACCESS_KEY`: the S3 secret key (`STORAGE=s3`). */
  s3SecretAccessKey: string | undefined;
  /** `FSYNC`: what the file stores (`STORAGE=fs`) fsync before answering; default `audit`. */
  fsync: "audit" | "all" | "off";
  /** `MAX_JSON_BYTES`: the largest JSON document (case, annotations) the data worker stores. */
  maxJsonBytes: number;
  /** `MAX_AUDIT_ENTRY_BYTES`: the largest audit entry the audit endpoints accept. */
  maxAuditEntryBytes: number;
  /** The raw variables, for the keys worker's by-name lookup. */
  env: ReadonlyMap<string, string>;
}

/** Where identity tokens are verified. */
export interface IdentityConfig {
  /** The provider's JWKS URL. */
  jwksUrl: string;
  /** The `iss` every token must carry. */
  issuer: string;
  /** The `aud` every token must carry. */
  audience: string;
  /** Tolerated clock difference for `exp` and `nbf`, in seconds. */
  clockSkewSeconds: number;
}

/** Identity-token mode from the variables: explicit AUTH_* values win over Firebase's. */
function identityOf(e: z.infer<typeof ServiceEnvSchema>): IdentityConfig | undefined {
  const firebase = e.FIREBASE_PROJECT_ID === undefined ? undefined : firebaseIdentity(e.FIREBASE_PROJECT_ID);
  const jwksUrl = e.AUTH_JWKS_URL ?? firebase?.jwksUrl;
  const issuer = e.AUTH_ISSUER ?? firebase?.issuer;
  const audience = e.AUTH_AUDIENCE ?? firebase?.audience;
  if (jwksUrl === undefined || issuer === undefined || audience === undefined) return undefined;
  return { jwksUrl, issuer, audience, clockSkewSeconds: e.AUTH_CLOCK_SKEW_SECONDS };
}

/**
 * A configuration problem, naming each bad variable. The operator's mistake, not a
 * client's: it is no `ServiceError`, so a request never sees it.
 */
export class ConfigError extends Error {
  /** Builds the error from one problem per bad variable (`NAME: why`). */
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join("; ")}`);
    this.name = "ConfigError";
  }
}

/**
 * Parses the configuration from an env-like record (the adapter passes its runtime's
 * environment, or a Worker's `env`). Non-string values (Cloudflare bindings) are ignored.
 *
 * @throws {ConfigError} when a variable has an invalid value.
 */
export function parseConfig(source: Readonly<Record<string, unknown>>): ServiceConfig {
  const env = new Map<string, string>();
  for (const [name, value] of Object.entries(source)) {
    if (typeof value === "string" && value !== "") env.set(name, value);
  }
  const result = ServiceEnvSchema.safeParse(Object.fromEntries(env));
  if (result.success) {
    const { STORAGE, STORAGE_URL, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY } = result.data;
    const problems: string[] = [];
    if (STORAGE === "redis" && !STORAGE_URL?.startsWith("redis")) {
      problems.push("STORAGE_URL: required when STORAGE=redis (e.g. redis://127.0.0.1:6379/0)");
    }
    if (STORAGE === "s3") {
      if (!STORAGE_URL || !/^https?:\/\/[^/]+\/[^/]+\/?$/.test(STORAGE_URL)) {
        problems.push("STORAGE_URL: required when STORAGE=s3, as the endpoint and bucket (https://host/bucket)");
      }
      if (!S3_ACCESS_KEY_ID || !S3_SECRET_ACCESS_KEY) problems.push("S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: required when STORAGE=s3");
    }
    const { MAIL_TRANSPORT, MAIL_HTTP_URL, MAIL_HTTP_TOKEN, SMTP_URL, ADMIN_EMAIL, MAIL_FROM } = result.data;
    if (MAIL_TRANSPORT === "http" && (!MAIL_HTTP_URL || !MAIL_HTTP_TOKEN)) {
      problems.push("MAIL_HTTP_URL, MAIL_HTTP_TOKEN: required when MAIL_TRANSPORT=http");
    }
    if (MAIL_TRANSPORT === "smtp" && !/^smtps?:\/\//.test(SMTP_URL ?? "")) {
      problems.push("SMTP_URL: required when MAIL_TRANSPORT=smtp (smtp://user:pass@host:port or smtps://...)");
    }
    // Real mail needs real addresses; the outbox defaults to local ones an operator reads.
    if (MAIL_TRANSPORT !== "outbox" && (!ADMIN_EMAIL || !MAIL_FROM)) {
      problems.push(`ADMIN_EMAIL, MAIL_FROM: required when MAIL_TRANSPORT=${MAIL_TRANSPORT}`);
    }
    const { AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE, FIREBASE_PROJECT_ID, RATE_LIMITS } = result.data;
    if (AUTH_JWKS_URL !== undefined && FIREBASE_PROJECT_ID === undefined && (!AUTH_ISSUER || !AUTH_AUDIENCE)) {
      problems.push("AUTH_ISSUER, AUTH_AUDIENCE: required when AUTH_JWKS_URL is set (tokens of any issuer or audience would pass)");
    }
    if (AUTH_JWKS_URL === undefined && FIREBASE_PROJECT_ID === undefined && (AUTH_ISSUER || AUTH_AUDIENCE)) {
      problems.push("AUTH_JWKS_URL: required with AUTH_ISSUER and AUTH_AUDIENCE (or set FIREBASE_PROJECT_ID)");
    }
    try {
      parseRateLimits(RATE_LIMITS);
    } catch (err) {
      problems.push(`RATE_LIMITS: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (problems.length > 0) throw new ConfigError(problems);
  }
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`));
  }
  const e = result.data;
  const hidden = new Set<string>(NEVER_EXPOSED);
  return {
    userDbAuth: e.USER_DB_AUTH,
    r2KeySecret: e.R2_KEY_SECRET,
    keysAuth: e.KEYS_AUTH,
    imagesApiToken: e.IMAGES_API_TOKEN,
    accountHash: e.ACCOUNT_HASH,
    hmacKey: e.HMAC_KEY,
    keysExposed: e.KEYS_EXPOSED.filter((name) => !hidden.has(name)),
    allowedOrigin: e.ALLOWED_ORIGIN,
    adminEmail: e.ADMIN_EMAIL ?? (e.MAIL_TRANSPORT === "outbox" ? DEFAULT_ADMIN_EMAIL : undefined),
    mailFrom: e.MAIL_FROM ?? (e.MAIL_TRANSPORT === "outbox" ? DEFAULT_MAIL_FROM : undefined),
    mailTransport: e.MAIL_TRANSPORT,
    mailHttpUrl: e.MAIL_HTTP_URL,
    mailHttpToken: e.MAIL_HTTP_TOKEN,
    smtpUrl: e.SMTP_URL,
    mailTimeoutMs: e.MAIL_TIMEOUT_MS,
    dataWorkerUrl: e.DATA_WORKER_URL,
    imageWorkerUrl: e.IMAGE_WORKER_URL,
    limits: { maxCases: e.MAX_CASES, maxFilesPerCase: e.MAX_FILES_PER_CASE },
    demoLimits: { maxCases: e.DEMO_MAX_CASES, maxFilesPerCase: e.DEMO_MAX_FILES_PER_CASE },
    selfRegistration: e.SELF_REGISTRATION,
    captchaSecret: e.CAPTCHA_SECRET,
    captchaVerifyUrl: e.CAPTCHA_VERIFY_URL,
    captchaTimeoutMs: e.CAPTCHA_TIMEOUT_MS,
    imageHost: e.IMAGE_HOST,
    cfAccountId: e.CF_ACCOUNT_ID,
    cfImagesToken: e.CF_IMAGES_TOKEN,
    publicUrl: e.PUBLIC_URL,
    maxImageBytes: e.MAX_IMAGE_BYTES,
    imageUrlTtlSeconds: e.IMAGE_URL_TTL_SECONDS,
    cfImagesApiBase: e.CF_IMAGES_API_BASE,
    imageDeliveryHost: e.IMAGE_DELIVERY_HOST,
    imageUpstreamTimeoutMs: e.IMAGE_UPSTREAM_TIMEOUT_MS,
    pdfImageHosts: e.PDF_IMAGE_HOSTS?.split(",").map((host) => host.trim()).filter((host) => host !== ""),
    pdfImageTimeoutMs: e.PDF_IMAGE_TIMEOUT_MS,
    pdfServiceName: e.PDF_SERVICE_NAME,
    rateLimits: parseRateLimits(e.RATE_LIMITS),
    identity: identityOf(e),
    adminAuth: e.ADMIN_AUTH,
    storage: e.STORAGE,
    storageUrl: e.STORAGE_URL,
    s3Region: e.S3_REGION,
    s3AccessKeyId: e.S3_ACCESS_KEY_ID,
    s3SecretAccessKey: e.S3_SECRET_ACCESS_KEY,
    fsync: e.FSYNC,
    maxJsonBytes: e.MAX_JSON_BYTES,
    maxAuditEntryBytes: e.MAX_AUDIT_ENTRY_BYTES,
    env,
  };
}
