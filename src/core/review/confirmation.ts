/**
 * @module
 * The v1.0 confirmation a `verified` signature writes into the owner's annotations
 * (docs/review.md#what-the-owner-sees): `includeConfirmation: true` and `confirmationData`
 * with the reviewer's name, the time and a `CONF-` id, so the v1.0 client and the PDF report
 * show it; the signature itself rides along in `confirmationData.signature`, so the report can
 * print it as verified only when it verifies.
 */
import type { BlobStore, Bytes } from "../ports.ts";
import type { Confirmation } from "../schemas/annotation.ts";
import type { ReviewSignature } from "../schemas/review.ts";
import { sha256Hex } from "../encoding/digest.ts";
import { ServiceError } from "../errors.ts";

const ID_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A new confirmation id: "CONF-" and 10 characters A-Z0-9 (docs/exchange.md#confirmations). */
export function newConfirmationId(): string {
  const random = crypto.getRandomValues(new Uint8Array(10));
  return `CONF-${Array.from(random, (byte) => ID_CHARACTERS[byte % ID_CHARACTERS.length]).join("")}`;
}

/** The v1.0 confirmation of a signature, with the signature beside its fields. */
export function confirmationOf(signature: ReviewSignature, email: string | undefined): Confirmation & { signature: ReviewSignature } {
  return {
    fullName: signature.printedName,
    badgeId: "",
    timestamp: signature.signedAt,
    confirmationId: newConfirmationId(),
    confirmedBy: signature.signer,
    confirmedByEmail: email ?? "",
    confirmedByCompany: "",
    confirmedAt: signature.signedAt,
    signature,
  };
}

class Amended extends Error {}

/** Replaces a key's value with `change(current)` atomically; answers the version written (null without history). */
export type AnnotationsUpdate = (key: string, change: (current: Bytes | null) => Promise<Uint8Array>) => Promise<{ version: number | null }>;

/** An {@link AnnotationsUpdate} straight on the data store (no history kept). */
export function storeUpdate(data: BlobStore): AnnotationsUpdate {
  return async (key, change) => {
    await data.update(key, change);
    return { version: null };
  };
}

/** What else a confirmation's write does, inside the annotations' own atomic update. */
export interface ConfirmationWrite {
  /**
   * What the current bytes, by their SHA-256, are: `earlier`, this signature's confirmation
   * written by an earlier try (by the hashes its tries recorded, never by the content, which the
   * owner may have copied), not written again; `accepted`, still the version the signature signed
   * (the pinned one, or a confirmation over it); else `amended`. May throw to refuse.
   */
  judge: (sha256: string) => Promise<"earlier" | "accepted" | "amended">;
  /** The seal of the confirmed annotations (confirmation-seal.ts); none without a signing key. */
  seal?: (annotations: Record<string, unknown>) => Promise<string | undefined>;
  /**
   * Runs once the bytes are known to be the signed version, given the SHA-256 of the bytes about
   * to replace them (so another review counts them before they are listed as written). Runs
   * again, with other bytes, when a store retries the update after a conflict.
   */
  beforeWrite?: (sha256: string) => Promise<void>;
}

/** What a confirmation's write came to. */
export type ConfirmationOutcome =
  /** Written now, or found written by an earlier try of the same signature (`version` null then: the caller looks it up). */
  | { kind: "written"; confirmationId: string; sha256: string; version: number | null; earlier: boolean }
  /** Not written: the annotations changed or are gone. */
  | { kind: "amended" }
  /** Not written: the update refused for `cause` before writing (annotations that are no object, a conflict `beforeWrite` found). */
  | { kind: "refused"; cause: unknown };

class Earlier {
  constructor(readonly sha256: string) {}
}

/**
 * Writes the confirmation into the annotations at `key` as a new version, only over bytes that
 * `write.judge` accepts, and once per signature: bytes it judges an earlier try's are answered as
 * written. Throws only what the store
 * itself threw, after which the write may or may not have landed.
 */
export async function writeConfirmation(
  update: AnnotationsUpdate,
  key: string,
  confirmation: Confirmation,
  write: ConfirmationWrite,
): Promise<ConfirmationOutcome> {
  let written: { sha256: string } | undefined;
  let refusal: { cause: unknown } | undefined;
  let version: number | null;
  try {
    ({ version } = await update(key, async (current) => {
      written = undefined;
      try {
        if (current === null) throw new Amended();
        const sha = await sha256Hex(current);
        const judged = await write.judge(sha);
        if (judged === "earlier") throw new Earlier(sha);
        if (judged === "amended") throw new Amended();
        const annotations: unknown = JSON.parse(decoder.decode(current));
        // Reviews refuse such files when they open; one opened before that is refused here, not rewritten.
        if (annotations === null || typeof annotations !== "object" || Array.isArray(annotations)) {
          throw ServiceError.conflict("The annotations are not a JSON object: no confirmation can be written into them", { key });
        }
        const seal = await write.seal?.(annotations as Record<string, unknown>);
        const confirmationData = seal === undefined ? confirmation : { ...confirmation, seal };
        const bytes = encoder.encode(JSON.stringify({ ...annotations, includeConfirmation: true, confirmationData, updatedAt: confirmation.confirmedAt }));
        const sha256 = await sha256Hex(bytes);
        await write.beforeWrite?.(sha256);
        written = { sha256 };
        return bytes;
      } catch (err) {
        if (!(err instanceof Amended) && !(err instanceof Earlier)) refusal = { cause: err };
        throw err;
      }
    }));
  } catch (err) {
    if (err instanceof Amended) return { kind: "amended" };
    if (err instanceof Earlier) return { kind: "written", confirmationId: confirmation.confirmationId, sha256: err.sha256, version: null, earlier: true };
    if (refusal !== undefined && refusal.cause === err) return { kind: "refused", cause: err };
    throw err;
  }
  if (written === undefined) throw ServiceError.server("The annotations' update wrote without asking for the confirmation's bytes");
  return { kind: "written", confirmationId: confirmation.confirmationId, sha256: written.sha256, version, earlier: false };
}
