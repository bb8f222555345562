/**
 * @module
 * The exchange worker (docs/exchange.md#over-http): a user's cases exported (ZIP, JSON, CSV; every
 * case as JSON or XLSX), case packages imported as read-only cases, and confirmations both ways,
 * through the service itself, so the signing key never leaves the server. The same functions as
 * the `export` and `import` commands (`../exchange/`), with the data worker's credential
 * (`R2_KEY_SECRET`; in identity mode the token's user acts only on their own uid). A ZIP export
 * is streamed as it is made; a package is kept in a store in chunks while it arrives, then read
 * in ranges, so memory follows the largest image, not the case. A case is also exported sealed
 * for a peer's public key, and sealed packages for this service's `EXCHANGE_DECRYPTION_KEY`
 * import like ZIPs (docs/exchange.md#sealed-packages); `GET /keys` serves the public keys.
 */
import * as z from "zod";
import { queryFlag } from "../schemas/query-flag.ts";
import type { Context, TypedResponse } from "hono";
import type { JSONParsed } from "hono/utils/types";
import { createRoute } from "../http/openapi-app.ts";
import { tagged } from "../http/openapi-tags.ts";
import type { BlobStore, Clock, ImageHost, KvStore } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { authKeyCheck } from "../http/auth.ts";
import { type AccessControl, accessControl, protect, requireOwner } from "../http/access.ts";
import { keyedSecurity } from "../http/credentials-doc.ts";
import { answerJson, answerWith, createWorkerApp, errorResponses, methodNotAllowed, routePathAfterMount, type WorkerApp, type WorkerEnv } from "../http/worker-app.ts";
import { failedBodyRead, readQuery, refuseContentEncoding } from "../http/body.ts";
import { declaresMoreThan, limitBody } from "../http/limits.ts";
import { routeFor } from "../rate-limit/rules.ts";
import { decodeSegment } from "../storage/keys.ts";
import { ServiceError } from "../errors.ts";
import { auditKeys } from "../audit/signing-keys.ts";
import {
  exportAllCases,
  exportCase,
  exportCaseZip,
  exchangeKeySet,
  type ConfirmationExport,
  type ExchangeStore,
  exportConfirmations,
  importCase,
  importConfirmations,
  type ImportResult,
  isSealedPackage,
  type OpeningKey,
  openingKeyOf,
  openSealedPackage,
  portsExchangeStore,
  previewCaseImport,
  recipientKeyOf,
  sealPackage,
} from "../exchange/mod.ts";
import { jwkListOf } from "../config/variables.ts";
import { createKeyHistories, type KeyHistories } from "../history/mod.ts";
import type { ExchangeJwk } from "../exchange/package/signature.ts";
import { deliveredImageReader } from "../exchange/delivered-images.ts";
import { type ExchangeSignatures, exchangeSignatures } from "../exchange/signing-config.ts";
import { spoolArchive, type SpooledArchive, SpoolLimitError } from "../exchange/package/spooled-archive.ts";
import {
  CaseImportPreviewSchema,
  ConfirmationExportSchema,
  ConfirmationImportResultSchema,
  ImportResultSchema,
} from "../schemas/exchange.ts";

/**
 * Opens a package that is not a plain ZIP (a sealed package for this service, docs/exchange.md#over-http)
 * into the ZIP it holds, as it streams.
 */
export interface PackageOpener {
  /** Whether the package's first bytes (at least 16, fewer only when the body is shorter) are this opener's. */
  recognises(head: Uint8Array): boolean;
  /** The ZIP inside `body` (its head included), as a stream; a package it cannot open throws a `ServiceError` (400 naming why). */
  open(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> | Promise<ReadableStream<Uint8Array>>;
}

/** Ports and configuration of the exchange worker. */
export interface ExchangeWorkerDeps {
  /** Cases and annotations. */
  data: BlobStore;
  /** User records (exporter names, `readOnlyCases`). */
  users: KvStore;
  /** Audit days: exports and imports write their entries there. */
  audit: BlobStore;
  /** The image store (`images/{id}`) of the local image host. */
  images: BlobStore;
  /** Where imports store again the images of a package. */
  imageHost: ImageHost;
  /** Dates exports, imports and audit entries. */
  clock: Clock;
  /** The service configuration: credentials, signatures (`EXPORT_*`), `MAX_IMPORT_BYTES`, `MAX_IMAGE_BYTES`, `MAX_JSON_BYTES`. */
  config: Pick<
    ServiceConfig,
    | "allowedOrigin"
    | "r2KeySecret"
    | "identity"
    | "adminAuth"
    | "rateLimits"
    | "maxJsonBytes"
    | "maxImageBytes"
    | "maxImportBytes"
    | "maxAuditDayBytes"
    | "exportSigningKey"
    | "exportVerifyKeys"
    | "exportRequireSignature"
    | "exchangeDecryptionKey"
    | "auditSigningKey"
    | "auditVerifyKeys"
    | "imageHost"
    | "imageDeliveryHost"
    | "accountHash"
    | "imageUpstreamTimeoutMs"
    | "dataHistory"
  >;
  /**
   * The histories of the data keys an import writes (docs/storage.md#record-history); default
   * over `data` unless `DATA_HISTORY=off`. `createService` passes the data worker's; internal.
   *
   * @ignore
   */
  histories?: KeyHistories | undefined;
  /** Where an arriving package is kept while it is imported (`exchange-spool/`); default the image store. */
  spool?: BlobStore | undefined;
  /** Openers of packages that are not a plain ZIP (sealed packages). */
  openers?: readonly PackageOpener[] | undefined;
  /**
   * Identity, admin key and rate limits; default from `config` over the audit store.
   * Shared by the workers `createService` mounts together; internal.
   *
   * @ignore
   */
  access?: AccessControl;
  /** SHA-256 of audit entry hashes (a runtime's native one); default the core's JavaScript one. */
  auditHash?: ((text: string) => string) | undefined;
}

const MEDIA = {
  zip: "application/zip",
  json: "application/json; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  sealed: "application/octet-stream",
} as const;

const segment = (description: string) => z.string().describe(`${description}; one percent-encoded path segment`);
const UidParams = z.object({ userUid: segment("The user acting (their own uid in identity mode)") });
const CaseParams = UidParams.extend({ caseNumber: segment("The case number") });
const CaseExportQuery = z.object({
  format: z.enum(["zip", "json", "csv"]).optional().describe("zip (default: the data file, the images, README.txt, READ_ONLY_INSTRUCTIONS.txt and the signed FORENSIC_MANIFEST.json), json or csv"),
  annotations: queryFlag("`false`: files without their annotations (the command's --no-annotations)"),
  metadata: queryFlag("`false`: without the summary block (the command's --no-metadata)"),
});
const AllCasesQuery = z.object({
  format: z.enum(["json", "xlsx"]).optional().describe("json (default) or xlsx"),
  annotations: queryFlag("`false`: files without their annotations"),
  metadata: queryFlag("`false`: without the summary blocks"),
});
const ImportQuery = z.object({
  preview: queryFlag("`true`: check the package and answer what it holds; nothing is written"),
  overwrite: queryFlag("`true`: replace a read-only case of the same number (else 409)"),
  fileName: z.string().max(255).optional().describe("The package's file name, recorded in the audit entry"),
});
const ConfirmationImportQuery = z.object({ fileName: z.string().max(255).optional().describe("The file's name, recorded in the audit entry") });
const binary = (description: string) => z.string().meta({ format: "binary" }).describe(description);
const attachment = { "Content-Disposition": { description: "`attachment` with the file's name", schema: { type: "string" as const } } };
const security = keyedSecurity("dataKey");
const ImportAnswerSchema = z.union([ImportResultSchema, CaseImportPreviewSchema]);

const exportCaseRoute = createRoute({
  tags: tagged("exchange"),
  method: "get",
  path: "/{userUid}/cases/{caseNumber}",
  summary: "Export a case: ZIP (streamed, manifest signed with EXPORT_SIGNING_KEY), JSON or CSV",
  operationId: "exportCase",
  security,
  documented: { request: { params: CaseParams, query: CaseExportQuery } },
  responses: {
    200: {
      description: "The export, as an attachment: the same bytes the `export` command writes but for its dates and signature",
      headers: attachment,
      content: { [MEDIA.zip]: { schema: binary("The case package") }, [MEDIA.json]: { schema: z.unknown() }, [MEDIA.csv]: { schema: z.string() } },
    },
    ...errorResponses({ 400: "Bad uid, case number or query", 403: "Bad key, or another user's uid", 404: "No such case (or a file's image is missing)" }),
  },
});
const exportAllRoute = createRoute({
  tags: tagged("exchange"),
  method: "get",
  path: "/{userUid}/cases",
  summary: "Export every case of the user: JSON or an XLSX workbook",
  operationId: "exportAllCases",
  security,
  documented: { request: { params: UidParams, query: AllCasesQuery } },
  responses: {
    200: { description: "The export, as an attachment", headers: attachment, content: { [MEDIA.json]: { schema: z.unknown() }, [MEDIA.xlsx]: { schema: binary("The workbook") } } },
    ...errorResponses({ 400: "Bad uid or query", 403: "Bad key, or another user's uid", 404: "No such user" }),
  },
});
const importRoute = createRoute({
  tags: tagged("exchange"),
  method: "post",
  path: "/{userUid}/imports",
  summary: "Import a case package (a ZIP export, or a package sealed for this service) as a read-only case, or preview it",
  description: "Answers what `import --json` prints (`?preview=true`: the preview). A package refused is a 4xx naming why, with the import result as `details.result`, and nothing is written. A sealed package (docs/exchange.md#sealed-packages) is opened with EXCHANGE_DECRYPTION_KEY; sealed for another key, it is a 400 naming the thumbprint it was sealed for.",
  operationId: "importCase",
  security,
  documented: { request: { params: UidParams, query: ImportQuery, body: { required: true, content: { [MEDIA.zip]: { schema: binary("The case package") } } } } },
  responses: {
    200: { description: "The import result, or the preview", content: { "application/json": { schema: ImportAnswerSchema } } },
    ...errorResponses({
      400: "A package refused: not a ZIP, tampered, unsigned while signatures are required, a ZIP bomb, the importer's own case, sealed for another key or altered",
      403: "Bad key, or another user's uid",
      409: "A read-only case of that number exists (import with overwrite=true), or a case document of the importer's own is in the way",
      413: "Larger than MAX_IMPORT_BYTES",
    }),
  },
});
const PublicJwk = z.record(z.string(), z.unknown()).meta({ id: "PublicJwk" }).describe("A public JWK: EC P-256 (`kty`, `crv`, `x`, `y`) or RSA of 2048 to 8192 bits (`kty`, `n`, `e`)");
const SealedExportBody = z.object({ recipient: PublicJwk.describe("The public key to seal for: the `use: \"enc\"` key of the recipient service's `GET /exchange/keys`") });
const KeySetSchema = z.object({ keys: z.array(PublicJwk) }).meta({ id: "ExchangeKeySet" });
const keysRoute = createRoute({
  tags: tagged("exchange"),
  method: "get",
  path: "/keys",
  summary: "The public halves of EXPORT_SIGNING_KEY (use sig) and EXCHANGE_DECRYPTION_KEY (use enc), as a JWKS; no credential",
  description: "What a peer lab needs to check this service's signed packages and to seal packages for it. Never a private member; a shared-secret signing key is not listed.",
  operationId: "exchangeKeys",
  security: [],
  documented: {},
  responses: {
    200: { description: "The JWKS", content: { "application/json": { schema: KeySetSchema } } },
    ...errorResponses({}),
  },
});
const sealedExportRoute = createRoute({
  tags: tagged("exchange"),
  method: "post",
  path: "/{userUid}/cases/{caseNumber}/sealed",
  summary: "Export a case's ZIP sealed for a recipient's public key (docs/exchange.md#sealed-packages), streamed",
  operationId: "exportSealedCase",
  security,
  documented: { request: { params: CaseParams, body: { required: true, content: { "application/json": { schema: SealedExportBody } } } } },
  responses: {
    200: { description: "The sealed package, as an attachment", headers: attachment, content: { [MEDIA.sealed]: { schema: binary("The sealed case package") } } },
    ...errorResponses({ 400: "Bad uid, case number or body; a recipient key that cannot seal", 403: "Bad key, or another user's uid", 404: "No such case (or a file's image is missing)", 413: "Larger than MAX_JSON_BYTES" }),
  },
});
const exportConfirmationsRoute = createRoute({
  tags: tagged("exchange"),
  method: "get",
  path: "/{userUid}/cases/{caseNumber}/confirmations",
  summary: "Export the confirmations of a read-only case (what the reviewer sends back), signed with EXPORT_SIGNING_KEY",
  operationId: "exportConfirmations",
  security,
  documented: { request: { params: CaseParams } },
  responses: {
    200: { description: "The confirmation export, as an attachment", headers: attachment, content: { [MEDIA.json]: { schema: ConfirmationExportSchema } } },
    ...errorResponses({ 400: "No confirmations to export", 403: "Bad key, another user's uid, or not a read-only case", 404: "No such user or case" }),
  },
});
const importConfirmationsRoute = createRoute({
  tags: tagged("exchange"),
  method: "post",
  path: "/{userUid}/confirmations",
  summary: "Import a reviewer's confirmation export into the original case",
  operationId: "importConfirmations",
  security,
  documented: { request: { params: UidParams, query: ConfirmationImportQuery, body: { required: true, content: { "application/json": { schema: ConfirmationExportSchema } } } } },
  responses: {
    200: { description: "The confirmation import result (per-image refusals in `errors`)", content: { "application/json": { schema: ConfirmationImportResultSchema } } },
    ...errorResponses({ 400: "The file refused: not a confirmation export, changed after export, unsigned while required, not the importer's case", 403: "Bad key, or another user's uid", 413: "Larger than MAX_JSON_BYTES" }),
  },
});

/** A file name for `Content-Disposition`: plain ASCII, and the UTF-8 name beside it. */
function attachmentHeader(fileName: string): string {
  const plain = fileName.replace(/[^A-Za-z0-9._-]/g, "_");
  return `attachment; filename="${plain}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/** The uid (and case) of the request's path, decoded once and checked as storage key segments. */
function pathOf(c: Context<WorkerEnv>): { uid: string; caseNumber: string | undefined } {
  const parts = routePathAfterMount(c).split("/");
  const uid = decodeSegment(parts[0] ?? "", "userUid");
  const caseNumber = parts[1] === "cases" && parts[2] !== undefined ? decodeSegment(parts[2], "caseNumber") : undefined;
  return { uid, caseNumber };
}

/** The uid of the path for the admin's audit entry; undefined when unreadable. */
function uidOf(c: Context<WorkerEnv>): string | undefined {
  try {
    return pathOf(c).uid;
  } catch {
    return undefined;
  }
}

const day = (date: Date): string => date.toISOString().slice(0, 10).replaceAll("-", "");

/** An import refused, as the error body of its `errorCode`, the result in `details.result`. */
function refusalOf(result: ImportResult): ServiceError {
  const message = result.errors?.join("; ") || "The package was refused";
  const details = { result };
  switch (result.errorCode) {
    case "CONFLICT":
      return ServiceError.conflict(message, details);
    case "NOT_FOUND":
      return ServiceError.notFound(message, details);
    case "FORBIDDEN":
      return ServiceError.forbidden(message, details);
    case "SERVER_ERROR":
      return new ServiceError("failed", message, details);
    default:
      return ServiceError.validation(message, details);
  }
}

/** The first bytes of a body that look like a ZIP: a local file header, or the end record of an empty archive. */
const isZipHead = (head: Uint8Array): boolean => head[0] === 0x50 && head[1] === 0x4b && (head[2] === 0x03 || head[2] === 0x05) && (head[3] === 0x04 || head[3] === 0x06);
const HEAD_BYTES = 16;

/** Reads the body's first bytes and answers them with a stream of the whole body (those bytes first). */
async function peek(body: ReadableStream<Uint8Array>): Promise<{ head: Uint8Array; body: ReadableStream<Uint8Array> }> {
  const reader = body.getReader();
  const pieces: Uint8Array[] = [];
  let length = 0;
  let ended = false;
  while (length < HEAD_BYTES) {
    const { done, value } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    pieces.push(value);
    length += value.length;
  }
  const head = new Uint8Array(length);
  let at = 0;
  for (const piece of pieces) {
    head.set(piece, at);
    at += piece.length;
  }
  let sent = false;
  const whole = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sent) {
        sent = true;
        if (head.length > 0) return controller.enqueue(head);
      }
      if (ended) return controller.close();
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
  return { head, body: whole };
}

/** Whether the request is `POST /{uid}/cases/{case}/sealed`. */
const isSealedExport = (c: Context<WorkerEnv>): boolean => c.req.method === "POST" && /^[^/]+\/cases\/[^/]+\/sealed$/.test(routePathAfterMount(c));

/** The exchange worker's app. */
export type ExchangeWorkerApp = ReturnType<typeof exchangeWorker>;

/**
 * The archive with its first chunk already made, so that a missing case is a 404 and not a broken
 * download; cancelled by the client, the archive stops where it is (its audit entry says so).
 */
async function startedArchive(archive: ReadableStream<Uint8Array>): Promise<ReadableStream<Uint8Array>> {
  const reader = archive.getReader();
  const first = await reader.read();
  let sent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sent) {
        sent = true;
        if (!first.done) return controller.enqueue(first.value);
      }
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}

/** Creates the exchange worker: exports, imports and confirmations of `/{userUid}/…`. */
export function createExchangeWorker(deps: ExchangeWorkerDeps): WorkerApp {
  return exchangeWorker(deps);
}

/** The exchange worker, its type inferred from its routes. */
function exchangeWorker(deps: ExchangeWorkerDeps) {
  const { config } = deps;
  const app = createWorkerApp({ allowedOrigin: config.allowedOrigin, methods: ["GET", "POST"] });
  const access = deps.access ?? accessControl(config, { audit: deps.audit, clock: deps.clock, auditHash: deps.auditHash });
  protect(app, access, {
    status: 403,
    // A sealed export is a POST that exports.
    route: (c) => isSealedExport(c) ? "exchange.export" : routeFor(c.req.method, "exchange.export", "exchange.import"),
    credential: authKeyCheck({ keys: [config.r2KeySecret], status: 403, variable: "R2_KEY_SECRET" }),
    targetOf: uidOf,
    // The public keys are for anyone: a peer needs them before it holds any credential.
    isPublic: (c) => (c.req.method === "GET" || c.req.method === "HEAD") && routePathAfterMount(c) === "keys",
  });
  const store: ExchangeStore = portsExchangeStore({
    data: deps.data,
    users: deps.users,
    audit: deps.audit,
    images: deps.images,
    clock: deps.clock,
    imageHost: deps.imageHost,
    readImage: deliveredImageReader(config, deps.imageHost),
    auditChain: { signer: auditKeys(config).signer, hash: deps.auditHash, maxDayBytes: config.maxAuditDayBytes },
    histories: config.dataHistory === "off" ? undefined : deps.histories ?? createKeyHistories(deps.data, { clock: deps.clock, hash: deps.auditHash }),
  });
  const spool = deps.spool ?? deps.images;
  // Read once, when first needed: a key that does not import fails sealed exchanges only.
  let openingKey: Promise<OpeningKey | undefined> | undefined;
  const openingKeyFor = () =>
    openingKey ??= config.exchangeDecryptionKey === undefined
      ? Promise.resolve(undefined)
      // One JWK, or a list of one (as EXPORT_SIGNING_KEY is read).
      : Promise.resolve(jwkListOf(config.exchangeDecryptionKey)?.[0]).then(openingKeyOf).catch(() => {
        throw ServiceError.server("EXCHANGE_DECRYPTION_KEY does not import: sealed packages cannot be opened");
      });
  const sealedOpener: PackageOpener = {
    recognises: isSealedPackage,
    open: async (body) => {
      const key = await openingKeyFor();
      if (key === undefined) {
        await body.cancel().catch(() => undefined);
        throw ServiceError.validation("This service has no EXCHANGE_DECRYPTION_KEY: it cannot open a sealed package");
      }
      return (await openSealedPackage(body, key)).body;
    },
  };
  const openers = [...(deps.openers ?? []), sealedOpener];
  // Read once, when first needed: a key that cannot sign fails the exchanges, not the other workers.
  let signatures: Promise<ExchangeSignatures> | undefined;
  const signaturesOf = () =>
    signatures ??= exchangeSignatures({ signingKey: config.exportSigningKey, verifyKeys: config.exportVerifyKeys, requireSignature: config.exportRequireSignature });

  /** The path's uid (and case), the token's own in identity mode. */
  const ownPath = async (c: Context<WorkerEnv>) => {
    const path = pathOf(c);
    await requireOwner(c, access, path.uid);
    return path;
  };
  const options = (query: { annotations?: "true" | "false" | undefined; metadata?: "true" | "false" | undefined }) => ({
    includeAnnotations: query.annotations !== "false",
    includeMetadata: query.metadata !== "false",
  });
  const attached = (c: Context<WorkerEnv>, body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null, contentType: string, fileName: string) =>
    answerWith(c, body, 200, contentType, { "Content-Disposition": attachmentHeader(fileName), "Cache-Control": "no-store" });

  const exportOne = async (c: Context<WorkerEnv>) => {
    const { uid, caseNumber } = await ownPath(c);
    const query = readQuery(c, CaseExportQuery);
    const format = query.format ?? "zip";
    if (format !== "zip") {
      const file = await exportCase(store, uid, caseNumber!, format, { ...options(query) });
      return attached(c, file.bytes, MEDIA[format], file.fileName);
    }
    const fileName = `${caseNumber}-export-${day(store.now())}.zip`;
    if (c.req.method === "HEAD") {
      // The headers a GET would send, without making the archive.
      const document = await store.getCase(uid, caseNumber!);
      if (document === null || (Array.isArray(document) && document.length === 0)) throw ServiceError.notFound(`Case ${caseNumber} of user ${uid} not found`);
      return attached(c, null, MEDIA.zip, fileName);
    }
    const { signer } = await signaturesOf();
    const body = await startedArchive(exportCaseZip(store, uid, caseNumber!, { ...options(query), signer, fileName }));
    return attached(c, body, MEDIA.zip, fileName);
  };

  const exportAll = async (c: Context<WorkerEnv>) => {
    const { uid } = await ownPath(c);
    const query = readQuery(c, AllCasesQuery);
    const format = query.format ?? "json";
    const file = await exportAllCases(store, uid, format, { ...options(query) });
    return attached(c, file.bytes, MEDIA[format], file.fileName);
  };

  /** The request's package, kept in the spool store (opened first when it is sealed). */
  const receivePackage = async (c: Context<WorkerEnv>): Promise<SpooledArchive> => {
    const raw = c.req.raw;
    const max = config.maxImportBytes;
    // Refused before a byte is read when its length says so; a streamed body when it passes the limit.
    if (declaresMoreThan(raw.headers, max)) throw ServiceError.tooLarge(max);
    refuseContentEncoding(c.req.header("content-encoding"));
    if (raw.body === null) throw ServiceError.validation("The request has no body: send the case package (a ZIP export)");
    let received = 0;
    const counted = raw.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.length;
        if (received > max) throw new SpoolLimitError(max);
        controller.enqueue(chunk);
      },
    }));
    // What the body's failure means to the client: too large, or a body that broke off.
    const failure = (err: unknown): never => {
      if (err instanceof SpoolLimitError) throw ServiceError.tooLarge(max);
      if (err instanceof ServiceError) throw err;
      return failedBodyRead(err);
    };
    const { head, body } = await peek(counted).catch(failure);
    const opener = openers.find((candidate) => candidate.recognises(head));
    if (opener === undefined && !isZipHead(head)) {
      await body.cancel().catch(() => undefined);
      throw ServiceError.validation(head.length === 0 ? "The request body is empty: send the case package (a ZIP export)" : "The body is not a ZIP case package (nor a sealed package this service can open)");
    }
    // On a failure nothing is kept (spoolArchive removes what it stored); an opener's refusal is the answer.
    return await Promise.resolve(opener === undefined ? body : opener.open(body)).then((zip) => spoolArchive(spool, zip, max)).catch(failure);
  };

  /** `EXPORT_SIGNING_KEY` as the JWK it holds, for the key set. */
  const signingJwk = (): ExchangeJwk | undefined => {
    const list = config.exportSigningKey === undefined ? undefined : jwkListOf(config.exportSigningKey);
    return list?.length === 1 ? list[0] as ExchangeJwk : undefined;
  };

  const keySet = async (c: Context<WorkerEnv>) => {
    return answerJson(c, await exchangeKeySet({ signingKey: signingJwk(), openingKey: await openingKeyFor() }), 200);
  };

  const exportSealed = async (c: Context<WorkerEnv>) => {
    const { uid, caseNumber } = await ownPath(c);
    refuseContentEncoding(c.req.header("content-encoding"));
    const text = await c.req.text().catch(failedBodyRead);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw ServiceError.validation("The body is not JSON: send {\"recipient\": <public JWK>}", { field: "recipient" });
    }
    const recipientJwk = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as { recipient?: unknown }).recipient : undefined;
    if (recipientJwk === undefined) throw ServiceError.validation("The body needs \"recipient\": the public JWK to seal for", { field: "recipient" });
    const recipient = await recipientKeyOf(recipientJwk);
    const fileName = `${caseNumber}-export-${day(store.now())}.sealed`;
    const { signer } = await signaturesOf();
    const zip = await startedArchive(exportCaseZip(store, uid, caseNumber!, { signer, fileName: fileName.replace(/\.sealed$/, ".zip") }));
    return attached(c, await sealPackage(zip, recipient), MEDIA.sealed, fileName);
  };

  const importPackage = async (c: Context<WorkerEnv>) => {
    const { uid } = await ownPath(c);
    const query = readQuery(c, ImportQuery);
    const { verification } = await signaturesOf();
    const settings = { overwriteExisting: query.overwrite === "true", verification, maxImageBytes: config.maxImageBytes };
    const archive = await receivePackage(c);
    try {
      if (query.preview === "true") return answerJson(c, await previewCaseImport(archive, { store, importerUid: uid, ...settings }), 200);
      const result = await importCase(store, archive, uid, { ...settings, fileName: query.fileName });
      if (!result.success) throw refusalOf(result);
      return answerJson(c, result, 200);
    } finally {
      await archive.discard();
    }
  };

  const exportConfirmationFile = async (c: Context<WorkerEnv>) => {
    const { uid, caseNumber } = await ownPath(c);
    const { signer } = await signaturesOf();
    const file = await exportConfirmations(store, uid, caseNumber!, { signer });
    // The file's bytes as exported (its hash covers them); to `hc` they are the export's JSON.
    return attached(c, file.bytes, MEDIA.json, file.fileName) as unknown as TypedResponse<JSONParsed<ConfirmationExport>, 200, "json">;
  };

  const importConfirmationFile = async (c: Context<WorkerEnv>) => {
    const { uid } = await ownPath(c);
    const query = readQuery(c, ConfirmationImportQuery);
    refuseContentEncoding(c.req.header("content-encoding"));
    const bytes = new Uint8Array(await c.req.arrayBuffer().catch(failedBodyRead));
    const { verification } = await signaturesOf();
    const result = await importConfirmations(store, uid, bytes, { fileName: query.fileName, verification });
    // Refused whole (nothing confirmed): the error body, the result in its details.
    if (!result.success && result.imagesUpdated === 0) throw ServiceError.validation(result.errors?.join("; ") || "The confirmation file was refused", { result });
    return answerJson(c, result, 200);
  };

  // GET /keys is answered before the routing: a static segment beside `/{userUid}/...` of the same
  // method would put every request of the service on Hono's slower trie router. It is documented as a route.
  app.openAPIRegistry.registerPath(keysRoute);
  app.use("*", async (c, next) => {
    if (routePathAfterMount(c) !== "keys" || c.req.method === "OPTIONS") return await next();
    if (c.req.method !== "GET" && c.req.method !== "HEAD") return methodNotAllowed(["GET"])(c, next);
    return await keySet(c);
  });
  const routed = app
    .openapi({ ...sealedExportRoute, middleware: limitBody(config.maxJsonBytes) }, (c) => exportSealed(c))
    .openapi(exportAllRoute, (c) => exportAll(c))
    .openapi(exportCaseRoute, (c) => exportOne(c))
    .openapi(exportConfirmationsRoute, (c) => exportConfirmationFile(c))
    .openapi(importRoute, (c) => importPackage(c))
    .openapi({ ...importConfirmationsRoute, middleware: limitBody(config.maxJsonBytes) }, (c) => importConfirmationFile(c));
  // A known path asked with another method: 405 with Allow, not the router's 404.
  for (const [path, method] of [["/:userUid/cases/:caseNumber/sealed", "POST"], ["/:userUid/cases", "GET"], ["/:userUid/cases/:caseNumber", "GET"], ["/:userUid/cases/:caseNumber/confirmations", "GET"], ["/:userUid/imports", "POST"], ["/:userUid/confirmations", "POST"]] as const) {
    app.all(path, methodNotAllowed([method]));
  }
  return routed;
}
