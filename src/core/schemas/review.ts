/**
 * @module
 * Reviews inside the service (docs/review.md): a review of a case's files by a second
 * examiner of the same lab, the reviewer's conclusions and their electronic signatures.
 */
import * as z from "zod";
import { ClassTypeSchema, SupportLevelSchema } from "./annotation.ts";

const identifier = z.string().min(1).max(256);
const name = z.string().trim().min(1).max(200);

/** Body of `POST /review/cases/{uid}/{case}`: whom to ask, which kind, blind or not, and optionally which files. */
export const ReviewRequestSchema = z.object({
  reviewer: identifier.describe("The reviewer's user id (`sub`): same lab as the owner, role reviewer or admin"),
  kind: z.enum(["verification", "technical"]),
  blind: z.boolean(),
  fileIds: z.array(identifier).min(1).max(1000).optional().describe("The files to review; default every file of the case document"),
}).meta({ id: "ReviewRequest" });
export type ReviewRequest = z.infer<typeof ReviewRequestSchema>;

/** Body of `POST /review/r/{id}/conclusions`: the reviewer's own conclusion on one file. */
export const ConclusionRequestSchema = z.object({
  fileId: identifier,
  supportLevel: SupportLevelSchema,
  classType: ClassTypeSchema.optional(),
  notes: z.string().max(10_000).optional(),
}).meta({ id: "ConclusionRequest" });
export type ConclusionRequest = z.infer<typeof ConclusionRequestSchema>;

/** What a signature means (21 CFR 11.50(a)(3)). */
export const SignatureMeaningSchema = z.enum(["verified", "reviewed", "disagreed"]);
export type SignatureMeaning = z.infer<typeof SignatureMeaningSchema>;

/** Body of `POST /review/r/{id}/signatures`. */
export const SignatureRequestSchema = z.object({
  fileId: identifier,
  meaning: SignatureMeaningSchema,
  printedName: name.describe("The signer's printed name, as it appears with the signature"),
  comment: z.string().max(2_000).optional(),
}).meta({ id: "SignatureRequest" });
export type SignatureRequest = z.infer<typeof SignatureRequestSchema>;

/** The record a signature is linked to: the annotations' key, the version signed and its SHA-256 (hex). */
export const SignedRecordSchema = z.object({
  key: z.string(),
  version: z.number().int().nullable().describe("The version of the key's history (the history of data-worker keys); null where no history was kept"),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type SignedRecord = z.infer<typeof SignedRecordSchema>;

/**
 * An electronic signature: who (`signer`, the token's `sub`, and `printedName`), what it means,
 * when (server time), the exact record, the review; `jws` is a compact JWS by
 * `AUDIT_SIGNING_KEY` whose payload is the canonical JSON (RFC 8785) of every other member.
 */
export const ReviewSignatureSchema = z.object({
  fileId: z.string(),
  signer: z.string(),
  printedName: z.string(),
  meaning: SignatureMeaningSchema,
  comment: z.string().optional(),
  signedAt: z.string(),
  record: SignedRecordSchema,
  reviewId: z.string(),
  jws: z.string(),
}).meta({ id: "ReviewSignature" });
export type ReviewSignature = z.infer<typeof ReviewSignatureSchema>;

/** A reviewer's conclusion on one file. */
export const ConclusionSchema = z.object({
  fileId: z.string(),
  reviewer: z.string(),
  supportLevel: SupportLevelSchema,
  classType: ClassTypeSchema.optional(),
  notes: z.string().optional(),
  recordedAt: z.string(),
}).meta({ id: "ReviewConclusion" });
export type Conclusion = z.infer<typeof ConclusionSchema>;

/** One file of a review: the annotations version pinned when the review opened. */
export const ReviewFileSchema = z.object({
  fileId: z.string(),
  version: z.number().int().nullable(),
  sha256: z.string(),
  changed: z.boolean().optional().describe("True when the owner amended the file after the review opened (it can no longer be signed)"),
}).meta({ id: "ReviewFile" });
export type ReviewFile = z.infer<typeof ReviewFileSchema>;

/** The confirmation a `verified` signature wrote into the owner's annotations. */
export const ReviewConfirmationSchema = z.object({
  fileId: z.string(),
  confirmationId: z.string(),
  version: z.number().int().nullable(),
  sha256: z.string(),
});
export type ReviewConfirmation = z.infer<typeof ReviewConfirmationSchema>;

/** A review, as stored and answered. */
export const ReviewSchema = z.object({
  id: z.string(),
  owner: z.string(),
  caseNumber: z.string(),
  reviewer: z.string(),
  lab: z.string(),
  kind: z.enum(["verification", "technical"]),
  blind: z.boolean(),
  state: z.enum(["open", "completed", "cancelled"]),
  files: z.array(ReviewFileSchema),
  createdAt: z.string(),
  conclusions: z.array(ConclusionSchema),
  signatures: z.array(ReviewSignatureSchema),
  confirmations: z.array(ReviewConfirmationSchema),
  completedAt: z.string().optional(),
  cancelledAt: z.string().optional(),
}).meta({ id: "Review" });
export type Review = z.infer<typeof ReviewSchema>;

/** `GET /review/r/{id}/verify`: each signature's status. */
export const ReviewVerificationSchema = z.object({
  signatures: z.array(z.object({ fileId: z.string(), status: z.enum(["valid", "stale", "invalid"]), reason: z.string().optional() })),
}).meta({ id: "ReviewVerification" });
export type ReviewVerification = z.infer<typeof ReviewVerificationSchema>;

/** The owner's conclusions in a file's annotations, withheld from a blind reviewer until theirs is recorded. */
export const OWNER_CONCLUSION_FIELDS = [
  "supportLevel",
  "classType",
  "customClass",
  "classNote",
  "additionalNotes",
  "hasSubclass",
  "includeConfirmation",
  "confirmationData",
] as const;
