/**
 * @module
 * A typed client of every worker over `fetch` only (browsers, Node, Bun, Deno, Workers):
 * each call sends its worker's credential (docs/api.md#access), encodes path segments, and
 * turns an error answer into a {@link ServiceClientError}.
 */
import type { AuditEntry, CaseData, ErrorBody, UserData } from "../core/schemas/resources.ts";
import type { ErrorCode } from "../core/schemas/error.ts";
import type { ReportInput } from "../core/pdf/mod.ts";
import type { AuditVerification } from "../core/audit/verify.ts";
import type { HistoryVerification, KeyHistory } from "../core/history/mod.ts";
import type { CaseImportPreview, ConfirmationImportResult, ImportResult } from "../core/exchange/shapes.ts";
import type { Conclusion, ConclusionRequest, Review, ReviewRequest, ReviewSignature, ReviewVerification, SignatureRequest } from "../core/schemas/review.ts";
import type {
  AuditAppended,
  AuditEntries,
  AuditRange,
  CaptchaResult,
  CaseAssignmentInput,
  HistoryPruneResult,
  ImageClient,
  LegalHolds,
  UploadedImage,
  UserDeletion,
  UserList,
  UserInput,
} from "./types.ts";

/** The workers, each under its mount of the service. */
export type WorkerName = "user" | "data" | "audit" | "keys" | "captcha" | "image" | "pdf" | "exchange" | "review";

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** Where the service is (origin and mount prefix), e.g. `http://localhost:8787` or `https://lab.example/forensic`. */
  baseUrl: string;
  /** A worker deployed on its own: its base URL instead of `{baseUrl}/{worker}`. */
  workers?: Partial<Record<WorkerName, string>>;
  /** `USER_DB_AUTH`, sent as `X-Custom-Auth-Key` to the user worker. */
  userKey?: string;
  /** `R2_KEY_SECRET`, sent as `X-Custom-Auth-Key` to the data worker and the audit endpoints. */
  dataKey?: string;
  /** `KEYS_AUTH`, sent as `X-Custom-Auth-Key` to the keys worker. */
  keysKey?: string;
  /** `IMAGES_API_TOKEN`, sent as `Authorization: Bearer` to the image worker. */
  imagesToken?: string;
  /** `ADMIN_AUTH`, sent as `X-Admin-Key` besides the worker's credential (not from browsers: CORS refuses it). */
  adminKey?: string;
  /** The identity provider's token (identity-token mode), sent as `X-Identity-Token`; a function is asked before each call. */
  identityToken?: string | (() => string | undefined | Promise<string | undefined>);
  /** The fetch to use (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * The code of a {@link ServiceClientError}: the standard error's code of an error answer, or
 * `NETWORK_ERROR` when no answer came (fetch failed: the service unreachable, DNS, TLS, CORS,
 * the connection cut while the answer was read).
 */
export type ClientErrorCode = ErrorCode | "NETWORK_ERROR";

/**
 * An error answer of the service (its status, and the standard error body when it has one), or
 * no answer at all: status 0, code `NETWORK_ERROR`, and fetch's own error as `cause`.
 */
export class ServiceClientError extends Error {
  /** The HTTP status; 0 when no answer came (code `NETWORK_ERROR`). */
  readonly status: number;
  /** The standard error's code when the body is the standard error body; `NETWORK_ERROR` when no answer came. */
  readonly code: ClientErrorCode | undefined;
  /** The standard error body, when the answer has one (docs/api.md#errors). */
  readonly error: ErrorBody | undefined;
  /** The answer's body: parsed JSON, or the text. */
  readonly body: unknown;
  /** `Retry-After` of a 429, in seconds. */
  readonly retryAfterSeconds: number | undefined;

  /**
   * Wraps an error answer; `message` says what went wrong when the body cannot (a redirect, an
   * unreadable answer). `options.cause` is the error behind it, `options.code` a code of the client's own.
   */
  constructor(status: number, body: unknown, retryAfterSeconds?: number, message?: string, options: { cause?: unknown; code?: "NETWORK_ERROR" } = {}) {
    const error = isErrorBody(body) ? body : undefined;
    const said = message ?? error?.message ?? (isRecord(body) && typeof body["message"] === "string" ? body["message"] : undefined);
    super(`${status}${said === undefined ? "" : `: ${said}`}`, "cause" in options ? { cause: options.cause } : undefined);
    this.name = "ServiceClientError";
    this.status = status;
    this.error = error;
    this.code = options.code ?? error?.code;
    this.body = body;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// Every ErrorCode, checked by the compiler both ways (a value, not an import: the client carries no server code).
const ERROR_CODES: Record<ErrorCode, true> = { UNAUTHORIZED: true, FORBIDDEN: true, NOT_FOUND: true, CONFLICT: true, VALIDATION_ERROR: true, SERVER_ERROR: true };

function isErrorBody(value: unknown): value is ErrorBody {
  return isRecord(value) && typeof value["error"] === "string" && typeof value["code"] === "string" && Object.hasOwn(ERROR_CODES, value["code"]) &&
    typeof value["message"] === "string" && isRecord(value["details"]);
}

/** The 400 the service answers for a path segment it refuses, raised before sending such a request. */
function refusedBeforeSending(message: string, details: Record<string, unknown>): ServiceClientError {
  return new ServiceClientError(400, { error: "Bad Request", code: "VALIDATION_ERROR", message, details });
}

/**
 * `read()` (fetch, or reading an answer's body), its rejection as the client's network failure:
 * no answer came, or it broke off. `what` says which, for the message.
 */
async function reading<T>(what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (cause) {
    if (cause instanceof ServiceClientError) throw cause;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new ServiceClientError(0, undefined, undefined, `${what}: ${reason}`, { cause, code: "NETWORK_ERROR" });
  }
}

const BROKE_OFF = "the answer broke off";

// Text without a lone UTF-16 surrogate, which no URL can carry (encodeURIComponent throws, URLSearchParams makes it U+FFFD).
// No lookbehind: browsers without it (Safari before 16.4) would refuse the whole module.
const WELL_FORMED = /^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;

/**
 * One path segment, percent-encoded. Empty, `.` and `..` are refused: `new Request` would
 * resolve a dot segment (encoded or not) before the service sees it, sending the call and its
 * credentials to another key, another worker or another app on the origin.
 */
function pathSegment(value: string, what: string): string {
  if (value === "" || value === "." || value === "..") {
    throw refusedBeforeSending(`${what} may not be ${value === "" ? "empty" : `"${value}"`}`, { [what]: value });
  }
  try {
    return encodeURIComponent(value);
  } catch {
    // A lone surrogate: the one thing encodeURIComponent refuses.
    throw loneSurrogate(what);
  }
}

/** A version number as the query carries it, or the refusal of anything else (before sending). */
function versionNumber(version: number): string {
  if (!Number.isSafeInteger(version) || version < 1) throw refusedBeforeSending("version is a version number (1, 2, ...)", { version });
  return String(version);
}

const loneSurrogate = (what: string) => refusedBeforeSending(`${what} holds a lone UTF-16 surrogate, which no URL can carry`, {});

/** `value` unchanged, or the refusal of a text holding a lone surrogate. */
function wellFormed(value: string, what: string): string {
  if (!WELL_FORMED.test(value)) throw loneSurrogate(what);
  return value;
}

/** The most of an error answer's body read (the service's are a few hundred bytes); the rest is cancelled. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** The start of a body as text, at most `max` bytes of it. */
async function textUpTo(response: Response, max: number): Promise<string> {
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let read = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    const room = max - read;
    read += value.length;
    text += decoder.decode(value.subarray(0, room), { stream: true });
    if (read >= max) {
      await reader.cancel();
      return text + decoder.decode();
    }
  }
}

/** `Retry-After` in seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterSeconds(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  // Delay-seconds is digits only ("-5" or "1.5" is no delay, and no date either).
  if (/^[\s\d.+-]*$/.test(header)) return /^\s*\d+\s*$/.test(header) ? Number(header) : undefined;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The user worker's calls. */
export interface UserClient {
  /** `GET /user/`: every user, summed up (needs `adminKey`, or an `identityToken` whose roles include `admin`). */
  list(): Promise<UserList>;
  /** `GET /user/{uid}`. */
  get(uid: string): Promise<UserData>;
  /** `PUT /user/{uid}`: creates (all but `readOnlyCases` required) or updates the record. */
  put(uid: string, body: UserInput): Promise<UserData>;
  /** `DELETE /user/{uid}`: deletes the account, its cases, files and images. */
  delete(uid: string): Promise<UserDeletion>;
  /** `PUT /user/{uid}/cases`: assigns cases. */
  addCases(uid: string, cases: CaseAssignmentInput[]): Promise<UserData>;
  /** `DELETE /user/{uid}/cases`: removes case assignments (the documents stay). */
  removeCases(uid: string, caseNumbers: string[]): Promise<UserData>;
  /** `GET /user/{uid}/holds`: the user's legal holds (needs `adminKey`, or an `identityToken` whose roles include `admin`). */
  holds(uid: string): Promise<LegalHolds>;
  /** `PUT /user/{uid}/holds`: puts a case on legal hold, or records a new reason (needs `adminKey`, or an `identityToken` whose roles include `admin`). */
  placeHold(uid: string, caseNumber: string, reason: string): Promise<LegalHolds>;
  /** `DELETE /user/{uid}/holds`: lifts the hold on a case (needs `adminKey`, or an `identityToken` whose roles include `admin`). */
  liftHold(uid: string, caseNumber: string): Promise<LegalHolds>;
}

/** A data key: `"u1/C-1/data.json"` or its segments; each segment is percent-encoded by the client. */
export type DataKey = string | readonly string[];

/** The data worker's calls. */
export interface DataClient {
  /**
   * `GET /data/{key}`: the stored JSON; undefined when there is none. The service answers `[]`
   * for a missing document (never 404), so a document stored as `[]` reads as undefined too.
   */
  get<T = unknown>(key: DataKey): Promise<T | undefined>;
  /** `PUT /data/{key}`: stores any JSON value. */
  put(key: DataKey, value: unknown): Promise<void>;
  /** `DELETE /data/{key}`. */
  delete(key: DataKey): Promise<void>;
  /** A case document (`{uid}/{caseNumber}/data.json`); undefined when there is none. */
  getCase(uid: string, caseNumber: string): Promise<CaseData | undefined>;
  /** Stores a case document. */
  putCase(uid: string, caseNumber: string, data: CaseData): Promise<void>;
  /**
   * `GET /data/{key}?history`: the key's versions, oldest first, and its current version
   * (null when deleted); with `verify: true` also `valid` and, when false, the first bad version.
   * A key that never existed is a `ServiceClientError` with status 404.
   */
  history(key: DataKey, options?: { verify?: boolean }): Promise<KeyHistory & Partial<HistoryVerification>>;
  /** `GET /data/{key}?version=N`: version N's JSON; a deletion mark or unknown N is a 404 `ServiceClientError`. */
  version<T = unknown>(key: DataKey, version: number): Promise<T>;
  /** `GET /data/{key}?version=N`: version N's bytes exactly as stored (their SHA-256 is the version's `sha256`). */
  versionBytes(key: DataKey, version: number): Promise<Uint8Array<ArrayBuffer>>;
  /** `POST /data/history/prune`: prunes versions older than `HISTORY_RETENTION_DAYS` (needs `adminKey`, or an `identityToken` whose roles include `admin`). */
  pruneHistories(): Promise<HistoryPruneResult>;
}

/** The audit endpoints (the audit worker's). */
export interface AuditClient {
  /**
   * `POST /audit/?userId=`: appends an entry to the user's trail of today. An entry read back
   * is taken too: the fields the service writes (`receivedAt`, `seq`, `prevHash`, `hash`) are
   * left out of what is sent, and the service writes its own. The stand-in of an unreadable
   * entry (`unreadable: true`) is refused before sending (400 `VALIDATION_ERROR`).
   */
  append(entry: AuditEntry): Promise<AuditAppended>;
  /** `GET /audit/?userId=`: the user's entries of today or of a range, newest first. */
  read(userId: string, range?: AuditRange): Promise<AuditEntries>;
  /** `GET /audit/verify?userId=`: checks the hash chain of the user's whole trail, or of a range of days. */
  verify(userId: string, range?: AuditRange): Promise<AuditVerification>;
}

/** A file the exchange worker answers: its name, its type, and its bytes as they arrive. */
export interface ExchangeFile {
  /** The file's name (from `Content-Disposition`), e.g. `C-1-export-20261122.zip`. */
  fileName: string;
  /** Its media type. */
  contentType: string;
  /** The bytes as they arrive (read it, or `bytes()`, once). */
  body: ReadableStream<Uint8Array>;
  /** The whole file. */
  bytes(): Promise<Uint8Array<ArrayBuffer>>;
}

/** What an export leaves out, as the `export` command's flags. */
export interface ExchangeExportOptions {
  /** `false`: files without their annotations (`--no-annotations`). */
  annotations?: boolean;
  /** `false`: without the summary block (`--no-metadata`). */
  metadata?: boolean;
}

/** A package or confirmation file to send: bytes, a Blob (a File), or a stream. */
export type ExchangeUpload = Uint8Array | Blob | ReadableStream<Uint8Array> | string;

/** The exchange worker's calls (docs/exchange.md#over-http); they send the data key. */
export interface ExchangeClient {
  /** `GET /exchange/{uid}/cases/{case}`: the case as a ZIP package (default), JSON or CSV. */
  exportCase(uid: string, caseNumber: string, options?: ExchangeExportOptions & { format?: "zip" | "json" | "csv" }): Promise<ExchangeFile>;
  /** `GET /exchange/{uid}/cases`: every case of the user as JSON (default) or an XLSX workbook. */
  exportAllCases(uid: string, options?: ExchangeExportOptions & { format?: "json" | "xlsx" }): Promise<ExchangeFile>;
  /** `POST /exchange/{uid}/imports`: imports a package as a read-only case; a refusal is a `ServiceClientError` (409 `CONFLICT`: pass `overwrite`). */
  importCase(uid: string, file: ExchangeUpload, options?: { overwrite?: boolean; fileName?: string }): Promise<ImportResult>;
  /** `POST /exchange/{uid}/imports?preview=true`: what the package holds and whether it would import; nothing is written. */
  previewImport(uid: string, file: ExchangeUpload, options?: { overwrite?: boolean }): Promise<CaseImportPreview>;
  /** `GET /exchange/{uid}/cases/{case}/confirmations`: the confirmation export of a read-only case. */
  exportConfirmations(uid: string, caseNumber: string): Promise<ExchangeFile>;
  /** `POST /exchange/{uid}/confirmations`: imports a reviewer's confirmation export into the original case. */
  importConfirmations(uid: string, file: ExchangeUpload, options?: { fileName?: string }): Promise<ConfirmationImportResult>;
  /** `GET /exchange/keys` (no credential): the service's public signing and sealing keys, as a JWKS. */
  keys(): Promise<{ keys: JsonWebKey[] }>;
  /**
   * `POST /exchange/{uid}/cases/{case}/sealed`: the case's ZIP sealed for `recipient`, a public
   * JWK (the `use: "enc"` key of the peer's `keys()`); the peer imports it with `importCase`.
   */
  exportSealedCase(uid: string, caseNumber: string, recipient: JsonWebKey): Promise<ExchangeFile>;
}

/** The file name of a `Content-Disposition` (its `filename*` when there is one). */
function attachmentName(header: string | null, fallback: string): string {
  if (header === null) return fallback;
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (extended !== null) {
    try {
      return decodeURIComponent(extended[1]!);
    } catch {
      // Not percent-encoding after all: the plain name below.
    }
  }
  return /filename="([^"]*)"/i.exec(header)?.[1] ?? fallback;
}

/** The query of an export's options. */
function exportQuery(options: ExchangeExportOptions & { format?: string }): string {
  const query = new URLSearchParams();
  if (options.format !== undefined) query.set("format", options.format);
  if (options.annotations === false) query.set("annotations", "false");
  if (options.metadata === false) query.set("metadata", "false");
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}

/** What `GET /review/r/{id}` answers: the review, the pinned case document, and per file its pinned annotations. */
export interface ReviewView {
  /** The review, each file marked `changed` when the owner amended it after the review opened. */
  review: Review;
  /** The case document as pinned when the review opened. */
  case: Record<string, unknown> | null;
  /** Each file: its pin, its annotations (a blind reviewer's without the owner's conclusions, named in `withheld`), a signed image URL. */
  files: { fileId: string; version: number | null; sha256: string; changed: boolean; annotations: Record<string, unknown> | null; withheld?: string[]; imageUrl?: string }[];
}

/** The review worker's calls (docs/review.md); identity tokens only. */
export interface ReviewClient {
  /** `POST /review/cases/{uid}/{case}`: asks a reviewer of the owner's lab for a review. */
  request(uid: string, caseNumber: string, body: ReviewRequest): Promise<Review>;
  /** `GET /review/cases/{uid}/{case}`: the case's reviews, newest first. */
  ofCase(uid: string, caseNumber: string): Promise<Review[]>;
  /** `GET /review/inbox/{uid}`: the reviews assigned to the user, newest first. */
  inbox(uid: string): Promise<Review[]>;
  /** `GET /review/r/{id}`. */
  get(id: string): Promise<ReviewView>;
  /** `POST /review/r/{id}/conclusions`: the reviewer's conclusion on one file, once. */
  conclude(id: string, body: ConclusionRequest): Promise<Conclusion>;
  /** `POST /review/r/{id}/signatures`: signs one file's pinned annotations. */
  sign(id: string, body: SignatureRequest): Promise<ReviewSignature>;
  /** `DELETE /review/r/{id}`: cancels an open review (the owner). */
  cancel(id: string): Promise<Review>;
  /** `GET /review/r/{id}/verify`: each signature valid, stale or invalid. */
  verify(id: string): Promise<ReviewVerification>;
  /** `GET /review/keys`: the JWKS that verifies signatures outside the service. */
  keys(): Promise<{ keys: Record<string, unknown>[] }>;
}

/** The client {@link createClient} returns: one member per worker. */
export interface ServiceClient {
  /** `GET /health`. */
  health(): Promise<{ ok: true }>;
  /** The user worker. */
  user: UserClient;
  /** The data worker's documents. */
  data: DataClient;
  /** The audit endpoints. */
  audit: AuditClient;
  /** The image worker. */
  image: ImageClient;
  /** The keys worker: `GET /keys/{name}`, the value as text. */
  keys: { get(name: string): Promise<string> };
  /** The captcha worker: verifies a token (the answer says whether it passed). */
  captcha: { verify(token: string): Promise<CaptchaResult> };
  /** The PDF worker: renders the report of docs/report.md#request; the PDF's bytes. */
  pdf: { render(request: ReportInput): Promise<Uint8Array> };
  /** The exchange worker: exports, imports and confirmations over HTTP. */
  exchange: ExchangeClient;
  /** The review worker (identity tokens only). */
  review: ReviewClient;
}

type Credential = "user" | "data" | "keys" | "image" | "none";

/** A request's body: JSON, a form, or bytes of a media type. */
type SentBody = { json: unknown } | { form: FormData } | { raw: ExchangeUpload; contentType: string };

/** What the service writes on every stored entry, and refuses from clients (docs/api.md#append). */
const SERVICE_WRITTEN_FIELDS: readonly string[] = ["receivedAt", "seq", "prevHash", "hash"];

/** The entry as the service takes it: without the fields it writes itself. */
function entryToSend(entry: AuditEntry): Record<string, unknown> {
  if (entry["unreadable"] === true) {
    throw refusedBeforeSending("the entry is the stand-in of a stored entry that cannot be read (unreadable: true), not an entry to append", { field: "unreadable" });
  }
  const sent: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(entry)) if (!SERVICE_WRITTEN_FIELDS.includes(field)) sent[field] = value;
  return sent;
}

/** The query of the audit reads: the user and, when given, the range's days. */
function rangeQuery(userId: string, range: AuditRange): URLSearchParams {
  const query = new URLSearchParams({ userId: wellFormed(userId, "userId") });
  if (range.startDate !== undefined) query.set("startDate", range.startDate);
  if (range.endDate !== undefined) query.set("endDate", range.endDate);
  return query;
}

/**
 * Creates a client of the service at `baseUrl`.
 *
 * @example
 * ```ts
 * const client = createClient({ baseUrl: "http://localhost:8787", userKey: "…", dataKey: "…" });
 * const user = await client.user.get("u1");
 * ```
 */
export function createClient(options: ClientOptions): ServiceClient {
  const doFetch = options.fetch ?? ((request: Request) => fetch(request));
  const base = options.baseUrl.replace(/\/+$/, "");
  const workerUrl = (worker: WorkerName) => (options.workers?.[worker] ?? `${base}/${worker}`).replace(/\/+$/, "");

  const headersFor = async (credential: Credential, identity: boolean): Promise<Headers> => {
    const headers = new Headers();
    const key = credential === "user" ? options.userKey : credential === "data" ? options.dataKey : credential === "keys" ? options.keysKey : undefined;
    if (key !== undefined) headers.set("X-Custom-Auth-Key", key);
    if (credential === "image" && options.imagesToken !== undefined) headers.set("Authorization", `Bearer ${options.imagesToken}`);
    if (!identity) return headers;
    if (options.adminKey !== undefined) headers.set("X-Admin-Key", options.adminKey);
    const token = typeof options.identityToken === "function" ? await options.identityToken() : options.identityToken;
    if (token !== undefined && token !== "") headers.set("X-Identity-Token", token);
    return headers;
  };

  const send = (
    worker: WorkerName,
    credential: Credential,
    method: string,
    path: string,
    body?: SentBody,
    identity = true,
  ): Promise<Response> => sendTo(`${workerUrl(worker)}${path}`, credential, method, body, identity);
  const sendTo = async (
    url: string,
    credential: Credential,
    method: string,
    body?: SentBody,
    identity = true,
  ): Promise<Response> => {
    const headers = await headersFor(credential, identity);
    let payload: BodyInit | undefined;
    if (body !== undefined && "json" in body) {
      headers.set("Content-Type", "application/json");
      payload = JSON.stringify(body.json);
    } else if (body !== undefined && "raw" in body) {
      headers.set("Content-Type", body.contentType);
      payload = body.raw as BodyInit;
    } else if (body !== undefined) {
      payload = body.form;
    }
    // Never followed: fetch keeps custom headers (every key here) and re-sends bodies across origins.
    // A stream is sent as it is read (`duplex: "half"`, which fetch asks of a streamed body).
    const streamed = payload instanceof ReadableStream;
    const request = new Request(url, { method, headers, body: payload, redirect: "manual", ...(streamed ? { duplex: "half" } : {}) } as RequestInit);
    const response = await reading(`no answer from ${url}`, () => doFetch(request));
    if (response.ok) return response;
    if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
      await response.body?.cancel();
      const location = response.headers.get("Location");
      throw new ServiceClientError(response.status, "", undefined, `redirected${location === null ? "" : ` to ${location}`}; the client follows no redirects, which would carry its credentials (check baseUrl and workers)`);
    }
    const text = await reading(BROKE_OFF, () => textUpTo(response, MAX_ERROR_BODY_BYTES));
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the text is the body.
    }
    throw new ServiceClientError(response.status, parsed, retryAfterSeconds(response.headers.get("Retry-After"), Date.now()));
  };
  const json = async <T>(pending: Promise<Response>): Promise<T> => {
    const response = await pending;
    const text = await reading(BROKE_OFF, () => response.text());
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ServiceClientError(response.status, text.slice(0, MAX_ERROR_BODY_BYTES), undefined, "the answer is not JSON");
    }
  };
  const textOf = async (pending: Promise<Response>): Promise<string> => {
    const response = await pending;
    return await reading(BROKE_OFF, () => response.text());
  };
  const done = async (response: Promise<Response>): Promise<void> => {
    await (await response).body?.cancel();
  };
  const segment = pathSegment;
  const keyPath = (key: DataKey) => `/${(typeof key === "string" ? key.split("/") : [...key]).map((part) => segment(part, "key segment")).join("/")}`;

  const data: DataClient = {
    get: async <T>(key: DataKey) => {
      const stored = await json<T | []>(send("data", "data", "GET", keyPath(key)));
      // The service's answer for a missing document.
      return Array.isArray(stored) && stored.length === 0 ? undefined : stored as T;
    },
    put: async (key, value) => await done(send("data", "data", "PUT", keyPath(key), { json: value })),
    delete: async (key) => await done(send("data", "data", "DELETE", keyPath(key))),
    getCase: async (uid, caseNumber) => await data.get<CaseData>([uid, caseNumber, "data.json"]),
    putCase: async (uid, caseNumber, value) => await data.put([uid, caseNumber, "data.json"], value),
    history: async (key, options = {}) =>
      await json<KeyHistory & Partial<HistoryVerification>>(send("data", "data", "GET", `${keyPath(key)}?history${options.verify === true ? "&verify=true" : ""}`)),
    version: async <T>(key: DataKey, version: number) => await json<T>(send("data", "data", "GET", `${keyPath(key)}?version=${versionNumber(version)}`)),
    pruneHistories: async () => await json<HistoryPruneResult>(send("data", "data", "POST", "/history/prune")),
    versionBytes: async (key, version) => {
      const response = await send("data", "data", "GET", `${keyPath(key)}?version=${versionNumber(version)}`);
      return new Uint8Array(await reading(BROKE_OFF, () => response.arrayBuffer()));
    },
  };

  const fileOf = async (pending: Promise<Response>, fallback: string): Promise<ExchangeFile> => {
    const response = await pending;
    const body = response.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    return {
      fileName: attachmentName(response.headers.get("Content-Disposition"), fallback),
      contentType: response.headers.get("Content-Type") ?? "application/octet-stream",
      body,
      bytes: async () => new Uint8Array(await reading(BROKE_OFF, () => new Response(body).arrayBuffer())),
    };
  };
  const userPath = (uid: string) => `/${segment(uid, "uid")}`;
  const casePath = (uid: string, caseNumber: string) => `${userPath(uid)}/cases/${segment(caseNumber, "caseNumber")}`;
  const importQuery = (options: { overwrite?: boolean; fileName?: string; preview?: boolean }) => {
    const query = new URLSearchParams();
    if (options.preview === true) query.set("preview", "true");
    if (options.overwrite === true) query.set("overwrite", "true");
    if (options.fileName !== undefined) query.set("fileName", wellFormed(options.fileName, "fileName"));
    const text = query.toString();
    return text === "" ? "" : `?${text}`;
  };
  const exchange: ExchangeClient = {
    exportCase: async (uid, caseNumber, options = {}) => await fileOf(send("exchange", "data", "GET", `${casePath(uid, caseNumber)}${exportQuery(options)}`), `${caseNumber}-export.${options.format ?? "zip"}`),
    exportAllCases: async (uid, options = {}) => await fileOf(send("exchange", "data", "GET", `${userPath(uid)}/cases${exportQuery(options)}`), `all-cases-export.${options.format ?? "json"}`),
    importCase: async (uid, file, options = {}) =>
      await json<ImportResult>(send("exchange", "data", "POST", `${userPath(uid)}/imports${importQuery(options)}`, { raw: file, contentType: "application/zip" })),
    previewImport: async (uid, file, options = {}) =>
      await json<CaseImportPreview>(send("exchange", "data", "POST", `${userPath(uid)}/imports${importQuery({ ...options, preview: true })}`, { raw: file, contentType: "application/zip" })),
    exportConfirmations: async (uid, caseNumber) => await fileOf(send("exchange", "data", "GET", `${casePath(uid, caseNumber)}/confirmations`), `confirmation-data-${caseNumber}.json`),
    importConfirmations: async (uid, file, options = {}) =>
      await json<ConfirmationImportResult>(send("exchange", "data", "POST", `${userPath(uid)}/confirmations${importQuery(options)}`, { raw: file, contentType: "application/json" })),
    keys: async () => await json<{ keys: JsonWebKey[] }>(send("exchange", "none", "GET", "/keys", undefined, false)),
    exportSealedCase: async (uid, caseNumber, recipient) =>
      await fileOf(send("exchange", "data", "POST", `${casePath(uid, caseNumber)}/sealed`, { json: { recipient } }), `${caseNumber}-export.sealed`),
  };

  return {
    health: async () => await json<{ ok: true }>(sendTo(`${base}/health`, "none", "GET", undefined, false)),
    user: {
      list: async () => await json<UserList>(send("user", "user", "GET", "/")),
      get: async (uid) => await json<UserData>(send("user", "user", "GET", `/${segment(uid, "uid")}`)),
      put: async (uid, body) => await json<UserData>(send("user", "user", "PUT", `/${segment(uid, "uid")}`, { json: body })),
      delete: async (uid) => await json<UserDeletion>(send("user", "user", "DELETE", `/${segment(uid, "uid")}`)),
      addCases: async (uid, cases) => await json<UserData>(send("user", "user", "PUT", `/${segment(uid, "uid")}/cases`, { json: { cases } })),
      removeCases: async (uid, caseNumbers) => await json<UserData>(send("user", "user", "DELETE", `/${segment(uid, "uid")}/cases`, { json: { casesToDelete: caseNumbers } })),
      holds: async (uid) => await json<LegalHolds>(send("user", "user", "GET", `/${segment(uid, "uid")}/holds`)),
      placeHold: async (uid, caseNumber, reason) => await json<LegalHolds>(send("user", "user", "PUT", `/${segment(uid, "uid")}/holds`, { json: { caseNumber, reason } })),
      liftHold: async (uid, caseNumber) => await json<LegalHolds>(send("user", "user", "DELETE", `/${segment(uid, "uid")}/holds`, { json: { caseNumber } })),
    },
    data,
    audit: {
      append: async (entry) => await json<AuditAppended>(send("audit", "data", "POST", `/audit?${rangeQuery(entry.userId, {})}`, { json: entryToSend(entry) })),
      read: async (userId, range = {}) => await json<AuditEntries>(send("audit", "data", "GET", `/audit?${rangeQuery(userId, range)}`)),
      verify: async (userId, range = {}) => await json<AuditVerification>(send("audit", "data", "GET", `/audit/verify?${rangeQuery(userId, range)}`)),
    },
    image: {
      upload: async (file, filename) => {
        const form = new FormData();
        form.set("file", file, filename ?? (file instanceof File ? file.name : "image"));
        return (await json<{ result: UploadedImage }>(send("image", "image", "POST", "", { form }))).result;
      },
      sign: async (deliveryUrl) => await textOf(send("image", "image", "GET", `/${segment(deliveryUrl, "deliveryUrl")}`)),
      delete: async (imageId, deleteOptions = {}) =>
        await done(send("image", "image", "DELETE", `/${segment(imageId, "imageId")}${deleteOptions.owner === undefined ? "" : `?${new URLSearchParams({ owner: wellFormed(deleteOptions.owner, "owner") })}`}`)),
    },
    keys: { get: async (name) => await textOf(send("keys", "keys", "GET", `/${segment(name, "keyName")}`)) },
    captcha: { verify: async (token) => await json<CaptchaResult>(send("captcha", "none", "POST", "", { json: { "captcha-response": token } }, false)) },
    pdf: {
      render: async (request) => {
        const response = await send("pdf", "none", "POST", "", { json: request });
        return new Uint8Array(await reading(BROKE_OFF, () => response.arrayBuffer()));
      },
    },
    exchange,
    review: {
      request: async (uid, caseNumber, body) => await json<Review>(send("review", "none", "POST", `/cases/${segment(uid, "uid")}/${segment(caseNumber, "caseNumber")}`, { json: body })),
      ofCase: async (uid, caseNumber) => (await json<{ reviews: Review[] }>(send("review", "none", "GET", `/cases/${segment(uid, "uid")}/${segment(caseNumber, "caseNumber")}`))).reviews,
      inbox: async (uid) => (await json<{ reviews: Review[] }>(send("review", "none", "GET", `/inbox/${segment(uid, "uid")}`))).reviews,
      get: async (id) => await json<ReviewView>(send("review", "none", "GET", `/r/${segment(id, "id")}`)),
      conclude: async (id, body) => await json<Conclusion>(send("review", "none", "POST", `/r/${segment(id, "id")}/conclusions`, { json: body })),
      sign: async (id, body) => await json<ReviewSignature>(send("review", "none", "POST", `/r/${segment(id, "id")}/signatures`, { json: body })),
      cancel: async (id) => await json<Review>(send("review", "none", "DELETE", `/r/${segment(id, "id")}`)),
      verify: async (id) => await json<ReviewVerification>(send("review", "none", "GET", `/r/${segment(id, "id")}/verify`)),
      keys: async () => await json<{ keys: Record<string, unknown>[] }>(send("review", "none", "GET", "/keys", undefined, false)),
    },
  };
}
