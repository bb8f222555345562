import * as z from "zod";

/** AuditAction values of spec 2.5, with the legacy values kept for old clients. */
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
]);
export type AuditAction = z.infer<typeof AuditActionSchema>;

/** AuditResult values of spec 2.5. */
export const AuditResultSchema = z.enum(["success", "failure", "warning", "blocked", "pending"]);
export type AuditResult = z.infer<typeof AuditResultSchema>;

/** WorkflowPhase values of spec 2.5. */
export const WorkflowPhaseSchema = z.enum(["casework", "case-export", "case-import", "confirmation", "user-management"]);
export type WorkflowPhase = z.infer<typeof WorkflowPhaseSchema>;

/** AuditFileType: the spec shows only `json-data`, so any short identifier is accepted. */
export const AuditFileTypeSchema = z.string().max(100);

const text = z.string().max(10_000);
/** Sub-structures the spec names without fields: any JSON object, kept as sent. */
const opaqueObject = z.record(z.string(), z.unknown());

/** AuditDetails of spec 2.5: known fields are checked, unknown fields are kept. */
export const AuditDetailsSchema = z.looseObject({
  fileName: text.optional(),
  fileType: AuditFileTypeSchema.optional(),
  caseNumber: text.optional(),
  confirmationId: text.optional(),
  hashValid: z.boolean().optional(),
  // Required in the type definition, but clients in the field omit it when empty.
  validationErrors: z.array(text).max(1000).optional(),
  securityChecks: opaqueObject.optional(),
  originalExaminerUid: text.optional(),
  reviewingExaminerUid: text.optional(),
  workflowPhase: WorkflowPhaseSchema.optional(),
  performanceMetrics: z.looseObject({
    processingTimeMs: z.number().optional(),
    fileSizeBytes: z.number().optional(),
  }).optional(),
  caseDetails: opaqueObject.optional(),
  fileDetails: z.looseObject({
    fileId: text.optional(),
    originalFileName: text.optional(),
    mimeType: text.optional(),
    uploadMethod: text.optional(),
    fileSize: z.number().optional(),
  }).optional(),
  annotationDetails: z.looseObject({
    annotationType: text.optional(),
    tool: text.optional(),
    canvasPosition: z.object({ x: z.number(), y: z.number() }).optional(),
  }).optional(),
  sessionDetails: opaqueObject.optional(),
  securityDetails: opaqueObject.optional(),
  userProfileDetails: opaqueObject.optional(),
});
export type AuditDetails = z.infer<typeof AuditDetailsSchema>;

/** ValidationAuditEntry of spec 2.5; unknown fields are kept as sent. */
export const ValidationAuditEntrySchema = z.looseObject({
  timestamp: z.iso.datetime({ offset: true }),
  userId: z.string().min(1).max(256),
  userEmail: z.string().max(320),
  action: AuditActionSchema,
  result: AuditResultSchema,
  details: AuditDetailsSchema,
});
export type ValidationAuditEntry = z.infer<typeof ValidationAuditEntrySchema>;

/** AuditSummary of spec 2.5. */
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

/** AuditTrail of spec 2.5. */
export const AuditTrailSchema = z.object({
  caseNumber: z.string(),
  workflowId: z.string(),
  entries: z.array(ValidationAuditEntrySchema),
  summary: AuditSummarySchema,
});
export type AuditTrail = z.infer<typeof AuditTrailSchema>;

/** A `YYYY-MM-DD` calendar date that exists. */
export const AuditDateSchema = z.iso.date();

/** Query of POST /audit/ (spec 4.8). */
export const AuditPostQuerySchema = z.object({
  userId: z.string({ error: "userId is required" }).min(1, "userId is required"),
});

/** Query of GET /audit/ (spec 4.8). */
export const AuditGetQuerySchema = z.object({
  userId: z.string({ error: "userId is required" }).min(1, "userId is required"),
  startDate: AuditDateSchema.optional(),
  endDate: AuditDateSchema.optional(),
});

/** Answer of POST /audit/ (spec 4.8). */
export const AuditAppendResponseSchema = z.object({
  success: z.literal(true),
  entryCount: z.number().int(),
  filename: z.string(),
});

/** Answer of GET /audit/ (spec 4.8). */
export const AuditEntriesResponseSchema = z.object({
  entries: z.array(ValidationAuditEntrySchema),
  total: z.number().int(),
});
