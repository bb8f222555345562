/**
 * @module
 * Legal holds (docs/api.md#legal-holds, docs/storage.md#legal-holds): a case an administrator
 * keeps from deletion, and the bodies of `PUT` and `DELETE /user/{userUid}/holds`.
 */
import * as z from "zod";

/** The longest reason a hold records, in characters. */
export const MAX_HOLD_REASON_CHARS = 2000;
/** The most holds one user may have at a time (as many as cases a record lists). */
export const MAX_HOLDS_PER_USER = 10_000;

const caseNumber = z.string().min(1).max(200).describe("The held case: one key segment, as in `{userId}/{caseNumber}/…`");

/** Body of `PUT /user/{userUid}/holds`: the case to hold and why. */
export const HoldPlaceBodySchema = z.object({
  caseNumber,
  reason: z.string().trim().min(1).max(MAX_HOLD_REASON_CHARS).describe("Why the case is held (a case or matter reference)"),
}).meta({ id: "LegalHoldInput" });
export type HoldPlaceBody = z.infer<typeof HoldPlaceBodySchema>;

/** Body of `DELETE /user/{userUid}/holds`: the case whose hold is lifted. */
export const HoldLiftBodySchema = z.object({ caseNumber }).meta({ id: "LegalHoldRelease" });
export type HoldLiftBody = z.infer<typeof HoldLiftBodySchema>;

/** One legal hold, as stored and answered. */
export interface LegalHold {
  /** The held case. */
  caseNumber: string;
  /** Why it is held. */
  reason: string;
  /** When the hold was put on, ISO 8601. */
  heldAt: string;
  /** Who put it on: `admin` for the admin key. */
  heldBy: string;
  /** The case's images when the hold was put on. */
  imageIds: string[];
}

/** One hold as stored and answered (typed by {@link LegalHold}: public types are written out). */
export const LegalHoldSchema: z.ZodType<LegalHold> = z.object({
  caseNumber: z.string(),
  reason: z.string(),
  heldAt: z.string().describe("When the hold was put on (the server's time, ISO 8601)"),
  heldBy: z.string().describe("Who put it on: `admin` for the admin key"),
  imageIds: z.array(z.string()).describe("The case's images when the hold was put on (kept even if a later write drops them from the case document)"),
}).meta({ id: "LegalHold" });

/** The answer of the three `/user/{userUid}/holds` routes: the user's holds after the call. */
export const LegalHoldsSchema = z.object({
  userUid: z.string(),
  holds: z.array(LegalHoldSchema),
}).meta({ id: "LegalHolds" });
export type LegalHolds = z.infer<typeof LegalHoldsSchema>;

/** The stored value under `legal-holds/{userUid}` in the user store. */
export const StoredHoldsSchema = z.object({ holds: z.array(LegalHoldSchema) });
