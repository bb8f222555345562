/**
 * @module
 * The routes of each worker, and of the whole service, as hono's RPC client (`hc`) reads
 * them, written out: the worker factories answer the plain `WorkerApp` (a published API
 * states its types), so `hc<typeof app>` knows no routes; `hc<ServiceRoutes>` does.
 * tests/client/routes.test.ts checks each answer type against the type the worker's own
 * routes infer.
 *
 * @example
 * ```ts
 * import { hc } from "hono/client";
 * import type { ServiceRoutes } from "@forensic-annotation/service/client";
 *
 * const api = hc<ServiceRoutes>("http://localhost:8787", { headers: { "X-Custom-Auth-Key": "…" } });
 * const user = await (await api.user[":userUid"].$get({ param: { userUid: "u1" } })).json();
 * ```
 */
import type { Hono } from "hono";
import type { BlankEnv, MergeSchemaPath, Schema } from "hono/types";
import type { JSONValue } from "hono/utils/types";
import type { UserData } from "../core/schemas/resources.ts";
import type { ReportInput } from "../core/pdf/mod.ts";
import type { AuditVerification } from "../core/audit/verify.ts";
import type { AuditAppended, AuditEntries, AuditEntryInput, CaptchaResult, CaseAssignmentInput, HistoryPruneResult, LegalHolds, UploadedImage, UserDeletion, UserInput, UserList } from "./types.ts";

/**
 * A Hono app with these routes, for `hc` (hono's own types, under a local name: `deno doc --lint`
 * reads `node_modules` as local code and would demand JSDoc of the npm package's declarations).
 * @ignore
 */
type RoutesOf<S extends Schema> = Hono<BlankEnv, S, "/">;
/**
 * Routes under a mount path, as `app.route(path, worker)` gives them.
 * @ignore
 */
type Mounted<S extends Schema, Path extends string> = MergeSchemaPath<S, Path>;
/**
 * Any JSON value.
 * @ignore
 */
type Json = JSONValue;

/** One route of hono's schema: what is sent, and the answer of a status. */
export type Endpoint<Input, Output, Status extends number, Format extends string = "json"> = {
  /** What `hc` lets the caller send. */
  input: Input;
  /** The answer's body. */
  output: Output;
  /** How the body is read. */
  outputFormat: Format;
  /** The answer's status. */
  status: Status;
};

/** The answer of an image worker call: Cloudflare Images' envelope. */
export interface ImageEnvelope<Result> {
  /** Whether the call succeeded. */
  success: boolean;
  /** The stored image, or `{}` for a deletion. */
  result: Result;
  /** Upstream errors. */
  errors: { code: number; message: string }[];
  /** Upstream messages. */
  messages: string[];
}

/** The audit routes, as the data worker and the audit worker both serve them. */
export type AuditRoutes = {
  /** `POST /audit?userId=` appends; `GET /audit?userId=&startDate=&endDate=` reads. */
  "/audit": {
    /** Appends an entry to the user's trail of today. */
    $post: Endpoint<{ query: { userId: string }; json: AuditEntryInput }, AuditAppended, 200>;
    /** The entries of today or of a range, newest first. */
    $get: Endpoint<{ query: { userId: string; startDate?: string; endDate?: string } }, AuditEntries, 200>;
  };
  /** `GET /audit/verify?userId=&startDate=&endDate=` checks the trail's hash chain and head. */
  "/audit/verify": {
    /** The verdict: valid or the first bad entry and why, per day. */
    $get: Endpoint<{ query: { userId: string; startDate?: string; endDate?: string } }, AuditVerification, 200>;
  };
};

/** The data worker's routes: documents under any key (the whole rest of the path), and the audit routes. */
export type DataRoutes = AuditRoutes & {
  /** A document; the key's segments each percent-encoded, joined by `/`. */
  "/:filename{[\\s\\S]+}": {
    /** The stored JSON; `[]` when there is none. */
    $get: Endpoint<{ param: { filename: string } }, Json, 200>;
    /** Stores any JSON value. */
    $put: Endpoint<{ param: { filename: string } }, { success: true }, 200>;
    /** Deletes a document. */
    $delete: Endpoint<{ param: { filename: string } }, { success: true }, 200>;
  };
  /** Retention (administrators only). */
  "/history/prune": {
    /** Prunes versions older than `HISTORY_RETENTION_DAYS`. */
    $post: Endpoint<Record<string, never>, HistoryPruneResult, 200>;
  };
};

/** The user worker's routes. */
export type UserRoutes = {
  /** Every user (`X-Admin-Key` besides the worker key). */
  "/": {
    /** One summary per user, by uid. */
    $get: Endpoint<Record<string, never>, UserList, 200>;
  };
  /** A user record. */
  "/:userUid": {
    /** The record. */
    $get: Endpoint<{ param: { userUid: string } }, UserData, 200>;
    /** Creates (201) or updates (200) the record. */
    $put: Endpoint<{ param: { userUid: string }; json: UserInput }, UserData, 200 | 201>;
    /** Deletes the account. */
    $delete: Endpoint<{ param: { userUid: string } }, UserDeletion, 200> | Endpoint<{ param: { userUid: string } }, { success: false; message: string }, 500>;
  };
  /** The record's case assignments. */
  "/:userUid/cases": {
    /** Assigns cases. */
    $put: Endpoint<{ param: { userUid: string }; json: { cases: CaseAssignmentInput[] } }, UserData, 200>;
    /** Removes case assignments. */
    $delete: Endpoint<{ param: { userUid: string }; json: { casesToDelete: string[] } }, UserData, 200>;
  };
  /** The user's legal holds (administrators only). */
  "/:userUid/holds": {
    /** Lists them. */
    $get: Endpoint<{ param: { userUid: string } }, LegalHolds, 200>;
    /** Puts a case on hold (201) or records a new reason (200). */
    $put: Endpoint<{ param: { userUid: string }; json: { caseNumber: string; reason: string } }, LegalHolds, 200 | 201>;
    /** Lifts a hold. */
    $delete: Endpoint<{ param: { userUid: string }; json: { caseNumber: string } }, LegalHolds, 200>;
  };
};

/** The image worker's routes. */
export type ImageRoutes = {
  /** Upload. */
  "/": {
    /** Uploads the `file` part of a multipart form. */
    $post: Endpoint<{ form: { file: Blob } }, ImageEnvelope<UploadedImage>, 200>;
  };
  /** An image by id. */
  "/:imageId": {
    /** Deletes it. */
    $delete: Endpoint<{ param: { imageId: string }; query?: { owner?: string } }, ImageEnvelope<Record<string, never>>, 200>;
  };
  /** A delivery URL to sign (the whole URL as the rest of the path). */
  "/:imageDeliveryUrl{[\\s\\S]+}": {
    /** The signed URL, as text. */
    $get: Endpoint<{ param: { imageDeliveryUrl: string } }, string, 200, "text">;
  };
};

/** The keys worker's routes. */
export type KeysRoutes = {
  /** A key by name. */
  "/:keyName": {
    /** Its value, as text. */
    $get: Endpoint<{ param: { keyName: string } }, string, 200, "text">;
  };
};

/** The captcha worker's routes. */
export type CaptchaRoutes = {
  /** Verification. */
  "/": {
    /** Whether the token passed (200 either way). */
    $post: Endpoint<{ json: { "captcha-response"?: string; "cf-turnstile-response"?: string } }, CaptchaResult, 200>;
  };
};

/** The PDF worker's routes. */
export type PdfRoutes = {
  /** Rendering. */
  "/": {
    /** The report's PDF bytes (read them with `arrayBuffer()`). */
    $post: Endpoint<{ json: ReportInput }, ArrayBuffer, 200, "binary">;
  };
};

/** `GET /health`. */
export type HealthRoutes = {
  /** Liveness. */
  "/health": {
    /** `{ok: true}`. */
    $get: Endpoint<Record<string, never>, { ok: true }, 200>;
  };
};

/** The data worker, for `hc<DataWorkerRoutes>(dataWorkerUrl)`. */
export type DataWorkerRoutes = RoutesOf<DataRoutes>;
/** The audit worker, for `hc<AuditWorkerRoutes>(auditWorkerUrl)`. */
export type AuditWorkerRoutes = RoutesOf<AuditRoutes>;
/** The user worker, for `hc<UserWorkerRoutes>(userWorkerUrl)`. */
export type UserWorkerRoutes = RoutesOf<UserRoutes>;
/** The image worker, for `hc<ImageWorkerRoutes>(imageWorkerUrl)`. */
export type ImageWorkerRoutes = RoutesOf<ImageRoutes>;
/** The keys worker, for `hc<KeysWorkerRoutes>(keysWorkerUrl)`. */
export type KeysWorkerRoutes = RoutesOf<KeysRoutes>;
/** The captcha worker, for `hc<CaptchaWorkerRoutes>(captchaWorkerUrl)`. */
export type CaptchaWorkerRoutes = RoutesOf<CaptchaRoutes>;
/** The PDF worker, for `hc<PdfWorkerRoutes>(pdfWorkerUrl)`. */
export type PdfWorkerRoutes = RoutesOf<PdfRoutes>;

/** The whole service (every worker under its mount, and `/health`), for `hc<ServiceRoutes>(baseUrl)`. */
export type ServiceRoutes = RoutesOf<
  & HealthRoutes
  & Mounted<UserRoutes, "/user">
  & Mounted<DataRoutes, "/data">
  & Mounted<AuditRoutes, "/audit">
  & Mounted<ImageRoutes, "/image">
  & Mounted<KeysRoutes, "/keys">
  & Mounted<CaptchaRoutes, "/captcha">
  & Mounted<PdfRoutes, "/pdf">
>;
