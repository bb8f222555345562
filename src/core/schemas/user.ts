/**
 * @module
 * User records and the bodies of the user worker (docs/storage.md#user-records, docs/api.md#user-limits, docs/api.md#user-worker). Stored records are
 * loose objects: fields written by other clients are kept as they are.
 */
import * as z from "zod";

/** One entry of `UserData.cases` (docs/storage.md#user-records): a case number and when it was assigned. */
export const CaseAssignmentSchema = z.looseObject({
  caseNumber: z.string(),
  createdAt: z.string(),
}).meta({ id: "CaseAssignment" });
export type CaseAssignment = z.infer<typeof CaseAssignmentSchema>;

/** ReadOnlyCaseMetadata of docs/storage.md#user-records: an imported case in `UserData.readOnlyCases` (docs/exchange.md import rule 7). */
export const ReadOnlyCaseMetadataSchema = z.looseObject({
  caseNumber: z.string(),
  importedAt: z.string(),
  originalExportDate: z.string(),
  originalExportedBy: z.string(),
  sourceHash: z.string().optional(),
  isReadOnly: z.literal(true),
}).meta({ id: "ReadOnlyCase" });
export type ReadOnlyCaseMetadata = z.infer<typeof ReadOnlyCaseMetadataSchema>;

/** The roles a lab member can hold (docs/review.md#labs-and-roles); a user with none is an `examiner`. */
export const LabRoleSchema: z.ZodEnum<{ examiner: "examiner"; reviewer: "reviewer"; admin: "admin" }> = z.enum(["examiner", "reviewer", "admin"]);
export type LabRole = z.infer<typeof LabRoleSchema>;

/** UserData of docs/storage.md#user-records, the stored user record keyed by userUid; unknown fields are kept. */
export const UserDataSchema = z.looseObject({
  uid: z.string(),
  email: z.string().nullable(),
  firstName: z.string(),
  lastName: z.string(),
  company: z.string(),
  permitted: z.boolean(),
  cases: z.array(CaseAssignmentSchema),
  readOnlyCases: z.array(ReadOnlyCaseMetadataSchema).optional(),
  createdAt: z.string(),
  updatedAt: z.string().optional(),
  // docs/review.md#labs-and-roles: set only by an administrator; an identity token's claims win.
  lab: z.string().optional(),
  roles: z.array(z.string()).optional(),
}).meta({ id: "UserData" });
export type UserData = z.infer<typeof UserDataSchema>;

/** UserLimits of docs/api.md#user-limits: per-user caps on cases and on files per case. */
export const UserLimitsSchema = z.object({
  maxCases: z.int().positive(),
  maxFilesPerCase: z.int().positive(),
});
export type UserLimits = z.infer<typeof UserLimitsSchema>;

const profileText = z.string().trim().max(200);

/** The most read-only cases a record lists (docs/api.md#user-worker): a PUT sending more is a 400, an import beyond it is refused. */
export const MAX_READ_ONLY_CASES = 10_000;

/**
 * Body of PUT /{userUid} (docs/api.md#user-worker). Every field is optional: on update an absent field keeps
 * its value; what creation requires is checked by the worker. Unknown fields are stripped.
 */
export const UserPutBodySchema = z.object({
  // "" is what the Striae client sends for a value it does not know; on update it keeps the stored one.
  email: z.union([z.literal(""), z.string().trim().max(320).pipe(z.email())]).nullable().optional(),
  firstName: profileText.optional(),
  lastName: profileText.optional(),
  company: profileText.optional(),
  permitted: z.boolean().optional(),
  // Kept as sent: clients add their own fields (the Striae client's `sourceChecksum`).
  readOnlyCases: z.array(ReadOnlyCaseMetadataSchema).max(MAX_READ_ONLY_CASES).optional(),
  /** The user's lab (docs/review.md#labs-and-roles); only an administrator may set it. */
  lab: z.string().trim().min(1).max(256).optional(),
  /** The user's roles (docs/review.md#labs-and-roles); only an administrator may set them. */
  roles: z.array(LabRoleSchema).max(3).optional(),
}).meta({ id: "UserInput" });
export type UserPutBody = z.infer<typeof UserPutBodySchema>;

/**
 * Body of PUT /{userUid}/cases (docs/api.md#user-worker): case numbers to assign; any string of 1 to 200
 * characters. A client's `createdAt` (an ISO date-time: a renamed case keeps its date) and
 * its other fields are kept.
 */
export const CasesAddBodySchema = z.object({
  cases: z.array(z.looseObject({ caseNumber: z.string().min(1).max(200), createdAt: z.unknown().optional() })).max(10_000),
});
export type CasesAddBody = z.infer<typeof CasesAddBodySchema>;

/** Body of DELETE /{userUid}/cases (docs/api.md#user-worker), also CasesToDelete of docs/exchange.md#single-case-json. */
export const CasesDeleteBodySchema = z.object({
  casesToDelete: z.array(z.string()).max(10_000),
});
export type CasesDeleteBody = z.infer<typeof CasesDeleteBodySchema>;

/** Answer of a successful DELETE /{userUid} (docs/api.md#user-worker). */
export const UserDeleteResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
}).meta({ id: "UserDeletion" });
export type UserDeleteResponse = z.infer<typeof UserDeleteResponseSchema>;

/** Answer of DELETE /{userUid} when the confirmation emails cannot be sent (docs/api.md#account-deletion). */
export const UserDeleteFailureSchema = z.object({
  success: z.literal(false),
  message: z.string(),
}).meta({ id: "UserDeletionFailure" });
export type UserDeleteFailure = z.infer<typeof UserDeleteFailureSchema>;

/** One user in GET / of the user worker (the `users list` command): the record's fields an administrator looks at, its case lists counted. */
export const UserSummarySchema = z.object({
  uid: z.string(),
  email: z.string().nullable().optional(),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  company: z.string().optional(),
  permitted: z.boolean().optional(),
  cases: z.int().nonnegative().optional(),
  readOnlyCases: z.int().nonnegative().optional(),
  createdAt: z.string().optional(),
  /** Set instead of the fields when the stored record cannot be read (not JSON, not UserData). */
  unreadable: z.string().optional(),
}).meta({ id: "UserSummary" });
export type UserSummary = z.infer<typeof UserSummarySchema>;

/** Answer of GET / of the user worker: every user, by uid. */
export const UserListSchema = z.object({ users: z.array(UserSummarySchema) }).meta({ id: "UserList" });
export type UserList = z.infer<typeof UserListSchema>;
