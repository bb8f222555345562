/**
 * @module
 * Which legal hold keeps an image (docs/api.md#legal-holds): an image is a case's when the
 * case document lists it as a file (`files[].id`), now or when the hold was put on (a later
 * write that drops it from the document does not free it).
 */
import { caseFileIds, type CaseStore } from "../cases/case-store.ts";
import type { LegalHold } from "../schemas/hold.ts";
import type { LegalHoldStore } from "./legal-holds.ts";

/** The hold that keeps an image, and whose it is. */
export interface ImageHold {
  /** The owner of the held case. */
  userUid: string;
  /** The hold. */
  hold: LegalHold;
}

/** Answers the hold that keeps an image, or undefined when none does. */
export type HeldImageFinder = (imageId: string) => Promise<ImageHold | undefined>;

/** The finder over the holds and the case documents. Holds are few: every held case is consulted. */
export function heldImageFinder(holds: LegalHoldStore, cases: CaseStore): HeldImageFinder {
  return async (imageId) => {
    const held: ImageHold[] = [];
    for (const userUid of await holds.heldUsers()) {
      for (const hold of await holds.list(userUid)) held.push({ userUid, hold });
    }
    // What the hold recorded first: no document to read.
    const recorded = held.find((entry) => entry.hold.imageIds.includes(imageId));
    if (recorded !== undefined) return recorded;
    for (const entry of held) {
      if ((await caseFileIds(cases, entry.userUid, entry.hold.caseNumber) ?? []).includes(imageId)) return entry;
    }
    return undefined;
  };
}
