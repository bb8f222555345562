/**
 * @module
 * The user worker (docs/api.md#user-worker): user records and their case lists, the account deletion
 * of rule 4 (see `users/account-deletion.ts`), and the administrators' legal holds (docs/api.md#legal-holds). `X-Custom-Auth-Key: USER_DB_AUTH`; a missing
 * or wrong key is 401 (docs/api.md#worker-credentials).
 */
import * as z from "zod";
import type { Context } from "hono";
import { createRoute } from "../http/openapi-app.ts";
import { tagged } from "../http/openapi-tags.ts";
import { keyedSecurity } from "../http/credentials-doc.ts";
import type { Clock, KvStore, Mailer } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { authKeyCheck } from "../http/auth.ts";
import { readBody } from "../http/body.ts";
import { limitBody } from "../http/limits.ts";
import { redactSecrets, ServiceError } from "../errors.ts";
import { answerJson, answerJsonText, createWorkerApp, errorResponses, methodNotAllowed, routePathAfterMount } from "../http/worker-app.ts";
import type { WorkerApp } from "../http/worker-app.ts";
import { checkSegment, decodeSegment } from "../storage/keys.ts";
import {
  type CaseAssignment,
  CasesAddBodySchema,
  CasesDeleteBodySchema,
  type UserData,
  UserDataSchema,
  UserDeleteFailureSchema,
  UserDeleteResponseSchema,
  type UserList,
  UserListSchema,
  UserPutBodySchema,
} from "../schemas/user.ts";
import { listUsers } from "../users/user-list.ts";
import type { CaseStore } from "../cases/case-store.ts";
import { deleteAccount } from "../users/account-deletion.ts";
import { limitsFor } from "../users/limits.ts";
import { userRecords } from "../users/user-records.ts";
import { type AccessControl, accessControl, protect, recordEvent, requireOwner } from "../http/access.ts";
import { actorOf } from "../http/actor.ts";
import { routeFor } from "../rate-limit/rules.ts";
import { isAdministrator } from "../users/lab-membership.ts";
import type { WorkerEnv } from "../http/worker-app.ts";
import { HoldLiftBodySchema, HoldPlaceBodySchema, type LegalHold, LegalHoldsSchema } from "../schemas/hold.ts";
import { heldConflict, legalHoldStore } from "../users/legal-holds.ts";
import { administratorName, requireAdministrator } from "../http/administrator.ts";
import { caseFileIds } from "../cases/case-store.ts";

/** Ports and configuration of the user worker. */
export interface UserWorkerDeps {
  /** The user store (`USER_DB`). */
  users: KvStore;
  /** Cases, annotations and images, removed on account deletion. */
  resources: CaseStore;
  /** Sends the account-deletion mails. */
  mailer: Mailer;
  /** Dates records, case assignments and mails. */
  clock: Clock;
  /** `USER_DB_AUTH`, limits, `MAIL_FROM`, `ADMIN_EMAIL`, CORS. */
  config: Pick<ServiceConfig, "allowedOrigin" | "userDbAuth" | "selfRegistration" | "limits" | "demoLimits" | "mailFrom" | "adminEmail" | "identity" | "adminAuth" | "rateLimits">;
  /**
   * Identity, admin key, rate limits and service audit entries; default from `config`, without an audit store.
   * Shared by the workers `createService` mounts together; internal.
   *
   * @ignore
   */
  access?: AccessControl;
}

const MAX_BODY_BYTES = 1024 * 1024;
/** The body of docs/api.md#user-worker, fixed by the specification. */
export const DELETION_MAIL_FAILURE_MESSAGE =
  "Account deletion failed because confirmation emails could not be sent. The account was not deleted; try again later.";

// `{userUid}` is checked and decoded by the handler itself (parsePath): the parameter is in the document only.
const UidParams = z.object({ userUid: z.string() });
const NO_SUCH_ROUTE = "No such route: /{userUid}, /{userUid}/cases or /{userUid}/holds";

const userContent = { "application/json": { schema: UserDataSchema } };
/** A JSON body the handler reads itself (strict UTF-8, depth limit, the 400 naming the field). */
const jsonBody = <S extends z.ZodType>(schema: S) => ({ required: true, content: { "application/json": { schema } } });
const listUsersRoute = createRoute({
  tags: tagged("user"),
  method: "get",
  path: "/",
  summary: "List every user (administrator only: X-Admin-Key besides the worker key)",
  operationId: "listUsers",
  security: keyedSecurity("userKey"),
  responses: {
    200: { description: "Every user, by uid", content: { "application/json": { schema: UserListSchema } } },
    ...errorResponses({ 401: "Bad key", 403: "Not the admin key" }),
  },
});
const readUserRoute = createRoute({
  tags: tagged("user"),
  method: "get",
  path: "/{userUid}",
  summary: "Read a user record",
  operationId: "readUser",
  security: keyedSecurity("userKey"),
  documented: { request: { params: UidParams } },
  responses: { 200: { description: "The record", content: userContent }, ...errorResponses({ 401: "Bad key", 404: "No such user" }) },
});
const writeUserRoute = createRoute({
  tags: tagged("user"),
  method: "put",
  path: "/{userUid}",
  summary: "Create (201) or update (200) a user; cases are kept, absent fields keep their value",
  operationId: "writeUser",
  security: keyedSecurity("userKey"),
  documented: { request: { params: UidParams, body: jsonBody(UserPutBodySchema) } },
  responses: {
    200: { description: "Updated", content: userContent },
    201: { description: "Created", content: userContent },
    ...errorResponses({ 400: "Invalid body", 401: "Bad key" }),
  },
});
const deleteUserRoute = createRoute({
  tags: tagged("user"),
  method: "delete",
  path: "/{userUid}",
  summary: "Delete the account: cases, files, images, two mails, then the record",
  operationId: "deleteUser",
  security: keyedSecurity("userKey"),
  documented: { request: { params: UidParams } },
  responses: {
    200: { description: "Deleted", content: { "application/json": { schema: UserDeleteResponseSchema } } },
    500: { description: "Mails could not be sent (the record is kept), or a store failed", content: { "application/json": { schema: UserDeleteFailureSchema } } },
    ...errorResponses({ 401: "Bad key", 404: "No such user", 409: "A case is on legal hold: nothing was deleted" }),
  },
});
const assignCasesRoute = createRoute({
  tags: tagged("user"),
  method: "put",
  path: "/{userUid}/cases",
  summary: "Assign case numbers (duplicates dropped)",
  operationId: "addUserCases",
  security: keyedSecurity("userKey"),
  documented: { request: { params: UidParams, body: jsonBody(CasesAddBodySchema) } },
  responses: {
    200: { description: "The updated record", content: userContent },
    ...errorResponses({ 400: "Invalid body", 401: "Bad key", 403: "Case limit reached", 404: "No such user" }),
  },
});
const holdsContent = { "application/json": { schema: LegalHoldsSchema } };
const adminOnly = "Administrators only: the user worker's key and `X-Admin-Key`, or an identity token with role admin (docs/api.md#legal-holds).";
const readHoldsRoute = createRoute({
  tags: tagged("user"),
  method: "get",
  path: "/{userUid}/holds",
  summary: "List the user's legal holds",
  description: adminOnly,
  operationId: "readLegalHolds",
  security: keyedSecurity("userKey"),
  documented: { request: { params: UidParams } },
  responses: { 200: { description: "The holds (empty when none)", content: holdsContent }, ...errorResponses({ 401: "Bad key", 403: "Not an administrator" }) },
});
const placeHoldRoute = createRoute({
  tags: tagged("user"),
  method: "put",
  path: "/{userUid}/holds",
  summary: "Put a case on legal hold (201), or record a new reason for a held one (200)",
  description: `${adminOnly} While a case is held, deleting any of its documents or images, removing it from the case list and deleting the account answer 409; writes still work.`,
  operationId: "placeLegalHold",
  security: keyedSecurity("userKey"),
  documented: { request: { params: UidParams, body: jsonBody(HoldPlaceBodySchema) } },
  responses: {
    200: { description: "The case was already held: its reason is updated", content: holdsContent },
    201: { description: "Held", content: holdsContent },
    ...errorResponses({ 400: "Invalid body", 401: "Bad key", 403: "Not an administrator" }),
  },
});
const liftHoldRoute = createRoute({
  tags: tagged("user"),
  method: "delete",
  path: "/{userUid}/holds",
  summary: "Lift the legal hold on a case",
  description: adminOnly,
  operationId: "liftLegalHold",
  security: keyedSecurity("userKey"),
  documented: { request: { params: UidParams, body: jsonBody(HoldLiftBodySchema) } },
  responses: {
    200: { description: "Lifted: the holds left", content: holdsContent },
    ...errorResponses({ 400: "Invalid body", 401: "Bad key", 403: "Not an administrator", 404: "The case is not held" }),
  },
});
const removeCasesRoute = createRoute({
  tags: tagged("user"),
  method: "delete",
  path: "/{userUid}/cases",
  summary: "Remove case assignments (the case documents stay)",
  operationId: "removeUserCases",
  security: keyedSecurity("userKey"),
  documented: { request: { params: UidParams, body: jsonBody(CasesDeleteBodySchema) } },
  responses: {
    200: { description: "The updated record", content: userContent },
    ...errorResponses({ 400: "Invalid body", 401: "Bad key", 404: "No such user", 409: "A case to remove is on legal hold" }),
  },
});

/** `{userUid}` and whether the path is `/{userUid}/cases` or `/{userUid}/holds`, decoded once and checked. */
function parsePath(c: Context): { uid: string; cases: boolean; holds: boolean } {
  const parts = routePathAfterMount(c).split("/");
  if (parts.length === 1 || (parts.length === 2 && (parts[1] === "cases" || parts[1] === "holds"))) {
    return { uid: decodeSegment(parts[0]!, "userUid"), cases: parts[1] === "cases", holds: parts[1] === "holds" };
  }
  throw ServiceError.notFound(NO_SUCH_ROUTE);
}

/** A client's ISO 8601 date-time kept as sent, or undefined when it is not one. */
function isoDateTime(value: unknown): string | undefined {
  return IsoDateTimeSchema.safeParse(value).success ? value as string : undefined;
}
// The check audit timestamps use: zod's ISO 8601 date-time with an offset or Z.
const IsoDateTimeSchema = z.iso.datetime({ offset: true });

/** The `{userUid}` of a path, for the admin's audit entry; undefined when unreadable. */
function uidOf(c: Context): string | undefined {
  try {
    return parsePath(c).uid;
  } catch {
    return undefined;
  }
}

/** The user worker's app, with the types of its routes (for hono's `hc` client). */
export type UserWorkerApp = ReturnType<typeof userWorker>;

/** Creates the user worker: `/{userUid}`, `/{userUid}/cases` and `/{userUid}/holds`. */
export function createUserWorker(deps: UserWorkerDeps): WorkerApp {
  return userWorker(deps);
}

/** The user worker, its type inferred from its routes. */
function userWorker(deps: UserWorkerDeps) {
  const { config, clock } = deps;
  const records = userRecords(deps.users);
  const holds = legalHoldStore(deps.users);
  const app = createWorkerApp({ allowedOrigin: config.allowedOrigin, methods: ["GET", "PUT", "DELETE"] });
  const access = deps.access ?? accessControl(config, { clock });
  protect(app, access, {
    status: 401,
    route: (c) => routeFor(c.req.method, "user.read", "user.write"),
    credential: authKeyCheck({ keys: [config.userDbAuth], status: 401, variable: "USER_DB_AUTH" }),
    targetOf: (c) => uidOf(c),
  });
  // Identity mode: `{userUid}` is the token's user (or the admin acts).
  const ownPath = async (c: Context<WorkerEnv>) => {
    const path = parsePath(c);
    await requireOwner(c, access, path.uid);
    return path;
  };
  // Each route's own shape; the router already matched it, so this only guards the raw path.
  const ownPathOf = async (c: Context<WorkerEnv>, cases: boolean) => {
    const path = await ownPath(c);
    if (path.cases !== cases || path.holds) throw ServiceError.notFound(NO_SUCH_ROUTE);
    return path;
  };
  const isSelf = (c: Context<WorkerEnv>) => access.identity !== undefined && actorOf(c)?.kind === "user";
  // docs/review.md#labs-and-roles: a lab's administrator (a token with role admin) writes any member's record.
  const labAdministrator = async (c: Context<WorkerEnv>): Promise<boolean> => {
    const actor = actorOf(c);
    return actor?.kind === "user" && await isAdministrator(actor, records);
  };
  // Once identity tokens are on, only the admin key raises an existing record's `permitted`.
  const refuseSelfPermit = (c: Context<WorkerEnv>, wanted: boolean | undefined, current: boolean) => {
    if (isSelf(c) && wanted === true && !current) {
      throw ServiceError.forbidden("Only an administrator can set permitted: true", { field: "permitted" });
    }
  };
  // A user creating their own record (sign-up) gets what SELF_REGISTRATION allows.
  const selfRegisteredPermit = (c: Context<WorkerEnv>, wanted: boolean): boolean => {
    if (!isSelf(c)) return wanted;
    if (config.selfRegistration === "closed") {
      throw ServiceError.forbidden("Self-registration is closed on this service: an administrator creates accounts");
    }
    return config.selfRegistration === "demo" ? false : wanted;
  };
  const profileUpdated = (c: Context<WorkerEnv>, uid: string, change: string) =>
    recordEvent(c, access, { userId: uid, action: "user-profile-update", result: "success", details: { workflowPhase: "user-management", userProfileDetails: { change } } });

  const notFound = (uid: string) => ServiceError.notFound("User not found", { userUid: uid });

  // The worker key alone is in every browser client (the keys worker hands it out): listing who uses the service is the admin's.
  const listRecords = async (c: Context<WorkerEnv>) => {
    if (actorOf(c)?.kind !== "admin") throw ServiceError.forbidden("Listing users needs the admin key (X-Admin-Key: ADMIN_AUTH)", { header: "X-Admin-Key" });
    const users = await listUsers(deps.users, records);
    return answerJson<UserList, 200>(c, { users }, 200);
  };

  const readRecord = async (c: Context<WorkerEnv>) => {
    const { uid, cases, holds } = await ownPath(c);
    if (cases || holds) throw ServiceError.methodNotAllowed(["PUT", "DELETE"]);
    // The record as validated when it was last read, not parsed again while it is unchanged.
    const answer = await records.answer(uid);
    if (answer === null) throw notFound(uid);
    return answerJsonText<UserData, 200>(c, answer, 200);
  };

  const assignCases = async (c: Context<WorkerEnv>) => {
    const { uid } = await ownPathOf(c, true);
    const now = clock.now().toISOString();
    const body = await readBody(c, CasesAddBodySchema);
    for (const entry of body.cases) checkSegment(entry.caseNumber, "caseNumber");
    const user = await records.update(uid, (current) => {
      if (current === null) throw notFound(uid);
      const have = new Set(current.cases.map((assignment) => assignment.caseNumber));
      const added = new Map<string, CaseAssignment>();
      for (const entry of body.cases) {
        if (have.has(entry.caseNumber) || added.has(entry.caseNumber)) continue;
        added.set(entry.caseNumber, { ...entry, caseNumber: entry.caseNumber, createdAt: isoDateTime(entry.createdAt) ?? now });
      }
      const { maxCases } = limitsFor(current, config);
      if (added.size > 0 && current.cases.length + added.size > maxCases) {
        throw ServiceError.forbidden(`Case limit reached: this account may hold ${maxCases} case(s)`);
      }
      const next = { ...current, cases: [...current.cases, ...added.values()], updatedAt: now };
      return { next, result: next };
    });
    await profileUpdated(c, uid, "cases-added");
    return answerJson(c, user, 200);
  };
  const writeRecord = async (c: Context<WorkerEnv>) => {
    const administrator = await labAdministrator(c);
    const { uid } = administrator ? parsePath(c) : await ownPathOf(c, false);
    if (administrator && parsePath(c).cases) throw ServiceError.notFound(NO_SUCH_ROUTE);
    const now = clock.now().toISOString();
    const body = await readBody(c, UserPutBodySchema);
    // Lab and roles decide who may review whom: only an administrator sets them.
    if ((body.lab !== undefined || body.roles !== undefined) && !administrator && actorOf(c)?.kind !== "admin") {
      throw ServiceError.forbidden("Only an administrator (the admin key, or an identity token with role admin) may set lab or roles", { fields: ["lab", "roles"].filter((field) => body[field as "lab" | "roles"] !== undefined) });
    }
    const { user, created } = await records.update(uid, (current) => {
      if (current === null) {
        const missing = (["email", "firstName", "lastName", "company", "permitted"] as const).filter((field) => body[field] === undefined);
        if (missing.length > 0) {
          throw ServiceError.validation(`Creating a user needs ${missing.join(", ")}`, { fields: missing });
        }
        const next: UserData = UserDataSchema.parse({
          uid,
          email: body.email,
          firstName: body.firstName,
          lastName: body.lastName,
          company: body.company,
          permitted: administrator ? body.permitted === true : selfRegisteredPermit(c, body.permitted === true),
          cases: [],
          ...(body.readOnlyCases !== undefined ? { readOnlyCases: body.readOnlyCases } : {}),
          ...(body.lab !== undefined ? { lab: body.lab } : {}),
          ...(body.roles !== undefined ? { roles: body.roles } : {}),
          createdAt: now,
        });
        return { next, result: { user: next, created: true } };
      }
      if (!administrator) refuseSelfPermit(c, body.permitted, current.permitted);
      // An absent field keeps its value, and so does "" (the Striae client's profile edit sends
      // "" for a name it does not know); cases are never replaced here (rule 1).
      const defined = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined && value !== ""));
      const next: UserData = { ...current, ...defined, uid, cases: current.cases, updatedAt: now };
      return { next, result: { user: next, created: false } };
    });
    await profileUpdated(c, uid, created ? "created" : "updated");
    const text = JSON.stringify(user);
    return created ? answerJsonText<UserData, 201>(c, text, 201) : answerJsonText<UserData, 200>(c, text, 200);
  };

  const removeCases = async (c: Context<WorkerEnv>) => {
    const { uid } = await ownPathOf(c, true);
    const body = await readBody(c, CasesDeleteBodySchema);
    const remove = new Set(body.casesToDelete);
    const held = (await holds.list(uid)).find((hold) => remove.has(hold.caseNumber));
    if (held !== undefined) throw heldConflict(uid, held, "removing it from the case list");
    const user = await records.update(uid, (current) => {
      if (current === null) throw notFound(uid);
      // Only the assignments go (rule 3); the case documents stay.
      const next: UserData = {
        ...current,
        cases: current.cases.filter((assignment) => !remove.has(assignment.caseNumber)),
        ...(current.readOnlyCases !== undefined
          ? { readOnlyCases: current.readOnlyCases.filter((readOnly) => !remove.has(readOnly.caseNumber)) }
          : {}),
        updatedAt: clock.now().toISOString(),
      };
      return { next, result: next };
    });
    await profileUpdated(c, uid, "cases-removed");
    return answerJson(c, user, 200);
  };
  const deleteUser = async (c: Context<WorkerEnv>) => {
    const { uid } = await ownPathOf(c, false);
    const outcome = await deleteAccount({ users: records, holds, resources: deps.resources, mailer: deps.mailer, clock, config }, uid);
    if (outcome.status === "not-found") throw notFound(uid);
    const deletion = { userId: uid, action: "user-account-delete" as const, details: { workflowPhase: "user-management" as const } };
    if (outcome.status === "mail-failed") {
      console.error(redactSecrets(`user worker: account deletion of ${uid} stopped before the record: ${outcome.reason}`));
      await recordEvent(c, access, { ...deletion, result: "failure" });
      return answerJson(c, { success: false as const, message: DELETION_MAIL_FAILURE_MESSAGE }, 500);
    }
    await recordEvent(c, access, { ...deletion, result: "success" });
    return answerJson(c, { success: true as const, message: `Account ${uid} and its ${outcome.summary.casesDeleted} case(s) were deleted` }, 200);
  };
  // Legal holds: the path's user (checked like every path), then the administrator.
  // A token with role admin acts on any user's holds, as on any user's record (docs/review.md#labs-and-roles).
  const holdsPath = async (c: Context<WorkerEnv>, action: string) => {
    const administrator = await labAdministrator(c);
    const path = administrator ? parsePath(c) : await ownPath(c);
    if (!path.holds) throw ServiceError.notFound(NO_SUCH_ROUTE);
    if (!administrator) await requireAdministrator(c, records, action);
    return path.uid;
  };
  const holdsAnswer = (uid: string, list: LegalHold[]) => ({ userUid: uid, holds: list });
  const holdEvent = (c: Context<WorkerEnv>, uid: string, hold: LegalHold, change: "placed" | "reason-updated" | "lifted") =>
    recordEvent(c, access, {
      userId: uid,
      action: change === "lifted" ? "legal-hold-lift" : "legal-hold-place",
      result: "success",
      details: { caseNumber: hold.caseNumber, workflowPhase: "user-management", userProfileDetails: { legalHold: { change, reason: hold.reason, heldAt: hold.heldAt, heldBy: hold.heldBy } } },
    });
  const readHolds = async (c: Context<WorkerEnv>) => {
    const uid = await holdsPath(c, "Reading legal holds");
    return answerJson(c, holdsAnswer(uid, await holds.list(uid)), 200);
  };
  const placeHold = async (c: Context<WorkerEnv>) => {
    const uid = await holdsPath(c, "Putting a case on legal hold");
    const body = await readBody(c, HoldPlaceBodySchema);
    const caseNumber = checkSegment(body.caseNumber, "caseNumber");
    // The case's images as its document lists them now: a later write dropping one does not free it.
    const imageIds = await caseFileIds(deps.resources, uid, caseNumber) ?? [];
    const hold: LegalHold = { caseNumber, reason: body.reason, heldAt: clock.now().toISOString(), heldBy: administratorName(actorOf(c)), imageIds };
    const change = await holds.place(uid, hold);
    await holdEvent(c, uid, change.hold, change.placed ? "placed" : "reason-updated");
    const answer = holdsAnswer(uid, change.holds);
    return change.placed ? answerJson(c, answer, 201) : answerJson(c, answer, 200);
  };
  const liftHold = async (c: Context<WorkerEnv>) => {
    const uid = await holdsPath(c, "Lifting a legal hold");
    const body = await readBody(c, HoldLiftBodySchema);
    const caseNumber = checkSegment(body.caseNumber, "caseNumber");
    const change = await holds.lift(uid, caseNumber);
    if (change === null) throw ServiceError.notFound(`Case ${caseNumber} of user ${uid} is not on legal hold`, { userUid: uid, caseNumber });
    await holdEvent(c, uid, change.hold, "lifted");
    return answerJson(c, holdsAnswer(uid, change.holds), 200);
  };
  // Paths of no other shape: the same checks refuse them as before (400, 404, or 405 for GET on cases).
  const otherPath = async (c: Context<WorkerEnv>): Promise<Response> => {
    await ownPath(c);
    throw ServiceError.notFound(NO_SUCH_ROUTE);
  };
  const bodyLimit = limitBody(MAX_BODY_BYTES);
  const routed = app
    .openapi(listUsersRoute, (c) => listRecords(c))
    .openapi(readUserRoute, (c) => readRecord(c))
    .openapi({ ...writeUserRoute, middleware: bodyLimit }, (c) => writeRecord(c))
    .openapi({ ...deleteUserRoute, middleware: bodyLimit }, (c) => deleteUser(c))
    .openapi({ ...assignCasesRoute, middleware: bodyLimit }, (c) => assignCases(c))
    .openapi({ ...removeCasesRoute, middleware: bodyLimit }, (c) => removeCases(c))
    .openapi(readHoldsRoute, (c) => readHolds(c))
    .openapi({ ...placeHoldRoute, middleware: bodyLimit }, (c) => placeHold(c))
    .openapi({ ...liftHoldRoute, middleware: bodyLimit }, (c) => liftHold(c));
  app.get("/*", readRecord);
  app.put("/*", bodyLimit, otherPath);
  app.delete("/*", bodyLimit, otherPath);
  app.all("/*", methodNotAllowed(["GET", "PUT", "DELETE"]));
  return routed;
}
