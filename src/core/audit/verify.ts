/**
 * @module
 * Verifying a user's audit trail (docs/storage.md#audit-chain): the chain of every day in
 * order, then the head. Pure computation over what was read (no store, no runtime), so the
 * service, the command line and a reviewer's browser run the same code on the same bytes.
 */
import { type ChainedEntry, GENESIS_HASH, entryHash, type HeadFacts, headFacts, isChained, readHead, type SyncSha256 } from "./chain.ts";
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

/**
 * Verifies a user's trail: every chained entry's hash, seq continuous from 1 (or from the first
 * entry of a range that starts later) and each `prevHash` the hash before it, across days;
 * then that the head names the newest entry and, given keys, that its signature holds. Names
 * the first bad entry per day and why. Entries before the first chained one are `unchained`.
 */
export async function verifyAuditTrail(input: AuditTrailInput, options: VerifyAuditOptions = {}): Promise<AuditVerification> {
  if (!Array.isArray(input.days)) throw new TypeError("verifyAuditTrail: days must be an array of {date, entries}");
  const from = input.from ?? input.days[0]?.date ?? null;
  const to = input.to ?? input.days[input.days.length - 1]?.date ?? null;
  const total = input.days.reduce((sum, day) => sum + day.entries.length, 0);
  const check = new TrailCheck(input.userId, input.head, from, to);
  let checked = 0;
  for (const { date, entries } of [...input.days].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))) {
    check.startDay(date);
    for (let index = 0; index < entries.length; index++) {
      if (index > 0 && index % PROGRESS_STEP === 0) options.onProgress?.(checked + index, total);
      check.entry(entries[index]);
    }
    check.endDay();
    checked += entries.length;
    options.onProgress?.(checked, total);
  }
  return await check.finish(input.head, options);
}

/** A seq jump whose verdict waits for the rest of its day: `reordered` when the seq expected comes later, else `missing`. */
interface Gap {
  day: AuditDayVerification;
  expected: number;
  seq: number;
  index: number;
}

/**
 * The verification of a trail fed entry by entry, day after day (oldest first), then finished
 * with the head: what {@link verifyAuditTrail} does over arrays, for a reader that holds one
 * entry at a time (a day read in pieces). `head` (parsed JSON, null when absent) is the head
 * read before the days: it tells whether the range holds the trail's start.
 */
export class TrailCheck {
  readonly #userId: string;
  readonly #from: string | null;
  readonly #to: string | null;
  readonly #fromStart: boolean;
  readonly #sha256: SyncSha256 | undefined;
  readonly #days: AuditDayVerification[] = [];
  #firstBad: AuditVerification["firstBad"];
  #expected: number | undefined;
  #prevHash = GENESIS_HASH;
  #last: { seq: number; hash: string } | undefined;
  #unchainedTotal = 0;
  #total = 0;
  #day: AuditDayVerification | undefined;
  #unchained = 0;
  #gap: Gap | undefined;
  #gapLater = false;

  /** Starts a check of `userId`'s trail over the range `from`..`to` (null: no day); `sha256` hashes entries (default the core's own). */
  constructor(userId: string, head: unknown, from: string | null, to: string | null, sha256?: SyncSha256) {
    this.#userId = userId;
    this.#sha256 = sha256;
    this.#from = from;
    this.#to = to;
    const stored = readHead(headBytesOf(head));
    const firstDay = stored.kind === "head" ? stored.head.firstDay : undefined;
    // The range holds the trail's start when it reaches back to the head's first day.
    this.#fromStart = firstDay === undefined || from === null || from <= firstDay;
  }

  /** Entries fed so far. */
  get entries(): number {
    return this.#total;
  }

  #mark(day: AuditDayVerification, seq: number, reason: AuditTamperReason, message: string, index?: number): void {
    if (!day.valid) return;
    day.valid = false;
    day.firstBadSeq = seq;
    if (index !== undefined) day.firstBadIndex = index;
    day.reason = reason;
    day.message = message;
    this.#firstBad ??= { date: day.date, seq, ...(index === undefined ? {} : { index }), reason, message };
  }

  // The service files an entry under the day it received it: one in order but in another day's file was moved there.
  #markMoved(day: AuditDayVerification, item: ChainedEntry, index: number): void {
    const received = item.receivedAt;
    if (typeof received !== "string" || received.slice(0, 10) === day.date) return;
    this.#mark(day, item.seq, "reordered", `entry seq ${item.seq} was received on ${received.slice(0, 10)} but is stored in the file of ${day.date} (position ${index})`, index);
  }

  /** Begins the next day (later than every day before). */
  startDay(date: string): void {
    if (this.#day !== undefined) this.endDay();
    this.#day = { date, entries: 0, valid: true };
    this.#unchained = 0;
  }

  /** The day's next entry in stored order (one that cannot be read as `{ unreadable: true }`). */
  entry(item: unknown): void {
    const day = this.#day;
    if (day === undefined) throw new TypeError("TrailCheck: entry before startDay");
    const index = day.entries++;
    this.#total++;
    // A jump in seq waits for the rest of the day: the seq it skipped may come later.
    if (this.#gap !== undefined && !this.#gapLater && isChained(item) && item.seq === this.#gap.expected) this.#gapLater = true;
    const { date } = day;
    if (!isChained(item)) {
      const expected = this.#expected;
      if (isRecord(item) && item.unreadable === true) {
        this.#mark(day, expected ?? 0, "unreadable", `stored entry ${index} of ${date} cannot be read`, index);
      } else if (expected === undefined) {
        this.#unchained++;
      } else {
        this.#mark(day, expected, "inserted", `entry ${index} of ${date} has no chain fields, yet the chain had begun (seq ${expected} expected)`, index);
      }
      return;
    }
    const expected = this.#expected;
    let recomputed: string;
    try {
      recomputed = entryHash(item, this.#sha256);
    } catch {
      // Nested past the call stack (only an export edited by hand can be): it cannot be checked.
      this.#mark(day, item.seq, "unreadable", `entry seq ${item.seq} (${date}, position ${index}) cannot be hashed`, index);
      this.#goOn(item);
      return;
    }
    if (recomputed !== item.hash) {
      this.#mark(day, item.seq, "edited", `entry seq ${item.seq} (${date}, position ${index}) was changed: its hash is ${recomputed}, stored ${item.hash}`, index);
    } else if (expected === undefined) {
      if (this.#fromStart && (item.seq !== 1 || item.prevHash !== GENESIS_HASH)) {
        this.#mark(day, 1, "missing", `the trail starts at seq ${item.seq}: entries before it are missing`, index);
      } else {
        this.#markMoved(day, item, index);
      }
    } else if (item.seq === expected) {
      if (item.prevHash !== this.#prevHash) {
        this.#mark(day, expected - 1, "edited", `entry seq ${expected - 1} was replaced: seq ${expected} names another hash before it`, index);
      } else {
        this.#markMoved(day, item, index);
      }
    } else if (item.seq > expected) {
      if (day.valid) {
        // Named at the day's end; nothing else of the day is (the day's first problem is this one).
        this.#gap = { day, expected, seq: item.seq, index };
        this.#gapLater = false;
        day.valid = false;
      }
    } else {
      // A seq already passed: an entry moved back is caught where its place was left empty, so this is an extra one.
      this.#mark(day, item.seq, "inserted", `entry seq ${item.seq} at ${date} position ${index} comes again after seq ${expected - 1}`, index);
    }
    // Go on from what is stored, so one bad entry is named once and later days are judged on their own.
    this.#goOn(item);
  }

  #goOn(item: ChainedEntry): void {
    this.#expected = item.seq + 1;
    this.#prevHash = item.hash;
    this.#last = { seq: item.seq, hash: item.hash };
  }

  /** Ends the current day. */
  endDay(): void {
    const day = this.#day;
    if (day === undefined) return;
    const gap = this.#gap;
    if (gap !== undefined) {
      const { expected, seq, index, date } = { ...gap, date: gap.day.date };
      gap.day.valid = true;
      this.#mark(
        gap.day,
        expected,
        this.#gapLater ? "reordered" : "missing",
        this.#gapLater
          ? `entry seq ${expected} is stored after seq ${seq} (${date}, position ${index})`
          : `entries seq ${expected} to ${seq - 1} are missing before ${date} position ${index}`,
        index,
      );
      this.#gap = undefined;
    }
    if (this.#unchained > 0) day.unchained = this.#unchained;
    this.#unchainedTotal += this.#unchained;
    this.#days.push(day);
    this.#day = undefined;
  }

  /** The verdict, with the head as read after the days (parsed JSON, null when absent). */
  async finish(headValue: unknown, options: VerifyAuditOptions = {}): Promise<AuditVerification> {
    this.endDay();
    const stored = readHead(headBytesOf(headValue));
    const head = stored.kind === "head" ? stored.head : undefined;
    const from = this.#from;
    const to = this.#to;
    const days = this.#days;
    const expected = this.#expected;
    const last = this.#last;
    const fromStart = this.#fromStart;
    const input = { userId: this.#userId };
    const mark = (day: AuditDayVerification, seq: number, reason: AuditTamperReason, message: string, index?: number): void =>
      this.#mark(day, seq, reason, message, index);
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

    const firstBad = this.#firstBad;
    return {
      valid: firstBad === undefined,
      userId: input.userId,
      from,
      to,
      entries: this.#total,
      unchained: this.#unchainedTotal,
      head: headResult,
      days,
      ...(firstBad === undefined ? {} : { firstBad }),
    };
  }
}
