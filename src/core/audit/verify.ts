/**
 * @module
 * Verifying a user's audit trail (docs/storage.md#audit-chain): the chain of every day in
 * order, then the head. Pure computation over what was read (no store, no runtime), so the
 * service, the command line and a reviewer's browser run the same code on the same bytes.
 */
import { type ChainedEntry, GENESIS_HASH, entryHash, type HeadFacts, headFacts, isChained, readHead } from "./chain.ts";
import { type AuditJwk, checkHeadSignature, type HeadSignatureStatus } from "./head-signature.ts";

/** Why an entry (or the head) breaks the trail. */
export type AuditTamperReason =
  | "edited"
  | "missing"
  | "reordered"
  | "inserted"
  | "tail dropped"
  | "signature invalid"
  | "signature missing"
  | "head missing"
  | "head unreadable"
  | "unreadable"
  | "wrong user";

/** One day as read: its entries in stored order (unreadable ones as `{ unreadable: true }`). */
export interface AuditTrailDay {
  /** `YYYY-MM-DD` (UTC). */
  date: string;
  /** The day's entries in stored order: legacy file first, then the current one. */
  entries: readonly unknown[];
}

/** What {@link verifyAuditTrail} checks: the days of a range and the stored head. */
export interface AuditTrailInput {
  /** The user whose trail it is. */
  userId: string;
  /** The days, oldest first; a day without entries may be left out. */
  days: readonly AuditTrailDay[];
  /** The stored head as parsed JSON (null when there is none). */
  head: unknown;
  /** First day of the range read (default: the first day given). */
  from?: string | undefined;
  /** Last day of the range read (default: the last day given). */
  to?: string | undefined;
}

/** Options of {@link verifyAuditTrail}. */
export interface VerifyAuditOptions {
  /** Public JWKs that may have signed the head (the signing key's public half, `AUDIT_VERIFY_KEYS`). */
  publicKeys?: readonly AuditJwk[] | undefined;
  /**
   * Heads must be signed (the service sets it when it has `AUDIT_SIGNING_KEY`): an unsigned head
   * is then `signature missing`, since anyone without the key can write one. Default false: an
   * unsigned head is reported as `signature: "unsigned"` and judged by the chain alone.
   */
  requireSignature?: boolean | undefined;
  /** Told after each day: entries checked so far and in all (a progress bar). */
  onProgress?: ((checked: number, total: number) => void) | undefined;
}

/** The verdict on one day. */
export interface AuditDayVerification {
  /** `YYYY-MM-DD` (UTC). */
  date: string;
  /** Entries stored that day. */
  entries: number;
  /** False when an entry of the day (or the head, on its day) is bad. */
  valid: boolean;
  /** The first entry found bad that day (its seq, or the seq expected where one is missing). */
  firstBadSeq?: number;
  /** Its position in the day as stored, from 0, when an entry is there. */
  firstBadIndex?: number;
  /** Why it is bad. */
  reason?: AuditTamperReason;
  /** What was found, in words. */
  message?: string;
  /** Entries stored before the chain began (not evidence of tampering). */
  unchained?: number;
}

/** What the head says and whether its signature holds. */
export interface AuditHeadVerification {
  /** The newest entry's seq. */
  seq: number;
  /** The newest entry's hash. */
  hash: string;
  /** The day file of the newest entry. */
  day: string;
  /** When the head was written. */
  updatedAt: string;
  /** `valid`, `invalid`, `unsigned`, or `unchecked` (signed, no key given). */
  signature: HeadSignatureStatus;
  /** On a head `audit sign-heads` signed: the newest seq then; entries up to it were appended under unsigned heads. */
  unsignedUntil?: number;
  /** True when the newest entries are in the head but not yet in their day (an append in flight, or a power cut before its day's flush). */
  pending?: boolean;
}

/** The verdict on a trail (the answer of GET /audit/verify). */
export interface AuditVerification {
  /** True when every entry and the head check out. */
  valid: boolean;
  /** The user whose trail it is. */
  userId: string;
  /** First day read. */
  from: string | null;
  /** Last day read. */
  to: string | null;
  /** Entries checked (chained and unchained). */
  entries: number;
  /** Entries stored before the chain began. */
  unchained: number;
  /** The head, or null when there is none. */
  head: AuditHeadVerification | null;
  /** Each day read, oldest first. */
  days: AuditDayVerification[];
  /** The first problem in the trail, when there is one. */
  firstBad?: { date: string; seq: number; index?: number; reason: AuditTamperReason; message: string };
}

// How often a long day reports progress, in entries.
const PROGRESS_STEP = 1_000;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** A head given as parsed JSON, as the bytes it was stored as; one too deep to write back (only an edited export) as bytes that are no head. */
function headBytesOf(head: unknown): Uint8Array | null {
  if (head === null || head === undefined) return null;
  try {
    return new TextEncoder().encode(JSON.stringify(head));
  } catch {
    return new Uint8Array(0);
  }
}

/** An entry's hash; undefined for one nested past what canonical JSON takes (only a hostile head holds one): it matches no hash. */
function hashOf(entry: Record<string, unknown>): string | undefined {
  try {
    return entryHash(entry);
  } catch {
    return undefined;
  }
}

/** Each chained seq of a day and the last position it is stored at. */
function lastIndexBySeq(entries: readonly unknown[]): Map<number, number> {
  const at = new Map<number, number>();
  entries.forEach((entry, index) => {
    if (isChained(entry)) at.set(entry.seq, index);
  });
  return at;
}

/**
 * Verifies a user's trail: every chained entry's hash, seq continuous from 1 (or from the first
 * entry of a range that starts later) and each `prevHash` the hash before it, across days;
 * then that the head names the newest entry and, given keys, that its signature holds. Names
 * the first bad entry per day and why. Entries before the first chained one are `unchained`.
 */
export async function verifyAuditTrail(input: AuditTrailInput, options: VerifyAuditOptions = {}): Promise<AuditVerification> {
  if (!Array.isArray(input.days)) throw new TypeError("verifyAuditTrail: days must be an array of {date, entries}");
  const stored = readHead(headBytesOf(input.head));
  const head = stored.kind === "head" ? stored.head : undefined;
  const from = input.from ?? input.days[0]?.date ?? null;
  const to = input.to ?? input.days[input.days.length - 1]?.date ?? null;
  // The range holds the trail's start when it reaches back to the head's first day.
  const fromStart = head === undefined || from === null || from <= head.firstDay;
  const total = input.days.reduce((sum, day) => sum + day.entries.length, 0);
  const days: AuditDayVerification[] = [];
  let firstBad: AuditVerification["firstBad"];
  let expected: number | undefined;
  let prevHash = GENESIS_HASH;
  let last: { seq: number; hash: string } | undefined;
  let unchainedTotal = 0;
  let checked = 0;

  const mark = (day: AuditDayVerification, seq: number, reason: AuditTamperReason, message: string, index?: number): void => {
    if (!day.valid) return;
    day.valid = false;
    day.firstBadSeq = seq;
    if (index !== undefined) day.firstBadIndex = index;
    day.reason = reason;
    day.message = message;
    firstBad ??= { date: day.date, seq, ...(index === undefined ? {} : { index }), reason, message };
  };

  // The service files an entry under the day it received it: one in order but in another day's file was moved there.
  const markMoved = (day: AuditDayVerification, item: ChainedEntry, date: string, index: number): void => {
    const received = item.receivedAt;
    if (typeof received !== "string" || received.slice(0, 10) === date) return;
    mark(day, item.seq, "reordered", `entry seq ${item.seq} was received on ${received.slice(0, 10)} but is stored in the file of ${date} (position ${index})`, index);
  };

  for (const { date, entries } of [...input.days].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))) {
    const day: AuditDayVerification = { date, entries: entries.length, valid: true };
    let unchained = 0;
    // Where each seq sits in the day, built once: a jump in seq asks whether the missing one comes later.
    let seqsAt: Map<number, number> | undefined;
    for (let index = 0; index < entries.length; index++) {
      if (index > 0 && index % PROGRESS_STEP === 0) options.onProgress?.(checked + index, total);
      const item = entries[index];
      if (!isChained(item)) {
        if (isRecord(item) && item.unreadable === true) {
          mark(day, expected ?? 0, "unreadable", `stored entry ${index} of ${date} cannot be read`, index);
        } else if (expected === undefined) {
          unchained++;
        } else {
          mark(day, expected, "inserted", `entry ${index} of ${date} has no chain fields, yet the chain had begun (seq ${expected} expected)`, index);
        }
        continue;
      }
      let recomputed: string;
      try {
        recomputed = entryHash(item);
      } catch {
        // Nested past the call stack (only an export edited by hand can be): it cannot be checked.
        mark(day, item.seq, "unreadable", `entry seq ${item.seq} (${date}, position ${index}) cannot be hashed`, index);
        expected = item.seq + 1;
        prevHash = item.hash;
        last = { seq: item.seq, hash: item.hash };
        continue;
      }
      if (recomputed !== item.hash) {
        mark(day, item.seq, "edited", `entry seq ${item.seq} (${date}, position ${index}) was changed: its hash is ${recomputed}, stored ${item.hash}`, index);
      } else if (expected === undefined) {
        if (fromStart && (item.seq !== 1 || item.prevHash !== GENESIS_HASH)) {
          mark(day, 1, "missing", `the trail starts at seq ${item.seq}: entries before it are missing`, index);
        } else {
          markMoved(day, item, date, index);
        }
      } else if (item.seq === expected) {
        if (item.prevHash !== prevHash) {
          mark(day, expected - 1, "edited", `entry seq ${expected - 1} was replaced: seq ${expected} names another hash before it`, index);
        } else {
          markMoved(day, item, date, index);
        }
      } else if (item.seq > expected) {
        seqsAt ??= lastIndexBySeq(entries);
        const later = (seqsAt.get(expected) ?? -1) > index;
        mark(
          day,
          expected,
          later ? "reordered" : "missing",
          later
            ? `entry seq ${expected} is stored after seq ${item.seq} (${date}, position ${index})`
            : `entries seq ${expected} to ${item.seq - 1} are missing before ${date} position ${index}`,
          index,
        );
      } else {
        // A seq already passed: an entry moved back is caught where its place was left empty, so this is an extra one.
        mark(day, item.seq, "inserted", `entry seq ${item.seq} at ${date} position ${index} comes again after seq ${expected - 1}`, index);
      }
      // Go on from what is stored, so one bad entry is named once and later days are judged on their own.
      expected = item.seq + 1;
      prevHash = item.hash;
      last = { seq: item.seq, hash: item.hash };
    }
    if (unchained > 0) day.unchained = unchained;
    unchainedTotal += unchained;
    days.push(day);
    checked += entries.length;
    options.onProgress?.(checked, total);
  }

  const headDay = (date: string): AuditDayVerification => {
    let day = days.find((candidate) => candidate.date === date);
    if (day === undefined) {
      day = { date, entries: 0, valid: true };
      days.push(day);
      days.sort((a, b) => (a.date < b.date ? -1 : 1));
    }
    return day;
  };
  // Where a finding about the head goes when no day of the range holds it: the range's last day, or its first when the range starts after the head's day.
  // The trail's head is older than the range's first day: no day of the range holds it.
  const headBeforeRange = head !== undefined && from !== null && head.day < from;
  const lastDay = to ?? (headBeforeRange ? from! : head?.day ?? "");
  let headResult: AuditHeadVerification | null = null;
  if (stored.kind === "unreadable") {
    mark(headDay(lastDay), expected ?? 0, "head unreadable", "the head cannot be read");
  } else if (head === undefined) {
    if (last !== undefined) mark(headDay(lastDay), last.seq + 1, "head missing", "the trail has chained entries but no head");
  } else {
    const facts: HeadFacts = headFacts(head);
    const otherUser = head.userId !== input.userId;
    const signature = await checkHeadSignature(head.signature, facts, options.publicKeys ?? []);
    headResult = { seq: head.seq, hash: head.hash, day: head.day, updatedAt: head.updatedAt, signature: signature.status };
    if (head.unsignedUntil !== undefined) headResult.unsignedUntil = head.unsignedUntil;
    // A range that ends before the head's day has nothing to hold against it; one that starts after
    // it lists no day of the head's (its entries, if any, came after the head: judged on the first).
    const day = to !== null && head.day > to
      ? undefined
      : headBeforeRange
      ? days.find((candidate) => candidate.entries > 0)
      : headDay(head.day);
    const entryOk = head.entry.seq === head.seq && head.entry.hash === head.hash && hashOf(head.entry) === head.hash;
    // The entries before the newest the head holds (files with fsync): each must be the one the entry after it follows.
    const held = (head.held ?? []).map((candidate) => candidate.entry);
    const chain = [...held, head.entry];
    let badHeld: number | undefined;
    for (let i = held.length - 1; i >= 0 && badHeld === undefined; i--) {
      const copy = held[i]!;
      const after = chain[i + 1]!;
      if (copy.seq !== after.seq - 1 || copy.hash !== after.prevHash || hashOf(copy) !== copy.hash) badHeld = after.seq - 1;
    }
    if (otherUser) {
      // A head (and days) copied from another user's trail: its signature holds, for that user.
      mark(day ?? headDay(lastDay), head.seq, "wrong user", `the head is the head of user ${JSON.stringify(head.userId)}'s trail, not of ${JSON.stringify(input.userId)}'s`);
    } else if (signature.status === "invalid") {
      mark(day ?? headDay(lastDay), head.seq, "signature invalid", `the head's signature is invalid: ${signature.reason ?? ""}`.trim());
    } else if (signature.status === "unsigned" && head.unsignedUntil !== undefined) {
      mark(day ?? headDay(lastDay), head.seq, "signature missing", "the head is not signed, yet it carries unsignedUntil, which only a signed head does: its signature was removed");
    } else if (signature.status === "unsigned" && options.requireSignature === true) {
      mark(
        day ?? headDay(lastDay),
        head.seq,
        "signature missing",
        "the head is not signed, yet heads are signed here (AUDIT_SIGNING_KEY): it was written without the key, or the trail was last appended to before signing began and its head was not signed when signing was turned on (`forensic-annotation audit sign-heads`)",
      );
    } else if (!entryOk) {
      mark(day ?? headDay(lastDay), head.seq, "edited", "the head's copy of the newest entry does not match the head");
    } else if (badHeld !== undefined) {
      mark(day ?? headDay(lastDay), badHeld, "edited", `the head's copy of entry seq ${badHeld} does not match the entry after it`);
    } else if (day !== undefined) {
      const lastSeq = last?.seq ?? 0;
      // The first entry the trail lacks, when the head holds it (an append in flight, or a power cut before its day's flush).
      const lacking = chain[lastSeq + 1 - chain[0]!.seq];
      if (last !== undefined && lastSeq === head.seq && last.hash !== head.hash) {
        mark(day, head.seq, "edited", `entry seq ${head.seq} is not the one the head names`);
      } else if (
        lastSeq < head.seq && lacking !== undefined && lacking.prevHash === (last?.hash ?? GENESIS_HASH) && (last !== undefined || fromStart)
      ) {
        headResult.pending = true;
      } else if (lastSeq < head.seq && (last !== undefined || fromStart)) {
        mark(day, lastSeq + 1, "tail dropped", `the head names seq ${head.seq}, the trail ends at seq ${lastSeq}: entries ${lastSeq + 1} to ${head.seq} were dropped`);
      } else if (lastSeq > head.seq) {
        mark(day, head.seq + 1, "inserted", `entries after seq ${head.seq} (the head's newest) were added`);
      }
    }
  }

  return {
    valid: firstBad === undefined,
    userId: input.userId,
    from,
    to,
    entries: total,
    unchained: unchainedTotal,
    head: headResult,
    days,
    ...(firstBad === undefined ? {} : { firstBad }),
  };
}
