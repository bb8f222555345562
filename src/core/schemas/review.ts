/**
 * @module
 * Reviews inside the service (docs/review.md): a review of a case's files by a second
 * examiner of the same lab, the reviewer's conclusions and their electronic signatures.
 */
import * as z from "zod";
import { ClassTypeSchema, SupportLevelSchema } from "./annotation.ts";

const identifier: z.ZodString = z.string().min(1).max(256);
/**
 * Characters that hide, reorder or fake text: controls, format characters (zero-width, bidi
 * marks and overrides, tags, soft hyphen), surrogates, private use, unassigned code points and
 * noncharacters, line and paragraph separators, the Khmer inherent vowels, variation selectors, the combining grapheme joiner and the
 * Hangul fillers that render blank though they count as letters.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFDD0-\uFDEF\uFE00-\uFE0F\uFFA0\uFFFE\uFFFF\u{E0100}-\u{E01EF}]/u;
/**
 * Spelling, not hiding: a zero-width (non-)joiner between two letters (Persian, Indic scripts),
 * and the joiner or emoji presentation selector after an emoji (❤️, 👩‍🔬).
 */
const JOINER_IN_WORD = /(?<=[\p{L}\p{M}])[\u200C\u200D](?=[\p{L}\p{M}])|(?<=\p{Extended_Pictographic})\uFE0F?\u200D(?=\p{Extended_Pictographic})|(?<=\p{Extended_Pictographic})\uFE0F/gu;
/** Whether `value` holds a hidden character; tabs and line breaks count as text where `lines`. */
function hides(value: string, lines: boolean): boolean {
  const spelled = value.replace(JOINER_IN_WORD, "");
  return HIDDEN.test(lines ? spelled.replace(/[\t\n\r]/g, "") : spelled);
}
// A signed name must read as what it is: nothing hidden, and at least one letter.
const name: z.ZodString = z.string().trim().min(1).max(200)
  .refine((value) => !hides(value, false), "no control, invisible, bidi or private-use characters")
  .refine((value) => /\p{L}/u.test(value), "a name has at least one letter");
/** Free text signed or recorded with a review: nothing hidden but tabs and line breaks. */
const text = (max: number): z.ZodString => z.string().max(max).refine((value) => !hides(value, true), "no control (but tab and line breaks), invisible, bidi or private-use characters");

/** A review's kind. */
export type ReviewKind = "verification" | "technical";
/** What a signature means (21 CFR 11.50(a)(3)). */
export type SignatureMeaning = "verified" | "reviewed" | "disagreed";

/** Body of `POST /review/cases/{uid}/{case}`. */
export interface ReviewRequest {
  /** The reviewer's user id (`sub`). */
  reviewer: string;
  /** Verification or technical review. */
  kind: ReviewKind;
  /** Whether the owner's conclusions are withheld from the reviewer until theirs. */
  blind: boolean;
  /** The files to review; default every file of the case document. */
  fileIds?: string[] | undefined;
}
/** Body of `POST /review/r/{id}/conclusions`. */
export interface ConclusionRequest {
  /** The file. */
  fileId: string;
  /** The reviewer's conclusion. */
  supportLevel: "ID" | "Exclusion" | "Inconclusive";
  /** The class they see. */
  classType?: "Bullet" | "Cartridge Case" | "Other" | undefined;
  /** Their notes. */
  notes?: string | undefined;
}
/** Body of `POST /review/r/{id}/signatures`. */
export interface SignatureRequest {
  /** The file. */
  fileId: string;
  /** What the signature means. */
  meaning: SignatureMeaning;
  /** The signer's printed name. */
  printedName: string;
  /** A comment, signed with the rest. */
  comment?: string | undefined;
}
/** The record a signature is linked to. */
export interface SignedRecord {
  /** The annotations' data key. */
  key: string;
  /** The pinned version of the key's history; null where none was kept. */
  version: number | null;
  /** Hex SHA-256 of the pinned bytes. */
  sha256: string;
}
/** An electronic signature; `jws` signs the canonical JSON of every other member. */
export interface ReviewSignature {
  /** The file. */
  fileId: string;
  /** The signer's user id (the token's `sub`). */
  signer: string;
  /** The signer's printed name. */
  printedName: string;
  /** What it means. */
  meaning: SignatureMeaning;
  /** The signer's comment. */
  comment?: string | undefined;
  /** When (the service's time, ISO 8601). */
  signedAt: string;
  /** The exact record signed. */
  record: SignedRecord;
  /** The review. */
  reviewId: string;
  /** Compact JWS by `AUDIT_SIGNING_KEY`. */
  jws: string;
}
/** A reviewer's conclusion on one file. */
export interface Conclusion {
  /** The file. */
  fileId: string;
  /** The reviewer. */
  reviewer: string;
  /** Their conclusion. */
  supportLevel: "ID" | "Exclusion" | "Inconclusive";
  /** The class they see. */
  classType?: "Bullet" | "Cartridge Case" | "Other" | undefined;
  /** Their notes. */
  notes?: string | undefined;
  /** When it was recorded. */
  recordedAt: string;
}
/** One file of a review. */
export interface ReviewFile {
  /** The file. */
  fileId: string;
  /** The pinned version; null where no history was kept. */
  version: number | null;
  /**
   * Hex SHA-256 of the pinned annotations; null to a blind reviewer until their conclusion for
   * the file (from the hash and the fields shown, the withheld conclusion could be guessed).
   */
  sha256: string | null;
  /** True when the owner amended the file after the review opened. */
  changed?: boolean | undefined;
}
/** The confirmation a `verified` signature wrote. */
export interface ReviewConfirmation {
  /** The file. */
  fileId: string;
  /** Its `CONF-` id. */
  confirmationId: string;
  /** The version it wrote; null without history. */
  version: number | null;
  /** Hex SHA-256 of the annotations it wrote. */
  sha256: string;
}
/** A signing under way: its signature is listed, its confirmation (a `verified` one's) or its audit steps are not done. */
export interface SigningUnderWay {
  /** The file. */
  fileId: string;
  /** The listed signature's `jws`. */
  signature: string;
  /** The `CONF-` id its confirmation is written with (`verified` only). */
  confirmationId?: string | undefined;
  /** Hex SHA-256s of the annotations its confirmation's tries wrote or may have written (one per try). */
  sha256s?: string[] | undefined;
  /** When it began (server time); another request for it waits until SIGNING_LEASE_SECONDS after. */
  since: string;
}
/** A review. */
export interface Review {
  /** Its id. */
  id: string;
  /** The case owner. */
  owner: string;
  /** The case. */
  caseNumber: string;
  /** The reviewer. */
  reviewer: string;
  /** The owner's lab when it opened. */
  lab: string;
  /** Verification or technical. */
  kind: ReviewKind;
  /** Blind or open. */
  blind: boolean;
  /** Open, completed (every file signed) or cancelled. */
  state: "open" | "completed" | "cancelled";
  /** The pinned files. */
  files: ReviewFile[];
  /** When it opened. */
  createdAt: string;
  /** The reviewer's conclusions. */
  conclusions: Conclusion[];
  /** The signatures. */
  signatures: ReviewSignature[];
  /** The confirmations verified signatures wrote. */
  confirmations: ReviewConfirmation[];
  /** Signings under way: listed, their confirmation or audit steps not done yet. */
  signing?: SigningUnderWay[] | undefined;
  /** When every file was signed. */
  completedAt?: string | undefined;
  /** When the owner cancelled it. */
  cancelledAt?: string | undefined;
}
/** `GET /review/r/{id}/verify`. */
export interface ReviewVerification {
  /** Each signature's status. */
  signatures: { fileId: string; status: "valid" | "stale" | "invalid"; reason?: string | undefined }[];
}

/** Body of `POST /review/cases/{uid}/{case}`: whom to ask, which kind, blind or not, and optionally which files. */
export const ReviewRequestSchema: z.ZodType<ReviewRequest> = z.object({
  reviewer: identifier.describe("The reviewer's user id (`sub`): same lab as the owner, role reviewer or admin"),
  kind: z.enum(["verification", "technical"]),
  blind: z.boolean(),
  fileIds: z.array(identifier).min(1).max(1000).optional().describe("The files to review; default every file of the case document"),
}).meta({ id: "ReviewRequest" });

/** Body of `POST /review/r/{id}/conclusions`: the reviewer's own conclusion on one file. */
export const ConclusionRequestSchema: z.ZodType<ConclusionRequest> = z.object({
  fileId: identifier,
  supportLevel: SupportLevelSchema,
  classType: ClassTypeSchema.optional(),
  notes: text(10_000).optional(),
}).meta({ id: "ConclusionRequest" });

/** What a signature means: verified, reviewed or disagreed. */
export const SignatureMeaningSchema: z.ZodEnum<{ verified: "verified"; reviewed: "reviewed"; disagreed: "disagreed" }> = z.enum(["verified", "reviewed", "disagreed"]);

/** Body of `POST /review/r/{id}/signatures`. */
export const SignatureRequestSchema: z.ZodType<SignatureRequest> = z.object({
  fileId: identifier,
  meaning: SignatureMeaningSchema,
  printedName: name.describe("The signer's printed name, as it appears with the signature"),
  comment: text(2_000).optional(),
}).meta({ id: "SignatureRequest" });

/** The record a signature is linked to: the annotations' key, the version signed and its SHA-256 (hex). */
export const SignedRecordSchema: z.ZodType<SignedRecord> = z.object({
  key: z.string(),
  version: z.number().int().nullable().describe("The version of the key's history (the history of data-worker keys); null where no history was kept"),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

/**
 * An electronic signature: who (`signer`, the token's `sub`, and `printedName`), what it means,
 * when (server time), the exact record, the review; `jws` is a compact JWS by
 * `AUDIT_SIGNING_KEY` whose payload is the canonical JSON (RFC 8785) of every other member.
 */
export const ReviewSignatureSchema: z.ZodType<ReviewSignature> = z.object({
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

/** A reviewer's conclusion on one file. */
export const ConclusionSchema: z.ZodType<Conclusion> = z.object({
  fileId: z.string(),
  reviewer: z.string(),
  supportLevel: SupportLevelSchema,
  classType: ClassTypeSchema.optional(),
  notes: z.string().optional(),
  recordedAt: z.string(),
}).meta({ id: "ReviewConclusion" });

/** One file of a review: the annotations version pinned when the review opened. */
export const ReviewFileSchema: z.ZodType<ReviewFile> = z.object({
  fileId: z.string(),
  version: z.number().int().nullable(),
  sha256: z.string().nullable(),
  changed: z.boolean().optional().describe("True when the owner amended the file after the review opened (it can no longer be signed)"),
}).meta({ id: "ReviewFile" });

/** The confirmation a `verified` signature wrote into the owner's annotations. */
export const ReviewConfirmationSchema: z.ZodType<ReviewConfirmation> = z.object({
  fileId: z.string(),
  confirmationId: z.string(),
  version: z.number().int().nullable(),
  sha256: z.string(),
});

/** A review, as stored and answered. */
export const ReviewSchema: z.ZodType<Review> = z.object({
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
  signing: z.array(z.object({
    fileId: z.string(),
    signature: z.string(),
    confirmationId: z.string().optional(),
    sha256s: z.array(z.string()).optional(),
    since: z.string(),
  })).optional().describe("Signings under way: the signature is listed, its confirmation or audit steps are not done yet"),
  completedAt: z.string().optional(),
  cancelledAt: z.string().optional(),
}).meta({ id: "Review" });

/** `GET /review/r/{id}/verify`: each signature's status. */
export const ReviewVerificationSchema: z.ZodType<ReviewVerification> = z.object({
  signatures: z.array(z.object({ fileId: z.string(), status: z.enum(["valid", "stale", "invalid"]), reason: z.string().optional() })),
}).meta({ id: "ReviewVerification" });

/** The owner's conclusions in a file's annotations, withheld from a blind reviewer until theirs is recorded. */
export const OWNER_CONCLUSION_FIELDS: readonly string[] = [
  "supportLevel",
  "classType",
  "customClass",
  "classNote",
  "additionalNotes",
  "hasSubclass",
  "includeConfirmation",
  "confirmationData",
];
