/**
 * @module
 * The data worker (docs/api.md#data-worker): JSON documents in the data store under `{name}.json`, plus
 * the audit endpoints (docs/api.md#audit). Keys arrive percent-encoded per segment and are decoded
 * once by the key builder.
 */
import * as z from "zod";
import type { Context, TypedResponse } from "hono";
import type { JSONValue } from "hono/utils/types";
import { createRoute } from "../http/openapi-app.ts";
import { tagged } from "../http/openapi-tags.ts";
import type { BlobStore, Clock, KvStore } from "../ports.ts";
import { type KeptUserData, type UserRecords, userRecords } from "../users/user-records.ts";
import { limitsFor } from "../users/limits.ts";
import { storedCaseNumbers } from "../cases/stored-cases.ts";
import { KeyedMutex } from "../storage/keyed-mutex.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { SuccessSchema } from "../schemas/error.ts";
import { CaseDataSchema } from "../schemas/case.ts";
import { AnnotationDataSchema } from "../schemas/annotation.ts";
import { readJsonText } from "../http/body.ts";
import { authKeyCheck } from "../http/auth.ts";
import { limitBody } from "../http/limits.ts";
import { ServiceError } from "../errors.ts";
import {
  answerJson,
  answerJsonText,
  answerWith,
  createWorkerApp,
  errorResponses,
  methodNotAllowed,
  routePathAfterMount,
  type WorkerEnv,
} from "../http/worker-app.ts";
import type { WorkerApp } from "../http/worker-app.ts";
import { keyFromRawPath } from "../storage/keys.ts";
import { registerAuditRoutes } from "./audit-routes.ts";
import { routeFor } from "../rate-limit/rules.ts";
import { type AccessControl, accessControl, protect, recordEvent, requestFacts, requireOwner } from "../http/access.ts";
import { actorOf } from "../http/actor.ts";
import { keyedSecurity } from "../http/credentials-doc.ts";
import { legalHoldStore, refuseHeldKey } from "../users/legal-holds.ts";
import { pruneRetainedHistories } from "../users/history-retention.ts";
import { PruneResultSchema } from "../schemas/retention.ts";
import { requireAdministrator } from "../http/administrator.ts";
import { createKeyHistories, type KeyHistories } from "../history/mod.ts";
import { HistoryQuerySchema, KeyHistorySchema } from "../schemas/history.ts";
import { type BackupPorts, registerBackupRoutes } from "./backup-routes.ts";

/** Ports and configuration of the data worker. */
export interface DataWorkerDeps {
  /** The data store (cases, annotations). */
  blobs: BlobStore;
  /** The audit store, shared with the audit worker. */
  audit: BlobStore;
  /** Dates new audit entries and picks today's audit day (UTC). */
  clock: Clock;
  /** The service configuration (`R2_KEY_SECRET`, `ALLOWED_ORIGIN`, `MAX_JSON_BYTES`, `MAX_AUDIT_ENTRY_BYTES`). */
  config: Pick<ServiceConfig, "allowedOrigin" | "r2KeySecret" | "maxJsonBytes" | "maxAuditEntryBytes" | "maxAuditDayBytes" | "limits" | "demoLimits" | "selfRegistration" | "identity" | "adminAuth" | "rateLimits"> & Partial<Pick<ServiceConfig, "dataHistory" | "historyRetentionDays" | "exportSigningKey" | "exportVerifyKeys" | "exportRequireSignature" | "auditSigningKey" | "auditVerifyKeys">>;
  /**
   * The user records; when given, a case document may list at most the owner's `maxFilesPerCase`
   * files, and a key under a case on legal hold is not deleted (docs/api.md#legal-holds).
   */
  users?: KvStore;
  /**
   * Identity, admin key and rate limits; default from `config` over the audit store.
   * Shared by the workers `createService` mounts together; internal.
   *
   * @ignore
   */
  access?: AccessControl;
  /** SHA-256 of audit entry hashes (a runtime's native one); default the core's JavaScript one. */
  auditHash?: ((text: string) => string) | undefined;
  /**
   * The histories of the data keys (docs/storage.md#record-history); default over `blobs`.
   * Shared with the other workers `createService` mounts that write data keys; internal.
   *
   * @ignore
   */
  histories?: KeyHistories;
  /**
   * Every store, for `GET /backup` and `POST /restore` (docs/operations.md#backups-through-a-running-service);
   * without it those routes are not there. `serve` passes it; internal.
   *
   * @ignore
   */
  backup?: BackupPorts | undefined;
}

const encoder = new TextEncoder();
const EMPTY_DOCUMENT = encoder.encode("[]");
const STORED = JSON.stringify({ success: true });
/** The record limits read for a token's user who has none (no cases of the record's own). */
const UNREGISTERED: KeptUserData = { uid: "", email: null, firstName: "", lastName: "", company: "", permitted: false, cases: [], createdAt: "" };
const AnyJsonSchema = z.unknown().describe("Any JSON value");

const segment = (description: string) => z.string().describe(`${description}; one key segment (docs/api.md#data-keys)`);
const userId = segment("The user the document belongs to");
const caseNumber = segment("The case number");
const documentName = segment("The document, ending in `.json`, e.g. `data.json`");
const fileId = segment("The file (annotations of one file)");
/** What a read answers for a document that does not exist. */
const NoDocumentSchema = z.tuple([]).meta({ id: "NoDocument", description: "`[]`: the answer for a document that does not exist (never 404)" });
// A document's key is the whole path (several segments), checked and decoded once by the
// handler; the document shows the key shapes clients use, each segment its own parameter.
// The case document and a file's annotations are shown with their own shapes (typed); the
// service stores any JSON under any of them.
const documentPath = "/{filename{[\\s\\S]+}}";
type Verb = "read" | "store" | "delete";
const typedDocument = (verb: Verb, what: string, schema: z.ZodType) => {
  if (verb === "read") {
    return { responses: { 200: { description: `The ${what}, or \`[]\` when there is none`, content: { "application/json": { schema: z.union([schema, NoDocumentSchema]) } } } } };
  }
  if (verb === "store") return { request: { body: { required: true, content: { "application/json": { schema } } } } };
  return {};
};
const documentShapes = (verb: Verb) => ({
  shapes: [
    {
      path: "/{userId}/{caseNumber}/data.json",
      operationId: `${verb}Case`,
      params: z.object({ userId, caseNumber }),
      summary: `${verb === "read" ? "Read" : verb === "store" ? "Store" : "Delete"} a case document (CaseData)`,
      ...typedDocument(verb, "case document", CaseDataSchema),
    },
    {
      path: "/{userId}/{caseNumber}/{fileId}/data.json",
      operationId: `${verb}Annotations`,
      params: z.object({ userId, caseNumber, fileId }),
      summary: `${verb === "read" ? "Read" : verb === "store" ? "Store" : "Delete"} the annotations of one file (AnnotationData)`,
      ...typedDocument(verb, "annotations", AnnotationDataSchema),
    },
    {
      path: "/{userId}/{caseNumber}/{document}",
      operationId: `${verb}CaseDocument`,
      params: z.object({ userId, caseNumber, document: documentName }),
    },
    {
      path: "/{userId}/{caseNumber}/{fileId}/{document}",
      operationId: `${verb}FileDocument`,
      params: z.object({ userId, caseNumber, fileId, document: documentName }),
    },
  ],
});
// The key is checked and decoded by the handler itself: its parameters are in the document only.
const keyErrors = { 400: "Not a .json key, bad key or invalid JSON", 403: "Bad key" } as const;
const keyShapes = "Any key of one or more segments whose last ends in `.json` is stored the same way (docs/api.md#data-worker).";
const security = keyedSecurity("dataKey");
const readDocumentRoute = createRoute({
  tags: tagged("data"),
  method: "get",
  path: documentPath,
  summary: "Read a document; `[]` when it does not exist. With `?history`, its versions; with `?version=N`, version N",
  description: `${keyShapes} Every write and delete keeps the version it replaces (docs/api.md#record-history): \`?history\` answers the key's versions (\`&verify=true\` also checks them), \`?version=N\` version N's bytes exactly as stored. Reading a history writes no audit entry.`,
  security,
  documented: { ...documentShapes("read"), request: { query: HistoryQuerySchema } },
  responses: {
    200: {
      description: "The stored JSON; with `?history`, the key's versions (KeyHistory); with `?version=N`, that version's bytes",
      content: { "application/json": { schema: z.union([AnyJsonSchema, KeyHistorySchema]) } },
    },
    ...errorResponses({ ...keyErrors, 404: "With `?history`: the key never existed; with `?version=N`: no such version, or a deletion mark" }),
  },
});
const storeDocumentRoute = createRoute({
  tags: tagged("data"),
  method: "put",
  path: documentPath,
  summary: "Store any valid JSON document",
  description: keyShapes,
  security,
  documented: { ...documentShapes("store"), request: { body: { required: true, content: { "application/json": { schema: AnyJsonSchema } } } } },
  responses: {
    200: { description: "Stored", content: { "application/json": { schema: SuccessSchema } } },
    ...errorResponses({ ...keyErrors, 413: "Document too large" }),
  },
});
const deleteDocumentRoute = createRoute({
  tags: tagged("data"),
  method: "delete",
  path: documentPath,
  summary: "Delete a document",
  description: keyShapes,
  security,
  documented: documentShapes("delete"),
  responses: {
    200: { description: "Deleted", content: { "application/json": { schema: SuccessSchema } } },
    ...errorResponses({ ...keyErrors, 404: "No such document", 409: "The case is on legal hold: nothing was deleted" }),
  },
});

const pruneRoute = createRoute({
  tags: tagged("data"),
  method: "post",
  path: "/history/prune",
  summary: "Prune versions older than HISTORY_RETENTION_DAYS (administrators only)",
  description:
    "The data key and `X-Admin-Key`, or an identity token with role admin. Removes the bytes of versions written before the cut-off, never a key's newest version nor any version of a case on legal hold; one `history-prune` entry per key in its owner's trail (docs/operations.md#history-retention).",
  operationId: "pruneHistories",
  security,
  responses: {
    200: { description: "What was pruned", content: { "application/json": { schema: PruneResultSchema } } },
    ...errorResponses({ 403: "Bad key, or not an administrator", 409: "HISTORY_RETENTION_DAYS is not set: every version is kept" }),
  },
});

/** The checked storage key of a `/{filename}.json` request path. */
function documentKey(routePath: string): string {
  const key = keyFromRawPath(routePath);
  const name = key.slice(key.lastIndexOf("/") + 1);
  if (!name.endsWith(".json") || name === ".json") {
    throw ServiceError.validation("Invalid file type: only .json documents are stored", { key });
  }
  return key;
}

/** The user segment of a document path, for the admin's audit entry; undefined when unreadable. */
function ownerSegment(routePath: string): string | undefined {
  try {
    const key = keyFromRawPath(routePath);
    return key.split("/")[0];
  } catch {
    return undefined;
  }
}

/** Whether a document is a read-only (imported) case, as the Striae client marks one. */
function isReadOnlyCase(value: unknown): boolean {
  return value !== null && typeof value === "object" && "isReadOnly" in value && value.isReadOnly === true;
}

/** Who wrote a version: the token's user, the admin key's holder, or the data worker key's (key-only mode). */
function writerOf(c: Context<WorkerEnv>): string {
  const actor = actorOf(c);
  if (actor?.kind === "user") return actor.uid;
  return actor?.kind === "admin" ? "admin" : "data-key";
}

/** What a document read asks for beyond the value: its history, or one version; undefined for the value (no query). */
function historyAsked(c: Context<WorkerEnv>): { history: true; verify: boolean } | { version: number } | undefined {
  const url = c.req.url;
  // The v1.0 client's reads carry no query: nothing to parse on them.
  if (!url.includes("?")) return undefined;
  const search = new URL(url).search;
  // A malformed escape would be read as some other name or value than the one sent.
  try {
    decodeURIComponent(search.replace(/\+/g, " "));
  } catch {
    throw ServiceError.validation("The query string has a malformed percent-escape", { query: search.slice(0, 200) });
  }
  const query = new URLSearchParams(search);
  // Given twice, either value would be a guess at what the caller meant.
  for (const name of ["history", "version", "verify"]) {
    if (query.getAll(name).length > 1) throw ServiceError.validation(`${name} is given more than once`, { [name]: query.getAll(name) });
  }
  const version = query.get("version");
  if (query.has("history")) {
    const history = query.get("history");
    // ?history=false asking for the value would be read here as asking for the history: refused, not guessed.
    if (history !== "" && history !== "true") throw ServiceError.validation("history takes no value (?history) or true", { history });
    if (version !== null) throw ServiceError.validation("Ask for either ?history or ?version=N, not both");
    const verify = query.get("verify");
    if (verify !== null && verify !== "true" && verify !== "false") throw ServiceError.validation("verify is true or false", { verify });
    return { history: true, verify: verify === "true" };
  }
  if (query.has("verify")) throw ServiceError.validation("verify goes with ?history (?history&verify=true)", { verify: query.get("verify") });
  if (version === null) return undefined;
  if (!/^[1-9][0-9]{0,15}$/.test(version) || !Number.isSafeInteger(Number(version))) {
    throw ServiceError.validation("version is a version number (1, 2, ...)", { version });
  }
  return { version: Number(version) };
}

/** The data worker's app, with the types of its routes (for hono's `hc` client). */
export type DataWorkerApp = ReturnType<typeof dataWorker>;

/** Creates the data worker: documents under `/{key}.json` and the audit routes under `/audit/`. */
export function createDataWorker(deps: DataWorkerDeps): WorkerApp {
  return dataWorker(deps);
}

/** The data worker, its type inferred from its routes. */
function dataWorker(deps: DataWorkerDeps) {
  const { blobs, config } = deps;
  const app = createWorkerApp({ allowedOrigin: config.allowedOrigin, methods: ["GET", "PUT", "DELETE", "POST"] });
  const access = deps.access ?? accessControl(config, { audit: deps.audit, clock: deps.clock, auditHash: deps.auditHash });
  const isAudit = (c: { req: { path: string } }) => /\/audit(?:\/verify)?\/?$/.test(c.req.path);
  protect(app, access, {
    status: 403,
    route: (c) => isAudit(c) ? routeFor(c.req.method, "audit.read", "audit.write") : routeFor(c.req.method, "data.read", "data.write"),
    credential: authKeyCheck({ keys: [config.r2KeySecret], status: 403, variable: "R2_KEY_SECRET" }),
    targetOf: (c) => isAudit(c) ? c.req.query("userId") : ownerSegment(routePathAfterMount(c)),
  });
  const withAudit = registerAuditRoutes(app, { ...deps, access }, "data");
  // Before the documents' routes, which would take `/backup` for a key.
  if (deps.backup !== undefined) registerBackupRoutes(app, { backup: deps.backup, config, clock: deps.clock, auditHash: deps.auditHash });
  // Identity mode: a document's first key segment is its user (`{uid}/{case}/data.json`).
  // Only a user's token can be refused (requireOwner passes key holders and the admin): only then is there anything to wait for.
  const ownedKey = (c: Context<WorkerEnv>): string | Promise<string> => {
    const key = documentKey(routePathAfterMount(c));
    if (actorOf(c)?.kind !== "user") return key;
    return requireOwner(c, access, key.split("/")[0]!).then(() => key);
  };
  const records = deps.users === undefined ? undefined : userRecords(deps.users);
  const holds = deps.users === undefined ? undefined : legalHoldStore(deps.users);
  const histories = deps.histories ?? createKeyHistories(blobs, { clock: deps.clock });
  // Off, writes go as before; what was recorded stays readable.
  const keepHistory = config.dataHistory !== "off";
  // UserLimits (docs/api.md#user-limits) on a case's documents `{uid}/{case}/{name}.json`, read from the owner's
  // record once: the files a document lists, and for a new `data.json` the cases the account
  // holds (the record's and the folders already stored, not read-only ones).
  const caseWrites = new KeyedMutex();
  const checkFileLimit = (key: string, value: unknown, maxFilesPerCase: number) => {
    const files = value !== null && typeof value === "object" && "files" in value && Array.isArray(value.files) ? value.files.length : 0;
    if (files > maxFilesPerCase) {
      throw ServiceError.forbidden(`File limit reached: a case of this account may hold ${maxFilesPerCase} file(s)`, { key, limit: maxFilesPerCase });
    }
  };
  const checkCaseLimit = async (owner: KeptUserData, key: string, maxCases: number) => {
    const [uid, caseNumber] = key.split("/") as [string, string];
    const readOnly = new Set((owner.readOnlyCases ?? []).map((entry) => entry.caseNumber));
    const own = new Set(owner.cases.map((assignment) => assignment.caseNumber));
    if (readOnly.has(caseNumber) || own.has(caseNumber) || (await blobs.has(key))) return;
    for (const stored of await storedCaseNumbers(blobs, uid)) if (!readOnly.has(stored)) own.add(stored);
    if (own.has(caseNumber)) return;
    if (own.size + 1 > maxCases) {
      throw ServiceError.forbidden(`Case limit reached: this account may hold ${maxCases} case(s)`, { key, limit: maxCases });
    }
  };
  const storeWithinLimits = async (c: Context<WorkerEnv>, records: UserRecords, key: string, value: unknown, write: () => Promise<void>) => {
    const uid = key.split("/")[0]!;
    // Only read: the kept record, not a copy parsed for this request.
    const owner = (await records.view(uid)) ?? unregistered(c);
    // A read-only case is an import of someone else's case: the limits are on one's own work
    // (a review account, permitted: false, imports cases of any size).
    if (owner === null || isReadOnlyCase(value)) return await write();
    const { maxCases, maxFilesPerCase } = limitsFor(owner, config);
    checkFileLimit(key, value, maxFilesPerCase);
    // Only a new data.json under a finite case limit counts the cases; no count, no lock.
    if (!key.endsWith("/data.json") || maxCases >= Number.MAX_SAFE_INTEGER) return await write();
    // One user's new cases one at a time, so two at once cannot both pass the count.
    await caseWrites.run(uid, async () => {
      await checkCaseLimit(owner, key, maxCases);
      await write();
    });
  };

  // A token's user with no record is held to what signing up would give them (SELF_REGISTRATION),
  // or skipping the sign-up would escape the limits; key-only callers are the application's own.
  const unregistered = (c: Context<WorkerEnv>): KeptUserData | null => {
    if (actorOf(c)?.kind !== "user") return null;
    if (config.selfRegistration === "closed") {
      throw ServiceError.forbidden("This user has no account, and self-registration is closed on this service: an administrator creates accounts");
    }
    return { ...UNREGISTERED, permitted: config.selfRegistration === "permitted" };
  };

  const readHistory = async (c: Context<WorkerEnv>, key: string, asked: { history: true; verify: boolean } | { version: number }) => {
    if ("version" in asked) {
      const bytes = await histories.read(key, asked.version);
      if (bytes === null) throw ServiceError.notFound("No such version: the key has no version of that number, or it is a deletion mark", { key, version: asked.version });
      return answerWith(c, bytes as Uint8Array<ArrayBuffer>, 200, "application/json; charset=utf-8");
    }
    const listed = await histories.list(key);
    if (listed === null) throw ServiceError.notFound("No history: this key was never stored", { key });
    const verified = asked.verify ? await histories.verify(key) : {};
    return answerJson(c, { ...listed, ...verified } as unknown as JSONValue, 200);
  };
  const read = async (c: Context<WorkerEnv>) => {
    const asked = historyAsked(c);
    if (asked !== undefined) {
      const response = await readHistory(c, await ownedKey(c), asked);
      return response as unknown as TypedResponse<JSONValue, 200, "json">;
    }
    const key = ownedKey(c);
    const owned = typeof key === "string" ? key : await key;
    // With history, the value must be the version its history names (an older one put back is refused).
    const stored = keepHistory ? await histories.readCurrent(owned) : await blobs.get(owned);
    // The stored bytes go out as they are (never re-serialised); to `hc` they are JSON.
    const response = answerWith(c, stored ?? EMPTY_DOCUMENT, 200, "application/json; charset=utf-8");
    return response as unknown as TypedResponse<JSONValue, 200, "json">;
  };
  const store = async (c: Context<WorkerEnv>) => {
    const key = await ownedKey(c);
    const { value, bytes } = await readJsonText(c);
    const write = keepHistory ? () => histories.write(key, bytes, writerOf(c)).then(() => undefined) : () => blobs.put(key, bytes);
    if (records === undefined || key.split("/").length !== 3) await write();
    else await storeWithinLimits(c, records, key, value, write);
    return answerJsonText<{ success: true }, 200>(c, STORED, 200);
  };
  const remove = async (c: Context<WorkerEnv>) => {
    const key = await ownedKey(c);
    if (holds !== undefined) await refuseHeldKey(holds, key);
    const removed = keepHistory ? (await histories.remove(key, writerOf(c))) !== null : await blobs.delete(key);
    if (!removed) throw ServiceError.notFound("File not found", { key });
    return answerJson(c, { success: true as const }, 200);
  };
  const storeLimit = limitBody(config.maxJsonBytes);
  const prune = async (c: Context<WorkerEnv>) => {
    await requireAdministrator(c, records, "Pruning histories");
    const retentionDays = config.historyRetentionDays;
    if (retentionDays === undefined) throw ServiceError.conflict("HISTORY_RETENTION_DAYS is not set on this service: every version is kept");
    if (holds === undefined) throw ServiceError.server("Pruning needs the user store, where the legal holds are kept: this data worker is deployed without USER_DB", "unavailable");
    const request = requestFacts(c);
    const summary = await pruneRetainedHistories({ data: blobs, holds, log: access.log, clock: deps.clock, actor: actorOf(c)!, request }, retentionDays);
    // The run itself, in the admin trail (each key's entry went to its owner's).
    await recordEvent(c, access, {
      action: "history-prune",
      result: "success",
      details: { securityDetails: { retentionDays, cutoff: summary.cutoff, keysPruned: summary.pruned.length, keysHeld: summary.held.length } },
    });
    return answerJson(c, { retentionDays, ...summary }, 200);
  };
  const routed = withAudit
    .openapi(pruneRoute, (c) => prune(c))
    .openapi(readDocumentRoute, (c) => read(c))
    .openapi({ ...storeDocumentRoute, middleware: storeLimit }, (c) => store(c))
    .openapi(deleteDocumentRoute, (c) => remove(c));
  // The mount itself names no key: the same handlers refuse it as before (400).
  app.get("/", read);
  app.put("/", storeLimit, store);
  app.delete("/", remove);
  app.all("/*", methodNotAllowed(["GET", "PUT", "DELETE"]));
  return routed;
}
