/**
 * @module
 * The audit endpoints of docs/api.md#audit, mounted by both the data worker and the audit worker
 * over one audit store. Entries are validated, appended losslessly, never modified.
 */
import type { BlobStore, Clock } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import {
  AuditAppendResponseSchema,
  AuditEntriesResponseSchema,
  AuditGetQuerySchema,
  AuditPostQuerySchema,
  AuditVerificationSchema,
  ValidationAuditEntrySchema,
} from "../schemas/audit.ts";
import type * as z from "zod";
import { parseWith, readJsonText, readQuery } from "../http/body.ts";
import { ServiceError } from "../errors.ts";
import { limitBody } from "../http/limits.ts";
import { createRoute } from "../http/openapi-app.ts";
import { tagged } from "../http/openapi-tags.ts";
import { answerJson, answerJsonText, errorResponses, methodNotAllowed, type WorkerApp } from "../http/worker-app.ts";
import { checkSegment } from "../storage/keys.ts";
import { auditDayRange } from "../audit/days.ts";
import { appendAuditEntry, auditVerifyDays, readAuditEntryJson, RECEIVED_AT, verifyStoredTrail } from "../audit/trail.ts";
import { type AuditKeyConfig, auditKeys } from "../audit/signing-keys.ts";
import { type AuditChainOptions, AuditDayFull, type ChainedEntry, CHAIN_FIELDS } from "../audit/chain.ts";
import { joinJsonItems } from "../storage/json-array.ts";
import { type AccessControl, requestFacts, requireOwner } from "../http/access.ts";
import { actorOf } from "../http/actor.ts";
import type { Context } from "hono";
import type { WorkerEnv } from "../http/worker-app.ts";
import { keyedSecurity } from "../http/credentials-doc.ts";

/** What the audit routes need. */
export interface AuditRoutesDeps {
  audit: BlobStore;
  clock: Clock;
  config: Pick<ServiceConfig, "maxAuditEntryBytes" | "maxAuditDayBytes"> & AuditKeyConfig;
  /** Who may read and write which user's trail (identity mode: only their own). */
  access: AccessControl;
  /** SHA-256 of audit entry hashes (a runtime's native one); default the core's JavaScript one. */
  auditHash?: ((text: string) => string) | undefined;
}

type AuditEntriesResponse = z.output<typeof AuditEntriesResponseSchema>;

/** `POST /audit/`: append an entry (the body is read and checked by the handler). */
const appendEntryRoute = createRoute({
  tags: tagged("audit"),
  method: "post",
  path: "/audit",
  summary: "Append an audit entry to the user's file of today (UTC)",
  description:
    "The entry's userId must equal the query's (else 400). The service stores its own receipt time as receivedAt beside the client's timestamp; an entry that sends receivedAt is a 400. JSON nested deeper than 64 levels is a 400.",
  security: keyedSecurity("dataKey"),
  documented: {
    request: {
      query: AuditPostQuerySchema,
      body: { required: true, content: { "application/json": { schema: ValidationAuditEntrySchema } } },
    },
  },
  responses: {
    200: { description: "Appended", content: { "application/json": { schema: AuditAppendResponseSchema } } },
    ...errorResponses({ 400: "userId missing or invalid entry", 403: "Bad key", 413: "Entry too large", 429: "The day of the trail holds MAX_AUDIT_DAY_BYTES (until the next UTC day)" }),
  },
});

/** `GET /audit/`: the entries of a user's days (the query is read and checked by the handler). */
const readEntriesRoute = createRoute({
  tags: tagged("audit"),
  method: "get",
  path: "/audit",
  summary: "Entries of today, or of each UTC day from startDate to endDate, newest first",
  description:
    "startDate and endDate are ISO 8601 dates or date-times (offsets are converted to UTC); the range covers the UTC day of each, both included, at most 366 days. Entries come newest first: the last day first, and within a day the last entry received first. A stored entry that cannot be served is reported in its place ({unreadable: true, filename, index, reason, ...}); the others are returned.",
  security: keyedSecurity("dataKey"),
  documented: { request: { query: AuditGetQuerySchema } },
  responses: {
    200: { description: "Entries, newest first", content: { "application/json": { schema: AuditEntriesResponseSchema } } },
    ...errorResponses({ 400: "userId missing or bad dates", 403: "Bad key" }),
  },
});

/** `GET /audit/verify`: verify a user's trail (the query is read and checked by the handler). */
const verifyTrailRoute = createRoute({
  tags: tagged("audit"),
  method: "get",
  path: "/audit/verify",
  summary: "Verify the hash chain of a user's trail: the whole trail, or the UTC days from startDate to endDate",
  description:
    "Checks every entry's hash, that seq runs on without a gap and each prevHash names the entry before, across days, then that the head names the newest entry and, with AUDIT_SIGNING_KEY or AUDIT_VERIFY_KEYS, that its signature holds; with AUDIT_SIGNING_KEY, an unsigned head is signature missing. Names the first bad entry of each day and why (edited, missing, reordered, inserted, tail dropped, signature invalid, signature missing). Entries stored before the chain began count as unchained, not as tampering. Without dates the whole trail is read, from the head's first day.",
  security: keyedSecurity("dataKey"),
  documented: { request: { query: AuditGetQuerySchema } },
  responses: {
    200: { description: "The verdict", content: { "application/json": { schema: AuditVerificationSchema } } },
    ...errorResponses({ 400: "userId missing or bad dates", 403: "Bad key" }),
  },
});

/** The `reason` of the `security-violation` entry that records a day past MAX_AUDIT_DAY_BYTES. */
export const DAY_FULL_REASON = "audit day full";

const isDayFullRecord = (entry: ChainedEntry): boolean => {
  const details = entry.details as { securityDetails?: Record<string, unknown> } | undefined;
  return entry.action === "security-violation" && details?.securityDetails?.source === "service" && details.securityDetails.reason === DAY_FULL_REASON;
};

/**
 * Records a refused append as a `security-violation` in the user's trail (a service entry: never
 * refused by the cap), once per run of refusals (not again while it is the day's newest entry).
 */
async function recordDayFull(c: Context<WorkerEnv>, deps: AuditRoutesDeps, chain: AuditChainOptions, userId: string, refused: AuditDayFull): Promise<void> {
  const actor = actorOf(c);
  const { method, path, clientIp } = requestFacts(c);
  const entry = {
    timestamp: deps.clock.now().toISOString(),
    userId,
    userEmail: actor?.kind === "user" ? actor.email ?? "" : "",
    action: "security-violation" as const,
    result: "blocked" as const,
    details: {
      securityDetails: {
        reason: DAY_FULL_REASON,
        ...refused.details,
        source: "service",
        actor: actor === undefined ? "data key" : actor.kind === "admin" ? "admin" : actor.uid,
        method,
        path,
        ...(clientIp === undefined ? {} : { clientIp }),
      },
    },
  };
  await appendAuditEntry(deps.audit, deps.clock, userId, entry, { ...chain, reserve: true, unlessNewest: isDayFullRecord });
  // The request log writes this refusal at warn, as every refusal that wrote a security-violation.
  c.set("audited", true);
}

/**
 * Adds POST and GET `/audit/` to a worker app (its auth is the worker's); returns the app with
 * their types. `served` names the worker in the operation ids, which are unique in the service's document.
 */
export function registerAuditRoutes<A extends WorkerApp>(app: A, deps: AuditRoutesDeps, served: "audit" | "data" = "audit") {
  const { audit, clock, config, access } = deps;
  const via = served === "audit" ? "" : "ViaData";
  const keys = auditKeys(config);
  const chain: AuditChainOptions = { signer: keys.signer, hash: deps.auditHash, maxDayBytes: config.maxAuditDayBytes };
  const routed = app
    .openapi({ ...appendEntryRoute, operationId: `appendAuditEntry${via}`, middleware: limitBody(config.maxAuditEntryBytes) }, async (c) => {
      const { userId } = readQuery(c, AuditPostQuerySchema);
      checkSegment(userId, "userId");
      await requireOwner(c, access, userId);
      const { value } = await readJsonText(c);
      const entry = parseWith(ValidationAuditEntrySchema, value, "audit entry");
      // Entries the service writes are marked so; a client cannot pass its own off as one.
      if (entry.details.securityDetails?.source === "service") {
        throw ServiceError.validation('details.securityDetails.source "service" is reserved for entries the service writes', { field: "details.securityDetails.source" });
      }
      // The receipt time is the service's own record, beside the client's timestamp.
      if (Object.hasOwn(entry, RECEIVED_AT)) {
        throw ServiceError.validation(`${RECEIVED_AT} is written by the service when it receives an entry; clients may not send it`, { field: RECEIVED_AT });
      }
      // The chain fields are the service's record of order and integrity, never the client's.
      for (const field of CHAIN_FIELDS) {
        if (Object.hasOwn(entry, field)) {
          throw ServiceError.validation(`${field} is written by the service (the trail's hash chain); clients may not send it`, { field });
        }
      }
      // In identity mode an entry speaks for its author: another user's userId is a cross-user attempt (403, recorded).
      await requireOwner(c, access, entry.userId);
      if (entry.userId !== userId) {
        throw ServiceError.validation("The entry's userId must equal the userId of the query (the trail it is written to)", {
          field: "userId",
          entryUserId: entry.userId,
          queryUserId: userId,
        });
      }
      let appended;
      try {
        appended = await appendAuditEntry(audit, clock, userId, entry, chain);
      } catch (err) {
        if (err instanceof AuditDayFull) await recordDayFull(c, deps, chain, userId, err);
        throw err;
      }
      const { entryCount, filename } = appended;
      // Built with the request's frame (answerJsonText): the security and CORS headers are in it
      // from the start, not set afterwards on a web Headers object.
      const answer = JSON.stringify({ success: true, entryCount, filename });
      return answerJsonText<{ success: true; entryCount: number; filename: string }, 200>(c, answer, 200);
    })
    .openapi({ ...readEntriesRoute, operationId: `readAuditEntries${via}` }, async (c) => {
      const query = readQuery(c, AuditGetQuerySchema);
      checkSegment(query.userId, "userId");
      await requireOwner(c, access, query.userId);
      const days = auditDayRange(query.startDate, query.endDate, clock.now());
      // Served as stored: each entry was checked when it was appended.
      const entries = await readAuditEntryJson(audit, query.userId, days);
      return answerJsonText<AuditEntriesResponse, 200>(c, joinJsonItems('{"entries":[', entries, `],"total":${entries.length}}`), 200);
    })
    .openapi({ ...verifyTrailRoute, operationId: `verifyAuditTrail${via}` }, async (c) => {
      const query = readQuery(c, AuditGetQuerySchema);
      checkSegment(query.userId, "userId");
      await requireOwner(c, access, query.userId);
      const days = await auditVerifyDays(audit, query.userId, query.startDate, query.endDate, clock.now());
      // Read and checked day by day, entry by entry, yielding to other requests (a day's size does not block the server).
      const result = await verifyStoredTrail(audit, query.userId, days, { publicKeys: await keys.publicKeys(), requireSignature: keys.signer !== undefined, hash: deps.auditHash });
      return answerJson(c, result, 200);
    });
  app.all(appendEntryRoute.path, methodNotAllowed(["GET", "POST"]));
  app.all(verifyTrailRoute.path, methodNotAllowed(["GET"]));
  return routed;
}
