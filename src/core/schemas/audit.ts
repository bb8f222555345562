import * as z from "zod";

/** AuditAction values of docs/api.md#entry-shape, with the legacy values kept for old clients. */
export const AuditActionSchema = z.enum([
  "case-create",
  "case-rename",
  "case-delete",
  "case-export",
  "case-import",
  "confirmation-create",
  "confirmation-export",
  "confirmation-import",
  "file-upload",
  "file-delete",
  "file-access",
  "annotation-create",
  "annotation-edit",
  "annotation-delete",
  "user-login",
  "user-logout",
  "user-profile-update",
  "user-password-reset",
  "user-account-delete",
  "pdf-generate",
  "security-violation",
  "import",
  "export",
  "confirm",
  "validate",
  // Written by the service only (docs/api.md#legal-holds).
  "legal-hold-place",
  "legal-hold-lift",
  "history-prune",
]);
export type AuditAction = z.infer<typeof AuditActionSchema>;

/** AuditResult values of docs/api.md#entry-shape. */
export const AuditResultSchema = z.enum(["success", "failure", "warning", "blocked", "pending"]);
export type AuditResult = z.infer<typeof AuditResultSchema>;

/** WorkflowPhase values of docs/api.md#entry-shape. */
export const WorkflowPhaseSchema = z.enum(["casework", "case-export", "case-import", "confirmation", "user-management"]);
export type WorkflowPhase = z.infer<typeof WorkflowPhaseSchema>;

/** AuditFileType: docs/api.md#entry-shape shows only `json-data`, so any short identifier is accepted. */
export const AuditFileTypeSchema = z.string().max(100);

// Entries are evidence the client states: a refused entry is history lost (the Striae client
// only logs the failure), so known fields are checked for type, null counts as absent, and the
// entry's own size limit (MAX_AUDIT_ENTRY_BYTES) bounds text rather than a field cap.
const text = z.string().max(65_536).nullish();
const count = z.number().nullish();
/** Sub-structures docs/api.md#entry-shape names without fields: any JSON object, kept as sent. */
const opaqueObject = z.record(z.string(), z.unknown());

/** AuditDetails of docs/api.md#entry-shape: known fields are checked, unknown fields are kept. */
export const AuditDetailsSchema = z.looseObject({
  fileName: text,
  fileType: AuditFileTypeSchema.nullish(),
  caseNumber: text,
  confirmationId: text,
  hashValid: z.boolean().nullish(),
  // Required in the type definition, but clients in the field omit it when empty.
  validationErrors: z.array(z.string().max(65_536)).max(1000).nullish(),
  securityChecks: opaqueObject.nullish(),
  originalExaminerUid: text,
  reviewingExaminerUid: text,
  workflowPhase: WorkflowPhaseSchema.nullish(),
  performanceMetrics: z.looseObject({
    processingTimeMs: count,
    fileSizeBytes: count,
  }).nullish(),
  caseDetails: opaqueObject.nullish(),
  fileDetails: z.looseObject({
    fileId: text,
    originalFileName: text,
    mimeType: text,
    uploadMethod: text,
    fileSize: count,
  }).nullish(),
  annotationDetails: z.looseObject({
    annotationType: text,
    tool: text,
    // The client sends a box's whole position (x, y, width, height).
    canvasPosition: z.looseObject({ x: count, y: count }).nullish(),
  }).nullish(),
  sessionDetails: opaqueObject.nullish(),
  securityDetails: opaqueObject.nullish(),
  userProfileDetails: opaqueObject.nullish(),
}).meta({ id: "AuditDetails" });
export type AuditDetails = z.infer<typeof AuditDetailsSchema>;

/** ValidationAuditEntry of docs/api.md#entry-shape; unknown fields are kept as sent. */
export const ValidationAuditEntrySchema = z.looseObject({
  timestamp: z.iso.datetime({ offset: true }),
  userId: z.string().min(1).max(256),
  userEmail: z.string().max(320),
  action: AuditActionSchema,
  result: AuditResultSchema,
  details: AuditDetailsSchema,
}).meta({ id: "AuditEntryInput", description: "An entry as a client appends it: receivedAt, seq, prevHash and hash are the service's to write" });
export type ValidationAuditEntry = z.infer<typeof ValidationAuditEntrySchema>;

/** AuditSummary of docs/api.md#entry-shape. */
export const AuditSummarySchema = z.object({
  totalEvents: z.number(),
  successfulEvents: z.number(),
  failedEvents: z.number(),
  warningEvents: z.number(),
  workflowPhases: z.array(WorkflowPhaseSchema),
  participatingUsers: z.array(z.string()),
  startTimestamp: z.string(),
  endTimestamp: z.string(),
  complianceStatus: z.enum(["compliant", "non-compliant", "pending"]),
  securityIncidents: z.number(),
});
export type AuditSummary = z.infer<typeof AuditSummarySchema>;

/** AuditTrail of docs/api.md#entry-shape. */
export const AuditTrailSchema = z.object({
  caseNumber: z.string(),
  workflowId: z.string(),
  entries: z.array(ValidationAuditEntrySchema),
  summary: AuditSummarySchema,
});
export type AuditTrail = z.infer<typeof AuditTrailSchema>;

/** A `YYYY-MM-DD` calendar date that exists. */
export const AuditDateSchema = z.iso.date();

// ISO 8601 extended format: a date, or a date and time with optional seconds, fraction and offset.
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?([Zz]|[+ -]\d{2}(?::?\d{2})?)?)?$/;
const DAY_MS = 86_400_000;

/** Midnight UTC of a calendar date; unlike `Date.UTC`, years 0–99 stay themselves. */
function utcMidnight(year: number, monthIndex: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  return date.getTime();
}

/**
 * The UTC calendar day (`YYYY-MM-DD`) of an ISO 8601 date or date-time, or undefined when the
 * text is not one or names no real time. A date is its own day; a date-time with an offset is
 * converted to UTC; one without an offset is taken as UTC. A space before the offset is read
 * as `+`, the form a `+` takes when a query string is not percent-encoded.
 */
export function utcDayOf(text: string): string | undefined {
  const match = ISO_INSTANT.exec(text);
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, sec, offset] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const daysInMonth = new Date(utcMidnight(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return undefined;
  const hour = Number(h ?? 0);
  const minute = Number(mi ?? 0);
  const second = Number(sec ?? 0);
  // 24:00 is the end of the day (ISO 8601); a leap second belongs to its minute.
  if (hour > 24 || minute > 59 || second > 60 || (hour === 24 && (minute > 0 || second > 0))) return undefined;
  let offsetMinutes = 0;
  if (offset !== undefined && offset.toUpperCase() !== "Z") {
    const digits = offset.slice(1).replace(":", "");
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMins = Number(digits.slice(2) || "0");
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (offset.startsWith("-") ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const midnight = utcMidnight(year, month - 1, day);
  const utc = midnight + ((hour * 60 + minute - offsetMinutes) * 60 + Math.min(second, 59)) * 1000;
  // Years before 1 or after 9999 cannot be an audit day's file name.
  const result = new Date(Math.floor(utc / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
  return /^\d{4}-\d{2}-\d{2}$/.test(result) ? result : undefined;
}

/** A range bound of GET /audit/: an ISO 8601 date or date-time (the client sends `toISOString()`). */
export const AuditRangeBoundSchema = z
  .string()
  .refine((value) => utcDayOf(value) !== undefined, {
    error: "must be an ISO 8601 date (YYYY-MM-DD) or date-time (e.g. 2026-11-22T12:51:07.123Z or with an offset)",
  })
  .meta({
    description: "An ISO 8601 date or date-time; the range covers the UTC day of each bound, both included",
    examples: ["2026-11-22", "2026-11-22T12:51:07.123Z", "2026-11-22T08:00:00-05:00"],
  });

/** Query of POST /audit/ (docs/api.md#audit). */
export const AuditPostQuerySchema = z.object({
  userId: z.string({ error: "userId is required" }).min(1, "userId is required"),
});

/** Query of GET /audit/ (docs/api.md#audit). */
export const AuditGetQuerySchema = z.object({
  userId: z.string({ error: "userId is required" }).min(1, "userId is required"),
  startDate: AuditRangeBoundSchema.optional(),
  endDate: AuditRangeBoundSchema.optional(),
});

/** Answer of POST /audit/ (docs/api.md#audit). */
export const AuditAppendResponseSchema = z.object({
  success: z.literal(true),
  entryCount: z.number().int(),
  filename: z.string(),
}).meta({ id: "AuditAppended" });

/** An entry as stored and served: the client's entry and the service's receipt time. */
export const StoredAuditEntrySchema = ValidationAuditEntrySchema.extend({
  receivedAt: z.iso.datetime().optional().meta({
    description: "When the service received the entry (its clock, UTC); written by the service, never by clients. Absent on entries stored before it was kept.",
  }),
}).meta({ id: "AuditEntry", description: "An entry as stored and served: the client's entry, the service's receipt time and the chain fields (seq, prevHash, hash)" });

/** An entry of a stored day that cannot be served (too deeply nested, not JSON, not an object), reported in its place. */
export const UnreadableAuditEntrySchema = z.object({
  unreadable: z.literal(true),
  filename: z.string().meta({ description: "The stored file holding it, audit-trails/{userId}-{YYYY-MM-DD}.json" }),
  index: z.number().int().meta({ description: "Its position in that file, from 0" }),
  reason: z.string(),
  timestamp: z.string().meta({ description: "The start of its day (UTC): its own time cannot be read" }),
  userId: z.string(),
  userEmail: z.literal(""),
  action: z.literal("validate"),
  result: z.literal("warning"),
  details: z.object({ validationErrors: z.array(z.string()) }),
}).meta({ id: "UnreadableAuditEntry", description: "A stored entry that cannot be served, in its place; the other entries are served" });

/** Answer of GET /audit/ (docs/api.md#audit): newest first. */
export const AuditEntriesResponseSchema = z.object({
  entries: z.array(z.union([StoredAuditEntrySchema, UnreadableAuditEntrySchema])).meta({
    description: "Newest first: the last day first, and within a day the last entry received first",
  }),
  total: z.number().int(),
}).meta({ id: "AuditEntries" });

const TAMPER_REASONS = ["edited", "missing", "reordered", "inserted", "tail dropped", "signature invalid", "signature missing", "head missing", "head unreadable", "unreadable", "wrong user"] as const;

/** One day of GET /audit/verify. */
export const AuditDayVerificationSchema = z.object({
  date: z.string(),
  entries: z.number().int().meta({ description: "Entries stored that day" }),
  valid: z.boolean(),
  firstBadSeq: z.number().int().optional().meta({ description: "The first bad entry's seq (or the seq expected where entries are missing)" }),
  firstBadIndex: z.number().int().optional().meta({ description: "Its position in the day as stored, from 0" }),
  reason: z.enum(TAMPER_REASONS).optional(),
  message: z.string().optional(),
  unchained: z.number().int().optional().meta({ description: "Entries stored before the chain began: not tampering" }),
}).meta({ id: "AuditDayVerification" });

/** Answer of GET /audit/verify (docs/storage.md#audit-chain). */
export const AuditVerificationSchema = z.object({
  valid: z.boolean(),
  userId: z.string(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  entries: z.number().int(),
  unchained: z.number().int(),
  head: z.object({
    seq: z.number().int(),
    hash: z.string(),
    day: z.string(),
    updatedAt: z.string(),
    signature: z.enum(["valid", "invalid", "unsigned", "unchecked"]),
    unsignedUntil: z.number().int().optional().meta({ description: "On a head `audit sign-heads` signed: entries up to this seq were appended under unsigned heads" }),
    pending: z.boolean().optional(),
  }).nullable(),
  days: z.array(AuditDayVerificationSchema),
  firstBad: z.object({
    date: z.string(),
    seq: z.number().int(),
    index: z.number().int().optional(),
    reason: z.enum(TAMPER_REASONS),
    message: z.string(),
  }).optional(),
}).meta({ id: "AuditVerification" });
