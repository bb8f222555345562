/**
 * @module
 * Legal holds (docs/api.md#legal-holds): cases an administrator keeps from deletion. A user's
 * holds are one value under `legal-holds/{userUid}` in the user store (docs/storage.md#legal-holds),
 * beside the user records, so backups of that store carry them and no data-worker key can reach
 * them. Changes run under a per-user lock and, where the store can compare and set
 * (`replaceIf`), write only over the text they read, so concurrent changes lose nothing.
 */
import type { KvStore } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import { KeyedMutex } from "../storage/keyed-mutex.ts";
import { CONFLICT, retryOnConflict } from "../storage/conflict-retry.ts";
import { checkSegment } from "../storage/keys.ts";
import { type LegalHold, MAX_HOLDS_PER_USER, StoredHoldsSchema } from "../schemas/hold.ts";

/** The prefix of every user's holds in the user store; `/` cannot be in a user id, so no record meets it. */
export const LEGAL_HOLDS_PREFIX = "legal-holds/";

/** The user-store key of one user's holds. */
export function legalHoldsKey(userUid: string): string {
  return `${LEGAL_HOLDS_PREFIX}${checkSegment(userUid, "userUid")}`;
}

/** What a change of holds answers. */
export interface HoldChange {
  /** The user's holds after the change. */
  holds: LegalHold[];
  /** The hold put on or lifted. */
  hold: LegalHold;
}

/** The legal holds of every user. */
export interface LegalHoldStore {
  /** The user's holds, oldest first; empty when none. */
  list(userUid: string): Promise<LegalHold[]>;
  /** The hold on one case, or undefined. */
  holdOn(userUid: string, caseNumber: string): Promise<LegalHold | undefined>;
  /**
   * Puts a hold on (`placed` true) or, when the case is already held, records the new reason
   * and keeps the rest (`placed` false).
   */
  place(userUid: string, hold: LegalHold): Promise<HoldChange & { placed: boolean }>;
  /** Lifts the hold on one case; null when the case was not held. */
  lift(userUid: string, caseNumber: string): Promise<HoldChange | null>;
  /** Every user who has (or had) a hold: the users whose holds an image deletion must consult. */
  heldUsers(): Promise<string[]>;
}

/** Compare-and-set attempts of one change before it gives up (as the user records'). */
const MAX_ATTEMPTS = 50;

/** The holds of one user as stored; a value that is not holds is the service's failure, never "no hold". */
function parseHolds(stored: string | null): LegalHold[] {
  if (stored === null) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    throw ServiceError.server("The stored legal holds are not valid JSON");
  }
  const holds = StoredHoldsSchema.safeParse(parsed);
  if (!holds.success) throw ServiceError.server("The stored legal holds do not match their shape");
  return holds.data.holds;
}

/** Legal holds over the user store. */
export function legalHoldStore(users: KvStore): LegalHoldStore {
  const mutex = new KeyedMutex();
  const write = users.replaceIf?.bind(users) ?? (async (key: string, _read: string | null, value: string) => {
    await users.put(key, value);
    return true;
  });
  // Read, change, write over what was read; `change` answers null to write nothing.
  const change = <T>(userUid: string, apply: (holds: LegalHold[]) => { holds: LegalHold[]; result: T } | null): Promise<T | null> => {
    const key = legalHoldsKey(userUid);
    return mutex.run(key, () =>
      retryOnConflict(key, MAX_ATTEMPTS, async () => {
        const stored = await users.get(key);
        const changed = apply(parseHolds(stored));
        if (changed === null) return null;
        // The key stays when the last hold is lifted (`{"holds":[]}`): a plain delete could undo a concurrent placement.
        return (await write(key, stored, JSON.stringify({ holds: changed.holds }))) ? changed.result : CONFLICT;
      })
    );
  };
  const list = async (userUid: string) => parseHolds(await users.get(legalHoldsKey(userUid)));
  return {
    list,
    holdOn: async (userUid, caseNumber) => (await list(userUid)).find((hold) => hold.caseNumber === caseNumber),
    async place(userUid, hold) {
      const result = await change(userUid, (holds) => {
        const index = holds.findIndex((held) => held.caseNumber === hold.caseNumber);
        if (index !== -1) {
          const kept = { ...holds[index]!, reason: hold.reason };
          const next = holds.map((held, at) => at === index ? kept : held);
          return { holds: next, result: { holds: next, hold: kept, placed: false } };
        }
        if (holds.length >= MAX_HOLDS_PER_USER) {
          throw ServiceError.validation(`A user may have at most ${MAX_HOLDS_PER_USER} legal holds at a time`, { limit: MAX_HOLDS_PER_USER });
        }
        const next = [...holds, hold];
        return { holds: next, result: { holds: next, hold, placed: true } };
      });
      return result!;
    },
    lift: (userUid, caseNumber) =>
      change(userUid, (holds) => {
        const hold = holds.find((held) => held.caseNumber === caseNumber);
        if (hold === undefined) return null;
        const next = holds.filter((held) => held !== hold);
        return { holds: next, result: { holds: next, hold } };
      }),
    heldUsers: async () => (await users.list(LEGAL_HOLDS_PREFIX)).filter((key) => key.startsWith(LEGAL_HOLDS_PREFIX)).map((key) => key.slice(LEGAL_HOLDS_PREFIX.length)),
  };
}

/** The 409 of a deletion a hold refuses: details name the hold, never its reason (the owner may read them). */
export function heldConflict(userUid: string, hold: LegalHold, what: string): ServiceError {
  return ServiceError.conflict(
    `Case ${hold.caseNumber} of user ${userUid} is on legal hold since ${hold.heldAt}: ${what} is refused until an administrator lifts the hold`,
    { legalHold: { userUid, caseNumber: hold.caseNumber, heldAt: hold.heldAt } },
  );
}

/**
 * Refuses (409) the deletion of a data-worker key under a held case, `{userUid}/{caseNumber}/…`;
 * a key of fewer segments is in no case folder.
 */
export async function refuseHeldKey(holds: LegalHoldStore, key: string): Promise<void> {
  const segments = key.split("/");
  if (segments.length < 3) return;
  const hold = await holds.holdOn(segments[0]!, segments[1]!);
  if (hold !== undefined) throw heldConflict(segments[0]!, hold, `deleting ${key}`);
}
