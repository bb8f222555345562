/**
 * @module
 * The review worker (docs/review.md): a case owner asks a second examiner of the same lab to
 * review the case's files, blind or open; the reviewer records conclusions and signs the exact
 * annotations they reviewed. Identity tokens only: in key-only mode every route but
 * `GET /keys` answers 403. Reviews, conclusions and signatures live in the audit store and are
 * never deleted (`review/review-store.ts`).
 */
import * as z from "zod";
import type { Context } from "hono";
import { createRoute } from "../http/openapi-app.ts";
import { tagged } from "../http/openapi-tags.ts";
import { IDENTITY_ONLY, OPEN } from "../http/credentials-doc.ts";
import type { BlobStore, Bytes, Clock, KvStore } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { readBody } from "../http/body.ts";
import { limitBody } from "../http/limits.ts";
import { ServiceError } from "../errors.ts";
import { answerJson, createWorkerApp, errorResponses, methodNotAllowed, routePathAfterMount, type WorkerApp, type WorkerEnv } from "../http/worker-app.ts";
import { checkSegment, decodeSegment, storageKeys } from "../storage/keys.ts";
import { type AccessControl, accessControl, protect, recordEvent, requestFacts } from "../http/access.ts";
import { actorOf } from "../http/actor.ts";
import { routeFor } from "../rate-limit/rules.ts";
import { userRecords } from "../users/user-records.ts";
import { type LabMembership, membershipOf } from "../users/lab-membership.ts";
import { auditKeys } from "../audit/signing-keys.ts";
import type { Actor } from "../audit/service-events.ts";
import { sha256Hex } from "../encoding/digest.ts";
import { CaseDataSchema } from "../schemas/case.ts";
import {
  type Conclusion,
  ConclusionRequestSchema,
  ConclusionSchema,
  OWNER_CONCLUSION_FIELDS,
  type Review,
  ReviewRequestSchema,
  ReviewSchema,
  type ReviewSignature,
  ReviewSignatureSchema,
  ReviewVerificationSchema,
  SignatureRequestSchema,
  type SigningUnderWay,
} from "../schemas/review.ts";
import { type RememberedMember, reviewStore } from "../review/review-store.ts";
import { checkReviewSignature, publishedKeys, signatureBindingProblem, signReview } from "../review/signatures.ts";
import { type AnnotationsUpdate, type ConfirmationOutcome, confirmationOf, newConfirmationId, storeUpdate, writeConfirmation } from "../review/confirmation.ts";
import { sealConfirmation } from "../review/confirmation-seal.ts";
import { unamendedHashes } from "../review/confirmation-chain.ts";
import type { KeyHistories } from "../history/mod.ts";

/** Ports and configuration of the review worker. */
export interface ReviewWorkerDeps {
  /** The data store: the owner's case documents and annotations. */
  data: BlobStore;
  /** The audit store: where reviews are kept, beside the trails. */
  audit: BlobStore;
  /** User records: lab and roles where tokens state none. */
  users: KvStore;
  /** Dates reviews, conclusions and signatures. */
  clock: Clock;
  /** CORS, identity, the admin key, rate limits, the audit keys that sign, and the freshness of a signing authentication. */
  config: Pick<
    ServiceConfig,
    "allowedOrigin" | "identity" | "adminAuth" | "rateLimits" | "auditSigningKey" | "auditVerifyKeys" | "signatureMaxAuthAgeSeconds" | "publicUrl" | "maxAuditDayBytes"
  > & Partial<Pick<ServiceConfig, "dataHistory">>;
  /**
   * The histories of the data keys (shared with the data worker): a review pins each file's
   * current version, and a confirmation is written as a new version. Without it (or with
   * `DATA_HISTORY=off`) files are pinned by their SHA-256 alone (`version: null`). Internal.
   *
   * @ignore
   */
  histories?: KeyHistories;
  /**
   * A signed URL of an image, given the origin clients reach the service at, when the image host
   * records `owner` as its uploader (a case document lists any id; it proves nothing); undefined
   * otherwise. Without it reviews carry no image URL.
   */
  signImage?: (origin: string, imageId: string, owner: string) => Promise<string | undefined>;
  /**
   * Identity, admin key, rate limits and service audit entries; default from `config` over the audit store.
   * Shared by the workers `createService` mounts together; internal.
   *
   * @ignore
   */
  access?: AccessControl;
}

const MAX_BODY_BYTES = 64 * 1024;
/** How long a signing under way keeps another request for it (a repeat, a cancellation) waiting: far longer than a signing takes. */
const SIGNING_LEASE_SECONDS = 30;
/** The hashes of a signing's tries kept (each try of a store that retries adds one). */
const MAX_TRIES_KEPT = 64;
const jsonBody = <S extends z.ZodType>(schema: S) => ({ required: true, content: { "application/json": { schema } } });
const json = <S extends z.ZodType>(description: string, schema: S) => ({ description, content: { "application/json": { schema } } });
const CaseParams = z.object({ uid: z.string(), caseNumber: z.string() });
const IdParams = z.object({ id: z.string() });
const ReviewListSchema = z.object({ reviews: z.array(ReviewSchema) }).meta({ id: "ReviewList" });
const ReviewedFileSchema = z.object({
  fileId: z.string(),
  version: z.number().int().nullable(),
  sha256: z.string().nullable(),
  changed: z.boolean(),
  annotations: z.record(z.string(), z.unknown()).nullable(),
  withheld: z.array(z.string()).optional(),
  imageUrl: z.string().optional(),
});
const ReviewViewSchema = z.object({ review: ReviewSchema, case: z.record(z.string(), z.unknown()).nullable(), files: z.array(ReviewedFileSchema) }).meta({ id: "ReviewView" });
const JwksSchema = z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).meta({ id: "ReviewKeys" });
const ACCESS_ERRORS = { 403: "Not a party to it, or key-only mode", 404: "No such review" };

const keysRoute = createRoute({
  tags: tagged("review"), method: "get", path: "/keys", operationId: "reviewKeys", security: OPEN,
  summary: "The JWKS that verifies review signatures and signed audit heads (public halves of AUDIT_SIGNING_KEY and AUDIT_VERIFY_KEYS)",
  responses: { 200: json("The keys", JwksSchema) },
});
const requestRoute = createRoute({
  tags: tagged("review"), method: "post", path: "/cases/{uid}/{caseNumber}", operationId: "requestReview", security: IDENTITY_ONLY,
  summary: "Ask a reviewer of the owner's lab to review a case; the files' annotations are pinned now",
  documented: { request: { params: CaseParams, body: jsonBody(ReviewRequestSchema) } },
  responses: { 201: json("The review", ReviewSchema), ...errorResponses({ 400: "Invalid body, or the reviewer is the owner, outside the lab or without role reviewer", ...ACCESS_ERRORS }) },
});
const caseReviewsRoute = createRoute({
  tags: tagged("review"), method: "get", path: "/cases/{uid}/{caseNumber}", operationId: "caseReviews", security: IDENTITY_ONLY,
  summary: "The reviews of a case, newest first, with their states and signatures (the owner)",
  documented: { request: { params: CaseParams } },
  responses: { 200: json("The reviews", ReviewListSchema), ...errorResponses(ACCESS_ERRORS) },
});
const inboxRoute = createRoute({
  tags: tagged("review"), method: "get", path: "/inbox/{uid}", operationId: "reviewInbox", security: IDENTITY_ONLY,
  summary: "The reviews assigned to a reviewer, newest first",
  documented: { request: { params: z.object({ uid: z.string() }) } },
  responses: { 200: json("The reviews", ReviewListSchema), ...errorResponses(ACCESS_ERRORS) },
});
const readRoute = createRoute({
  tags: tagged("review"), method: "get", path: "/r/{id}", operationId: "readReview", security: IDENTITY_ONLY,
  summary: "The review, the case document and each file's pinned annotations and signed image URL (a blind reviewer sees no owner conclusion before theirs)",
  documented: { request: { params: IdParams } },
  responses: { 200: json("The review", ReviewViewSchema), ...errorResponses(ACCESS_ERRORS) },
});
const conclusionRoute = createRoute({
  tags: tagged("review"), method: "post", path: "/r/{id}/conclusions", operationId: "recordConclusion", security: IDENTITY_ONLY,
  summary: "The reviewer's own conclusion on one file, once",
  documented: { request: { params: IdParams, body: jsonBody(ConclusionRequestSchema) } },
  responses: { 201: json("The conclusion", ConclusionSchema), ...errorResponses({ 400: "Invalid body or file", 409: "Already recorded, or the review is not open", ...ACCESS_ERRORS }) },
});
const signatureRoute = createRoute({
  tags: tagged("review"), method: "post", path: "/r/{id}/signatures", operationId: "signReview", security: IDENTITY_ONLY,
  summary: "Sign the pinned annotations of one file (needs an authentication at most SIGNATURE_MAX_AUTH_AGE_SECONDS old)",
  documented: { request: { params: IdParams, body: jsonBody(SignatureRequestSchema) } },
  responses: {
    200: json("The reviewer's repeat of a `verified` signature stored before a failure kept its confirmation from being written: the signature, its confirmation written now", ReviewSignatureSchema),
    201: json("The signature", ReviewSignatureSchema),
    ...errorResponses({ 400: "Invalid body or file", 401: "Reauthentication required", 409: "Signed already, blind without a conclusion, amended since the review opened, or not open", ...ACCESS_ERRORS }),
  },
});
const cancelRoute = createRoute({
  tags: tagged("review"), method: "delete", path: "/r/{id}", operationId: "cancelReview", security: IDENTITY_ONLY,
  summary: "Cancel an open review (the owner); it is kept, in state cancelled",
  documented: { request: { params: IdParams } },
  responses: { 200: json("The review", ReviewSchema), ...errorResponses({ 409: "Not open", ...ACCESS_ERRORS }) },
});
const verifyRoute = createRoute({
  tags: tagged("review"), method: "get", path: "/r/{id}/verify", operationId: "verifyReview", security: IDENTITY_ONLY,
  summary: "Each signature: valid, stale (the annotations changed after it) or invalid (it does not verify)",
  documented: { request: { params: IdParams } },
  responses: { 200: json("The statuses", ReviewVerificationSchema), ...errorResponses(ACCESS_ERRORS) },
});

const decoder = new TextDecoder();

/** The JSON object of stored bytes, or null when they are absent or not an object. */
function objectOf(bytes: Bytes | null): Record<string, unknown> | null {
  if (bytes === null) return null;
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes));
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

/** The path's segments after the mount, each decoded once and checked. */
function segments(c: Context<WorkerEnv>): string[] {
  return routePathAfterMount(c).split("/");
}

/**
 * Creates the review worker (docs/review.md): a lab's second examiner reads a case in place
 * (blind to the first conclusions if asked), records conclusions and signs the pinned version of
 * each file with `AUDIT_SIGNING_KEY`; `GET /keys` publishes the keys that verify the signatures.
 * Reviews need identity-token mode (in key-only mode every route but `/keys` answers 403), and
 * live in the audit store beside the trails. `createService` mounts it at `/review`.
 *
 * @example
 * ```ts
 * import { createMemoryPorts, createReviewWorker, parseConfig } from "@forensic-annotation/service";
 *
 * const { data, audit, users, clock } = createMemoryPorts();
 * const config = parseConfig({
 *   AUTH_JWKS_URL: "https://idp.lab.example/jwks",
 *   AUTH_ISSUER: "https://idp.lab.example",
 *   AUTH_AUDIENCE: "forensic",
 *   AUDIT_SIGNING_KEY: signingKeyJson, // a private JWK as JSON
 * });
 * const review = createReviewWorker({ data, audit, users, clock, config });
 * const jwks = await (await review.request("/keys")).json(); // verifies its signatures
 * ```
 */
export function createReviewWorker(deps: ReviewWorkerDeps): WorkerApp {
  const { config, clock } = deps;
  const app = createWorkerApp({ allowedOrigin: config.allowedOrigin, methods: ["GET", "POST", "DELETE"] });
  const access = deps.access ?? accessControl(config, { clock, audit: deps.audit });
  const records = userRecords(deps.users);
  const reviews = reviewStore(deps.audit);
  const keys = auditKeys(config);
  const histories = config.dataHistory === "off" ? undefined : deps.histories;
  /** The version a file is pinned at: the history's current one (a value stored before history becomes version 1). */
  const pinnedVersion = async (key: string, sha: string): Promise<number | null> => {
    if (histories === undefined) return null;
    const current = await histories.adopt(key);
    // A write between the read and the pin: the version is not the bytes read, so none is named.
    return current !== null && current.sha256 === sha ? current.version : null;
  };
  /** A confirmation is a new version of the owner's annotations, written by the reviewer. */
  const updateAnnotations = (writtenBy: string): AnnotationsUpdate =>
    histories === undefined ? storeUpdate(deps.data) : async (key, change) => ({ version: (await histories.update(key, change, writtenBy)).record.version });
  protect(app, access, {
    status: 403,
    route: (c) => routeFor(c.req.method, "review.read", "review.write"),
    isPublic: (c) => routePathAfterMount(c) === "keys" || access.identity === undefined,
  });

  /** The acting user, with their lab and roles. */
  const caller = async (c: Context<WorkerEnv>): Promise<{ actor: Extract<Actor, { kind: "user" }> | { kind: "admin" }; member: LabMembership }> => {
    if (access.identity === undefined) {
      throw ServiceError.forbidden("Reviews need identity tokens: this service runs in key-only mode (set AUTH_JWKS_URL or FIREBASE_PROJECT_ID)", { reason: "identity tokens required" });
    }
    const actor = actorOf(c);
    if (actor === undefined) throw ServiceError.forbidden("Missing X-Identity-Token");
    // Its token's lab and roles were remembered on the way in (http/access.ts), as on every worker's routes.
    return { actor, member: await membershipOf(actor, records) };
  };
  /** 403 with a security-violation entry in the caller's own trail. */
  const refuse = async (c: Context<WorkerEnv>, actor: Actor, reason: string, shown: Record<string, unknown>): Promise<never> => {
    if (actor.kind === "user") {
      await access.log({
        userId: actor.uid,
        action: "security-violation",
        result: "blocked",
        actor,
        details: { workflowPhase: "confirmation", securityDetails: { reason, ...shown } },
        request: requestFacts(c),
      });
      c.set("audited", true);
    }
    throw ServiceError.forbidden(`Not permitted: ${reason}`, shown);
  };
  /** The membership of another user: what their last token said, else their record. */
  const memberOf = async (uid: string): Promise<LabMembership> => {
    const remembered: RememberedMember | null = await reviews.remembered(uid);
    return membershipOf({ kind: "user", uid, email: undefined, lab: remembered?.lab, roles: remembered?.roles }, records);
  };
  /** One entry in the owner's and one in the reviewer's trail. */
  const step = async (c: Context<WorkerEnv>, review: Review, name: string, more: Record<string, unknown> = {}, confirmationId?: string) => {
    for (const userId of [review.owner, review.reviewer]) {
      await recordEvent(c, access, {
        userId,
        action: "confirmation-create",
        result: "success",
        details: {
          workflowPhase: "confirmation",
          caseNumber: review.caseNumber,
          originalExaminerUid: review.owner,
          reviewingExaminerUid: review.reviewer,
          ...(confirmationId === undefined ? {} : { confirmationId }),
          reviewDetails: { step: name, reviewId: review.id, kind: review.kind, blind: review.blind, ...more },
        },
      });
    }
  };
  /** True while a blind reviewer has no conclusion of their own on the file. */
  const blindTo = (review: Review, role: string, fileId: string): boolean =>
    role === "reviewer" && review.blind && !review.conclusions.some((conclusion) => conclusion.fileId === fileId);
  /** The review as `role` sees it: to a blind reviewer, no hash of a file they have not concluded on. */
  const seenBy = (review: Review, role: string): Review => ({
    ...review,
    files: review.files.map((file) => (blindTo(review, role, file.fileId) ? { ...file, sha256: null } : file)),
  });
  const loadReview = async (id: string): Promise<Review> => {
    const review = await reviews.get(id);
    if (review === null) throw ServiceError.notFound("No such review", { reviewId: id });
    return review;
  };
  /** The review, if the caller is a party to it (or the admin key reads it). */
  const partyTo = async (c: Context<WorkerEnv>, id: string, who: "owner" | "reviewer" | "either", write: boolean) => {
    const { actor, member } = await caller(c);
    const review = await loadReview(id);
    if (actor.kind === "admin") {
      if (write) throw ServiceError.forbidden("The admin key reads reviews; only their parties act on them");
      return { actor, member, review, role: "admin" as const };
    }
    const role = actor.uid === review.owner ? "owner" as const : actor.uid === review.reviewer ? "reviewer" as const : undefined;
    if (role === undefined || (who !== "either" && who !== role)) {
      return await refuse(c, actor, role === undefined ? "not a party to the review" : `only the ${who} may do this`, { reviewId: id });
    }
    // A reviewer acts only while still in the review's lab with the role.
    if (role === "reviewer" && write && (member.lab !== review.lab || !(member.roles.includes("reviewer") || member.roles.includes("admin")))) {
      return await refuse(c, actor, member.lab !== review.lab ? "outside the review's lab" : "no role reviewer", { reviewId: id });
    }
    return { actor, member, review, role };
  };
  const currentSha = async (key: string): Promise<string | null> => {
    const bytes = await deps.data.get(key);
    return bytes === null ? null : await sha256Hex(bytes);
  };
  const annotationsKey = (review: Pick<Review, "owner" | "caseNumber">, fileId: string) => storageKeys.annotations(review.owner, review.caseNumber, fileId);
  /** The reviews of the review's case, with the review itself as stored now. */
  const caseReviewsOf = async (review: Review): Promise<{ self: Review; all: Review[] }> => {
    const all = await reviews.ofCase(review.owner, review.caseNumber);
    return { self: all.find((each) => each.id === review.id) ?? review, all };
  };
  /**
   * True when the owner amended the file after the review opened: the annotations are neither
   * the pinned ones nor a confirmation written over them, by this review or another of the case.
   */
  const amended = (review: Review, fileId: string, sha: string | null, caseReviews: readonly Review[]): boolean => {
    if (!review.files.some((file) => file.fileId === fileId)) return false;
    return sha === null || !unamendedHashes(review, fileId, caseReviews).has(sha);
  };
  /** 401 unless the caller signed in at most SIGNATURE_MAX_AUTH_AGE_SECONDS ago (and not in the future). */
  const requireFreshSignIn = (authTime: number | undefined, now: Date) => {
    // 21 CFR 11.200: a signature needs a fresh authentication, not a session left open.
    const age = authTime === undefined ? Infinity : now.getTime() / 1000 - authTime;
    const skew = config.identity?.clockSkewSeconds ?? 30;
    if (age < -skew) {
      throw new ServiceError("unauthenticated", "The identity token's auth_time is in the future: sign in again", { reason: "reauthentication required", authTime });
    }
    if (!(age <= config.signatureMaxAuthAgeSeconds)) {
      throw new ServiceError("unauthenticated", `Signing needs an authentication at most ${config.signatureMaxAuthAgeSeconds} s old: sign in again`, {
        reason: "reauthentication required",
        maxAuthAgeSeconds: config.signatureMaxAuthAgeSeconds,
      });
    }
  };

  app.openapi(keysRoute, async (c) => answerJson(c, await publishedKeys(keys), 200));

  app.openapi({ ...requestRoute, middleware: limitBody(MAX_BODY_BYTES) }, async (c) => {
    const parts = segments(c);
    const owner = decodeSegment(parts[1] ?? "", "uid");
    const caseNumber = decodeSegment(parts[2] ?? "", "caseNumber");
    const { actor, member } = await caller(c);
    if (actor.kind !== "user" || actor.uid !== owner) {
      if (actor.kind === "admin") throw ServiceError.forbidden("Only the case owner asks for a review");
      return await refuse(c, actor, "only the case owner asks for its review", { userId: owner, caseNumber });
    }
    const body = await readBody(c, ReviewRequestSchema);
    const reviewer = checkSegment(body.reviewer, "reviewer");
    if (reviewer === owner) throw ServiceError.validation("The reviewer must be another examiner than the case owner", { field: "reviewer" });
    if (member.lab === undefined) throw ServiceError.validation("You belong to no lab: an administrator sets your lab (or your identity token states it)", { field: "lab" });
    const theirs = await memberOf(reviewer);
    if (theirs.lab === undefined) {
      throw ServiceError.validation("The reviewer's lab is not known: they have not used the service with a token stating it, and no administrator set it in their record", { field: "reviewer" });
    }
    if (theirs.lab !== member.lab) throw ServiceError.validation("The reviewer is not in your lab", { field: "reviewer" });
    if (!theirs.roles.includes("reviewer") && !theirs.roles.includes("admin")) throw ServiceError.validation("The reviewer lacks role reviewer", { field: "reviewer" });
    const caseBytes = await deps.data.get(storageKeys.case(owner, caseNumber));
    const caseDocument = CaseDataSchema.safeParse(objectOf(caseBytes));
    if (caseBytes === null || !caseDocument.success) throw ServiceError.notFound("No such case", { caseNumber });
    const caseFiles = caseDocument.data.files.map((file) => file.id);
    const fileIds = [...new Set(body.fileIds ?? caseFiles)];
    if (fileIds.length === 0) throw ServiceError.validation("The case has no files to review", { field: "fileIds" });
    const pinned = new Map<string, Bytes>();
    const files: Review["files"] = [];
    for (const fileId of fileIds) {
      if (!caseFiles.includes(fileId)) throw ServiceError.validation(`File ${fileId} is not in the case`, { field: "fileIds", fileId });
      const bytes = await deps.data.get(annotationsKey({ owner, caseNumber }, fileId));
      if (bytes === null) throw ServiceError.validation(`File ${fileId} has no annotations to review`, { field: "fileIds", fileId });
      // A confirmation is written into the annotations object; anything else cannot carry one.
      if (objectOf(bytes) === null) throw ServiceError.validation(`File ${fileId}'s annotations are not a JSON object`, { field: "fileIds", fileId });
      pinned.set(fileId, bytes);
      const sha256 = await sha256Hex(bytes);
      files.push({ fileId, version: await pinnedVersion(annotationsKey({ owner, caseNumber }, fileId), sha256), sha256 });
    }
    const review: Review = {
      id: crypto.randomUUID(),
      owner,
      caseNumber,
      reviewer,
      lab: member.lab,
      kind: body.kind,
      blind: body.blind,
      state: "open",
      files,
      createdAt: clock.now().toISOString(),
      conclusions: [],
      signatures: [],
      confirmations: [],
    };
    await reviews.create(review, caseBytes, pinned);
    await step(c, review, "request", { files: fileIds });
    return answerJson(c, review, 201);
  });

  app.openapi(caseReviewsRoute, async (c) => {
    const parts = segments(c);
    const owner = decodeSegment(parts[1] ?? "", "uid");
    const caseNumber = decodeSegment(parts[2] ?? "", "caseNumber");
    const { actor } = await caller(c);
    if (actor.kind === "user" && actor.uid !== owner) await refuse(c, actor, "only the case owner lists its reviews", { userId: owner, caseNumber });
    return answerJson(c, { reviews: await reviews.ofCase(owner, caseNumber) }, 200);
  });

  app.openapi(inboxRoute, async (c) => {
    const uid = decodeSegment(segments(c)[1] ?? "", "uid");
    const { actor } = await caller(c);
    if (actor.kind === "user" && actor.uid !== uid) await refuse(c, actor, "another reviewer's inbox", { userId: uid });
    const role = actor.kind === "user" ? "reviewer" : "admin";
    return answerJson(c, { reviews: (await reviews.inbox(uid)).map((review) => seenBy(review, role)) }, 200);
  });

  app.openapi(readRoute, async (c) => {
    const id = decodeSegment(segments(c)[1] ?? "", "reviewId");
    const { review, role } = await partyTo(c, id, "either", false);
    const origin = config.publicUrl?.replace(/\/+$/, "") ?? new URL(c.req.url).origin;
    const { all: caseReviews } = await caseReviewsOf(review);
    const files = await Promise.all(review.files.map(async (file) => {
      let annotations = objectOf(await reviews.pinned(review.id, file.fileId));
      const blindNow = blindTo(review, role, file.fileId);
      // Every conclusion field is named withheld, present or not: which ones the owner filled in is a hint too.
      const withheld = blindNow ? [...OWNER_CONCLUSION_FIELDS] : undefined;
      if (blindNow && annotations !== null) {
        annotations = Object.fromEntries(Object.entries(annotations).filter(([field]) => !OWNER_CONCLUSION_FIELDS.includes(field)));
      }
      let imageUrl: string | undefined;
      try {
        imageUrl = deps.signImage === undefined ? undefined : await deps.signImage(origin, file.fileId, review.owner);
      } catch {
        imageUrl = undefined;
      }
      const changed = amended(review, file.fileId, await currentSha(annotationsKey(review, file.fileId)), caseReviews);
      return { ...file, sha256: blindNow ? null : file.sha256, changed, annotations, ...(withheld === undefined ? {} : { withheld }), ...(imageUrl === undefined ? {} : { imageUrl }) };
    }));
    const seen = seenBy(review, role);
    const shown = { ...seen, files: seen.files.map((file, i) => ({ ...file, changed: files[i]!.changed })) };
    return answerJson(c, { review: shown, case: objectOf(await reviews.pinnedCase(review.id)), files }, 200);
  });

  app.openapi({ ...conclusionRoute, middleware: limitBody(MAX_BODY_BYTES) }, async (c) => {
    const id = decodeSegment(segments(c)[1] ?? "", "reviewId");
    const { actor } = await partyTo(c, id, "reviewer", true);
    const body = await readBody(c, ConclusionRequestSchema);
    const conclusion: Conclusion = {
      fileId: body.fileId,
      reviewer: actor.kind === "user" ? actor.uid : "",
      supportLevel: body.supportLevel,
      ...(body.classType === undefined ? {} : { classType: body.classType }),
      ...(body.notes === undefined ? {} : { notes: body.notes }),
      recordedAt: clock.now().toISOString(),
    };
    const review = await reviews.update(id, (current) => {
      if (current.state !== "open") throw ServiceError.conflict(`The review is ${current.state}`, { state: current.state });
      if (!current.files.some((file) => file.fileId === body.fileId)) throw ServiceError.validation(`File ${body.fileId} is not in the review`, { field: "fileId" });
      if (current.conclusions.some((existing) => existing.fileId === body.fileId)) {
        throw ServiceError.conflict("A conclusion for this file is recorded already; it cannot be changed", { fileId: body.fileId });
      }
      return { ...current, conclusions: [...current.conclusions, conclusion] };
    });
    await step(c, review, "conclusion", { fileId: body.fileId });
    return answerJson(c, conclusion, 201);
  });

  app.openapi({ ...signatureRoute, middleware: limitBody(MAX_BODY_BYTES) }, async (c) => {
    const id = decodeSegment(segments(c)[1] ?? "", "reviewId");
    const { actor, review } = await partyTo(c, id, "reviewer", true);
    if (actor.kind !== "user") throw ServiceError.forbidden("Only the reviewer signs");
    const body = await readBody(c, SignatureRequestSchema);
    const file = review.files.find((candidate) => candidate.fileId === body.fileId);
    if (file === undefined) throw ServiceError.validation(`File ${body.fileId} is not in the review`, { field: "fileId" });
    // Stored reviews always hold the hash; only answers to a blind reviewer leave it out.
    const pinnedSha = file.sha256;
    if (pinnedSha === null) throw ServiceError.server("A stored review lacks a file's hash");
    if (review.state !== "open") throw ServiceError.conflict(`The review is ${review.state}`, { state: review.state });
    const now = clock.now();
    // Every signing request, a repeat too, needs the fresh sign-in.
    requireFreshSignIn(actor.authTime, now);
    const earlier = review.signatures.find((signature) => signature.fileId === body.fileId);
    const key = annotationsKey(review, body.fileId);
    const amendedConflict = () => ServiceError.conflict("The owner amended this file after the review opened: the pinned version can no longer be signed", { fileId: body.fileId, changed: true });
    if (earlier !== undefined) {
      // The same request again, for a signing a failure left under way: it is finished now.
      const underWay = review.signing?.find((each) => each.signature === earlier.jws);
      const same = earlier.signer === actor.uid && earlier.meaning === body.meaning && earlier.printedName === body.printedName && earlier.comment === body.comment;
      if (underWay === undefined || !same) throw ServiceError.conflict("This file is signed already", { fileId: body.fileId });
      const wait = leaseLeft(underWay, now);
      if (wait > 0) throw ServiceError.conflict("This signature is being written by another request: try again in a moment", { fileId: body.fileId, retryAfterSeconds: wait });
      // Taken over (if still under way in an open review): another request for it now waits a lease again.
      await reviews.update(id, (current) => {
        if (current.state !== "open") throw ServiceError.conflict(`The review is ${current.state}`, { state: current.state });
        if (!(current.signing ?? []).some((each) => each.signature === earlier.jws)) throw ServiceError.conflict("This file is signed already", { fileId: body.fileId });
        return { ...current, signing: (current.signing ?? []).map((each) => (each.signature === earlier.jws ? { ...each, since: now.toISOString() } : each)) };
      });
      await releasedOnFailure(id, earlier, completeSigning(c, id, earlier, underWay.confirmationId, actor, amendedConflict));
      return answerJson(c, earlier, 200);
    }
    if (review.blind && !review.conclusions.some((conclusion) => conclusion.fileId === body.fileId)) {
      throw ServiceError.conflict("A blind review is signed only after the reviewer's own conclusion for the file", { fileId: body.fileId });
    }
    if (amended(review, body.fileId, await currentSha(key), (await caseReviewsOf(review)).all)) throw amendedConflict();
    const signature = await signReview({
      fileId: body.fileId,
      signer: actor.uid,
      printedName: body.printedName,
      meaning: body.meaning,
      ...(body.comment === undefined ? {} : { comment: body.comment }),
      signedAt: now.toISOString(),
      record: { key, version: file.version, sha256: pinnedSha },
      reviewId: review.id,
    }, keys);
    if (signature === undefined) throw ServiceError.server("Signatures need AUDIT_SIGNING_KEY, which this service does not have", "unavailable");
    const confirmationId = signature.meaning === "verified" ? newConfirmationId() : undefined;
    // Listed first, as under way: one signature per file, and a failure from here on is finished by a repeat.
    await reviews.update(id, (current) => {
      if (current.state !== "open") throw ServiceError.conflict(`The review is ${current.state}`, { state: current.state });
      if (current.signatures.some((existing) => existing.fileId === body.fileId)) throw ServiceError.conflict("This file is signed already", { fileId: body.fileId });
      const underWay = { fileId: body.fileId, signature: signature.jws, ...(confirmationId === undefined ? {} : { confirmationId }), since: now.toISOString() };
      return { ...current, signatures: [...current.signatures, signature], signing: [...(current.signing ?? []), underWay] };
    });
    await releasedOnFailure(id, signature, completeSigning(c, id, signature, confirmationId, actor, amendedConflict));
    return answerJson(c, signature, 201);
  });

  /**
   * Seconds until another request may take `underWay` over (0: now). A start dated ahead of this
   * clock (another process's clock ahead by up to the allowed skew) holds the lease that much
   * longer; one further ahead (a tampered record, a clock set back) holds nothing.
   */
  const leaseLeft = (underWay: SigningUnderWay, now: Date): number => {
    const age = (now.getTime() - Date.parse(underWay.since)) / 1000;
    const skew = config.identity?.clockSkewSeconds ?? 30;
    return age > -(skew + SIGNING_LEASE_SECONDS) && age < SIGNING_LEASE_SECONDS ? Math.ceil(SIGNING_LEASE_SECONDS - age) : 0;
  };
  /**
   * Where bytes a try of this signing wrote are in the annotations at `key`: the version (null
   * without history) and hash, or undefined when none of its tries' hashes was ever stored there.
   * A confirmation of it the review lists as written counts (without history, the only record
   * once the owner wrote over it).
   */
  const landed = async (key: string, underWay: SigningUnderWay | undefined, review?: Review): Promise<{ sha256: string; version: number | null } | undefined> => {
    const listed = underWay?.confirmationId === undefined ? undefined : review?.confirmations.find((each) => each.confirmationId === underWay.confirmationId);
    if (listed !== undefined) return { sha256: listed.sha256, version: listed.version };
    const hashes = new Set(underWay?.sha256s ?? []);
    if (hashes.size === 0) return undefined;
    const found = await historyVersion(key, hashes);
    if (found !== undefined) return found;
    const sha = await currentSha(key);
    return sha !== null && hashes.has(sha) ? { sha256: sha, version: null } : undefined;
  };
  /** The oldest version of `key`'s history whose bytes have one of `hashes` (none without history). */
  const historyVersion = async (key: string, hashes: ReadonlySet<string>): Promise<{ sha256: string; version: number } | undefined> => {
    const found = histories === undefined ? undefined : (await histories.list(key))?.versions.find((version) => hashes.has(version.sha256));
    return found === undefined ? undefined : { sha256: found.sha256, version: found.version };
  };

  /**
   * Everything after a signature is listed as under way: a `verified` one's confirmation written
   * (once, whichever request gets there), listed as written, the audit steps, then the signing
   * taken off the list (the review completed if it was the last). When the confirmation surely
   * was not written because the file was amended, the signature is taken back and this throws
   * `amendedConflict()`; a store failure leaves it under way for a repeat.
   */
  const completeSigning = async (
    c: Context<WorkerEnv>,
    id: string,
    signature: ReviewSignature,
    confirmationId: string | undefined,
    actor: { uid: string; email?: string | undefined },
    amendedConflict: () => ServiceError,
  ) => {
    let written: { confirmationId: string; version: number | null; sha256: string } | undefined;
    if (confirmationId !== undefined) {
      const outcome = await confirm(id, signature, confirmationId, actor);
      if (outcome.kind !== "written") {
        // Another request (a repeat that took it over) finished it meanwhile, steps and all.
        const now = await loadReview(id);
        const finished = now.signatures.some((existing) => existing.jws === signature.jws) && !(now.signing ?? []).some((each) => each.signature === signature.jws);
        if (finished && now.confirmations.some((each) => each.confirmationId === confirmationId)) return;
        await withdraw(id, signature);
        throw outcome.kind === "amended" ? amendedConflict() : outcome.cause;
      }
      written = { confirmationId, version: outcome.version, sha256: outcome.sha256 };
    }
    const listed = written === undefined ? undefined : { fileId: signature.fileId, ...written };
    const signed = listed === undefined ? await loadReview(id) : await reviews.update(id, (current) => ({
      ...current,
      // Landed, so listed: a signature another request took back meanwhile is listed again.
      signatures: current.signatures.some((existing) => existing.jws === signature.jws) ? current.signatures : [...current.signatures, signature],
      confirmations: [...current.confirmations.filter((each) => each.confirmationId !== listed.confirmationId), listed],
    }));
    await step(c, signed, "signature", { fileId: signature.fileId, meaning: signature.meaning }, written?.confirmationId);
    // The completion step before the state that records it: a failure between them logs it twice on the repeat, never not at all.
    const completes = (review: Review, signing: readonly SigningUnderWay[]) =>
      review.state === "open" && signing.length === 0 && review.files.every((each) => review.signatures.some((existing) => existing.fileId === each.fileId));
    const remaining = (review: Review) => (review.signing ?? []).filter((each) => each.signature !== signature.jws);
    let logged = false;
    if (completes(signed, remaining(signed))) {
      await step(c, { ...signed, state: "completed" }, "completion");
      logged = true;
    }
    let completedNow = false;
    const done = await reviews.update(id, (current) => {
      const signing = remaining(current);
      completedNow = completes(current, signing);
      return { ...current, signing, ...(completedNow ? { state: "completed" as const, completedAt: clock.now().toISOString() } : {}) };
    });
    // Another file's signing finished between the read and the update: this one completed it.
    if (completedNow && !logged) await step(c, done, "completion");
  };

  /** `work`, after whose failure the signing it was finishing no longer keeps a repeat waiting (best effort: a store that failed may fail again). */
  const releasedOnFailure = async (id: string, signature: ReviewSignature, work: Promise<void>) => {
    try {
      await work;
    } catch (err) {
      await reviews.update(id, (current) => ({
        ...current,
        signing: (current.signing ?? []).map((each) => (each.signature === signature.jws ? { ...each, since: new Date(0).toISOString() } : each)),
      })).catch(() => undefined);
      throw err;
    }
  };
  /**
   * Takes back a listed signature whose confirmation was not written: only while its signing is
   * still under way, none of its tries' bytes ever landed and no confirmation of it is listed.
   */
  const withdraw = async (id: string, signature: ReviewSignature) => {
    const underWay = (await loadReview(id)).signing?.find((each) => each.signature === signature.jws);
    if (underWay === undefined || (await landed(signature.record.key, underWay)) !== undefined) return;
    await reviews.update(id, (current) => {
      const still = (current.signing ?? []).find((each) => each.signature === signature.jws);
      if (still === undefined || current.confirmations.some((each) => each.confirmationId === still.confirmationId)) return current;
      // A try that recorded another hash since the check above may be landing: left for a repeat to settle.
      if ((still.sha256s ?? []).join() !== (underWay.sha256s ?? []).join()) return current;
      return {
        ...current,
        signatures: current.signatures.filter((existing) => existing.jws !== signature.jws),
        signing: (current.signing ?? []).filter((each) => each.signature !== signature.jws),
      };
    });
  };

  /**
   * Writes a `verified` signature's confirmation (sealed) over annotations still the pinned
   * version, once per signature: bytes an earlier try of it wrote (by the hashes its tries
   * recorded, in the history or as the current value) are answered as written.
   */
  const confirm = async (id: string, signature: ReviewSignature, confirmationId: string, actor: { uid: string; email?: string | undefined }): Promise<ConfirmationOutcome> => {
    const key = signature.record.key;
    const review = await loadReview(id);
    const earlier = await landed(key, review.signing?.find((each) => each.signature === signature.jws), review);
    if (earlier !== undefined) return { kind: "written", confirmationId, ...earlier, earlier: true };
    const confirmation = { ...confirmationOf(signature, actor.email), confirmationId };
    const outcome = await writeConfirmation(updateAnnotations(actor.uid), key, confirmation, {
      judge: async (sha) => {
        // Read inside the update: another try may have recorded its bytes, another review listed its confirmation.
        const review = await loadReview(id);
        if ((review.signing?.find((each) => each.signature === signature.jws)?.sha256s ?? []).includes(sha)) return "earlier";
        if (review.state !== "open") throw ServiceError.conflict(`The review is ${review.state}`, { state: review.state });
        const all = await reviews.ofCase(review.owner, review.caseNumber);
        return unamendedHashes(review, signature.fileId, all).has(sha) ? "accepted" : "amended";
      },
      seal: (annotations) => sealConfirmation(signature.jws, annotations, keys),
      // Recorded before the bytes are written: a repeat, a retry and other reviews of the file know them as this signing's.
      beforeWrite: async (sha256) => {
        await reviews.update(id, (current) => {
          if (current.state !== "open") throw ServiceError.conflict(`The review is ${current.state}`, { state: current.state });
          if (!(current.signing ?? []).some((each) => each.signature === signature.jws)) throw ServiceError.conflict("This signature is no longer under way", { fileId: signature.fileId });
          const signing = (current.signing ?? []).map((each) => (each.signature === signature.jws ? { ...each, sha256s: [...(each.sha256s ?? []), sha256].slice(-MAX_TRIES_KEPT) } : each));
          return { ...current, signing };
        });
      },
    });
    // Found written by an earlier try inside the update: its version, from the history.
    if (outcome.kind === "written" && outcome.earlier) return { ...outcome, version: (await historyVersion(key, new Set([outcome.sha256])))?.version ?? null };
    return outcome;
  };

  app.openapi(cancelRoute, async (c) => {
    const id = decodeSegment(segments(c)[1] ?? "", "reviewId");
    const { review: before } = await partyTo(c, id, "owner", true);
    const now = clock.now();
    if (before.state !== "open") throw ServiceError.conflict(`The review is ${before.state}; only an open review is cancelled`, { state: before.state });
    // Signings a failure left under way are settled first, without the reviewer: a confirmation that
    // landed is listed with its signature; a `verified` one that never landed goes with its signature.
    const settled = new Map<string, { keep: boolean; listed?: Review["confirmations"][number] }>();
    for (const underWay of before.signing ?? []) {
      const wait = leaseLeft(underWay, now);
      if (wait > 0) throw ServiceError.conflict("A signature of this review is being written: try again in a moment", { fileId: underWay.fileId, retryAfterSeconds: wait });
      if (underWay.confirmationId === undefined) {
        settled.set(underWay.signature, { keep: true });
        continue;
      }
      const found = await landed(annotationsKey(before, underWay.fileId), underWay, before);
      settled.set(underWay.signature, found === undefined ? { keep: false } : { keep: true, listed: { fileId: underWay.fileId, confirmationId: underWay.confirmationId, ...found } });
    }
    const review = await reviews.update(id, (current) => {
      if (current.state !== "open") throw ServiceError.conflict(`The review is ${current.state}; only an open review is cancelled`, { state: current.state });
      // A signing that began, or wrote a try, since the checks above is decided by the next request.
      for (const underWay of current.signing ?? []) {
        const checked = before.signing?.find((each) => each.signature === underWay.signature);
        if (checked === undefined || (checked.sha256s ?? []).join() !== (underWay.sha256s ?? []).join() || leaseLeft(underWay, now) > 0) {
          throw ServiceError.conflict("A signature of this review is being written: try again in a moment", { fileId: underWay.fileId });
        }
      }
      const dropped = new Set([...settled].filter(([, outcome]) => !outcome.keep).map(([jws]) => jws));
      const listed = [...settled.values()].flatMap((outcome) => (outcome.listed !== undefined && !current.confirmations.some((each) => each.confirmationId === outcome.listed!.confirmationId) ? [outcome.listed] : []));
      return {
        ...current,
        signatures: current.signatures.filter((signature) => !dropped.has(signature.jws)),
        confirmations: [...current.confirmations, ...listed],
        signing: [],
        state: "cancelled",
        cancelledAt: now.toISOString(),
      };
    });
    await step(c, review, "cancellation");
    return answerJson(c, review, 200);
  });

  app.openapi(verifyRoute, async (c) => {
    const id = decodeSegment(segments(c)[1] ?? "", "reviewId");
    const { review } = await partyTo(c, id, "either", false);
    const jwks = await publishedKeys(keys);
    const { all: caseReviews } = await caseReviewsOf(review);
    const signatures = await Promise.all(review.signatures.map(async (signature: ReviewSignature, index) => {
      const checked = await checkReviewSignature(signature, jwks);
      if (!checked.valid) return { fileId: signature.fileId, status: "invalid" as const, ...(checked.reason === undefined ? {} : { reason: checked.reason }) };
      // A genuine signature of another review, signer, record or version is no signature of this one.
      const unbound = signatureBindingProblem(review, signature, annotationsKey(review, signature.fileId), index);
      if (unbound !== undefined) return { fileId: signature.fileId, status: "invalid" as const, reason: unbound };
      const sha = await currentSha(signature.record.key);
      return amended(review, signature.fileId, sha, caseReviews)
        ? { fileId: signature.fileId, status: "stale" as const, reason: "the annotations changed after the signature" }
        : { fileId: signature.fileId, status: "valid" as const };
    }));
    return answerJson(c, { signatures }, 200);
  });

  app.all("/keys", methodNotAllowed(["GET"]));
  // A route that exists answers another method with 405 and Allow, as on every worker.
  const allowed: [string, string[]][] = [
    ["/cases/:uid/:caseNumber", ["GET", "POST"]],
    ["/inbox/:uid", ["GET"]],
    ["/r/:id", ["GET", "DELETE"]],
    ["/r/:id/conclusions", ["POST"]],
    ["/r/:id/signatures", ["POST"]],
    ["/r/:id/verify", ["GET"]],
  ];
  for (const [path, methods] of allowed) app.all(path, methodNotAllowed(methods));
  app.all("/*", (c) => {
    throw ServiceError.notFound("No such review route", { path: routePathAfterMount(c) });
  });
  return app;
}
