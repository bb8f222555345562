/**
 * @module
 * The append-only audit trail over the audit store: one JSON array per user and UTC day.
 * Appends go through the store's lossless `appendToJsonArray`; nothing here rewrites an
 * entry that was written before.
 */
import type { BlobStore, Clock } from "../ports.ts";
import type { ValidationAuditEntry } from "../schemas/audit.ts";
import { storageKeys } from "../storage/keys.ts";
import { jsonArrayLines, NOT_JSON, parseJsonArray, readJsonItem, UnreadableJsonItem } from "../storage/json-array.ts";
import { quoted } from "../encoding/canonical-json.ts";
import { auditDayRange, utcDay } from "./days.ts";
import { ServiceError } from "../errors.ts";
import { type AuditTrailDay, type AuditTrailInput, type AuditVerification, TrailCheck, type VerifyAuditOptions, verifyAuditTrail } from "./verify.ts";
import { appendChained, type AuditChainOptions, extendableCopy, heldEntries, readHead, type SyncSha256, whileAppendsWait } from "./chain.ts";
import { isSealedItem } from "../encryption/stored-value.ts";
import { sameBytes } from "../encoding/same-bytes.ts";

const decoder = new TextDecoder();
// Fatal, and a byte order mark kept (it is not JSON whitespace): a line is served as stored only when it is valid as is.
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** Why an entry the encrypted store left sealed (it did not open) cannot be served. */
const UNOPENED = "the entry failed its integrity check under encryption at rest (altered, swapped, or under a key DATA_ENCRYPTION_KEYS does not hold)";

/** What an append answers (docs/api.md#audit). */
export interface AuditAppendResult {
  entryCount: number;
  filename: string;
}

/** The field the service writes on every stored entry: when it received it (its own clock, UTC). */
export const RECEIVED_AT = "receivedAt";

/**
 * Appends an entry to today's file (server clock, UTC) of `userId`, with the receipt time
 * beside the client's `timestamp` and the chain fields (audit/chain.ts) after it.
 */
export async function appendAuditEntry(
  store: BlobStore,
  clock: Clock,
  userId: string,
  entry: ValidationAuditEntry,
  options: AuditChainOptions = {},
): Promise<AuditAppendResult> {
  // One instant, written once: the day's name, receivedAt and the head's updatedAt all come from it.
  const now = clock.now().toISOString();
  const fields = extendableCopy(entry);
  fields[RECEIVED_AT] = now;
  const { entryCount, filename } = await appendChained(store, userId, now.slice(0, 10), now, fields, options);
  return { entryCount, filename };
}

/**
 * An entry of a stored day that cannot be served, reported in its place. The fields a client
 * reads from every entry are filled so a viewer lists it instead of failing: the start of its
 * day (its own time cannot be read), action `validate`, result `warning`, and the reason in
 * `details.validationErrors`.
 */
export interface UnreadableAuditEntry {
  unreadable: true;
  /** The stored file holding it (`audit-trails/{userId}-{day}.json`). */
  filename: string;
  /** Its position in that file, from 0. */
  index: number;
  /** Why it cannot be served. */
  reason: string;
  timestamp: string;
  userId: string;
  userEmail: "";
  action: "validate";
  result: "warning";
  details: { validationErrors: string[] };
}

/**
 * Reads several days (at most `parallel` files at a time), newest first: the last day first,
 * and in each day the last entry received first. Each entry is the UTF-8 JSON GET /audit/
 * answers for it: the stored line's own bytes where it is a servable entry, so a long day is
 * answered without building (and the collector keeping) an object or a string of it.
 */
export async function readAuditEntryJson(
  store: BlobStore,
  userId: string,
  days: readonly string[],
  parallel = 16,
): Promise<Uint8Array[]> {
  const { value: perDay, head } = await withSteadyHead(store, userId, () => eachDay(days, parallel, (day) => readAuditDayJson(store, userId, day)));
  // The newest entry (or two, on files with fsync) is in the head before it is in its day: while
  // its append runs, or when the writer died or the power was cut in between (the next append
  // stores it). It is part of the trail either way.
  const stored = readHead(head);
  for (const held of stored.kind === "head" ? heldEntries(stored.head) : []) {
    const at = days.indexOf(held.day);
    if (at !== -1 && !holdsEntry(perDay[at]!, held.entry.hash)) perDay[at]!.push(encoder.encode(JSON.stringify(held.entry)));
  }
  return perDay.reverse().flatMap((entries) => entries.reverse());
}

/**
 * Whether a day's entries hold the one whose hash is `hash`: found by its last member as the
 * service writes it (`"hash":"…"}` ends the line; a nested member would end in `}}`), else
 * by parsing each entry (a day written in another member order).
 */
function holdsEntry(entries: readonly Uint8Array[], hash: string): boolean {
  const ending = encoder.encode(`"hash":${quoted(hash)}}`);
  if (entries.some((entry) => endsWith(entry, ending))) return true;
  return entries.some((entry) => {
    const item = readJsonItem(decoder.decode(entry));
    return isRecord(item) && item.hash === hash;
  });
}

function endsWith(bytes: Uint8Array, ending: Uint8Array): boolean {
  if (bytes.length < ending.length) return false;
  const from = bytes.length - ending.length;
  for (let i = 0; i < ending.length; i++) if (bytes[from + i] !== ending[i]) return false;
  return true;
}

/**
 * One day in the order received, as the UTF-8 JSON served for each entry: the entries under
 * the legacy key first (they are older), then the current key. Never fails as a whole: an
 * entry that cannot be served is an {@link UnreadableAuditEntry} in its place.
 */
export async function readAuditDayJson(store: BlobStore, userId: string, day: string): Promise<Uint8Array[]> {
  const entries: Uint8Array[] = [];
  for (const { key, bytes } of await readDayFiles(store, userId, day)) {
    const unreadable = (index: number, reason: string) => encoder.encode(JSON.stringify(unreadableEntry(key, index, reason, userId, day)));
    const lines = servedLines(bytes, unreadable);
    if (lines !== undefined) {
      entries.push(...lines);
      continue;
    }
    parseJsonArray(bytes).items.forEach((item, index) => {
      const reason = unservable(item);
      entries.push(reason === undefined ? encoder.encode(JSON.stringify(item)) : unreadable(index, reason));
    });
  }
  return entries;
}

/** A day's stored files that exist, the legacy key's first (its entries are older). */
async function readDayFiles(store: BlobStore, userId: string, day: string): Promise<{ key: string; bytes: Uint8Array }[]> {
  const keys = [storageKeys.legacyAuditDay(userId, day), storageKeys.auditDay(userId, day)];
  const files = await Promise.all(keys.map((key) => store.get(key)));
  return keys.flatMap((key, i) => (files[i] === null ? [] : [{ key, bytes: files[i]! }]));
}

/** Why a parsed item cannot be served (not JSON, too deep, not an object, left sealed), or undefined when it can. */
function unservable(item: unknown): string | undefined {
  if (item instanceof UnreadableJsonItem) return item.reason;
  return isSealedItem(item) ? UNOPENED : undefined;
}

/**
 * The served entries of a file in the one-entry-per-line form the service writes, each line's
 * own bytes when it is a servable entry in valid UTF-8; undefined when the file is not in that
 * form or a line is not JSON at all (a tear or an edit across lines), which the full parse reads.
 */
function servedLines(bytes: Uint8Array, unreadable: (index: number, reason: string) => Uint8Array): Uint8Array[] | undefined {
  const lines = jsonArrayLines(bytes);
  if (lines === undefined) return undefined;
  for (let index = 0; index < lines.length; index++) {
    let text: string;
    let valid = true;
    try {
      text = strictDecoder.decode(lines[index]);
    } catch {
      // Not UTF-8: read as the full parse reads it (bad bytes replaced) and served as rewritten.
      text = decoder.decode(lines[index]);
      valid = false;
    }
    const item = readJsonItem(text);
    const reason = unservable(item);
    if (reason === NOT_JSON) return undefined;
    if (reason !== undefined) lines[index] = unreadable(index, reason);
    else if (!valid) lines[index] = encoder.encode(JSON.stringify(item));
  }
  return lines;
}

/**
 * One day's items as stored, the legacy file's first; `unreadable(filename, index, reason)`
 * stands in for an item that cannot be served (not JSON, too deep, not an object, or left
 * sealed because it did not open).
 */
async function readDayItems(
  store: BlobStore,
  userId: string,
  day: string,
  unreadable: (filename: string, index: number, reason: string) => unknown,
): Promise<unknown[]> {
  return (await readDayFiles(store, userId, day)).flatMap(({ key, bytes }) =>
    parseJsonArray(bytes).items.map((item, index) => {
      const reason = unservable(item);
      return reason === undefined ? item : unreadable(key, index, reason);
    })
  );
}

/** `read` of every day, at most `parallel` at a time, answered in the days' order. */
async function eachDay<T>(days: readonly string[], parallel: number, read: (day: string) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < days.length; i += parallel) out.push(...(await Promise.all(days.slice(i, i + parallel).map((day) => read(day)))));
  return out;
}

function unreadableEntry(filename: string, index: number, reason: string, userId: string, day: string): UnreadableAuditEntry {
  return {
    unreadable: true,
    filename,
    index,
    reason,
    timestamp: `${day}T00:00:00.000Z`,
    userId,
    userEmail: "",
    action: "validate",
    result: "warning",
    details: { validationErrors: [`Stored entry ${index} of ${filename} cannot be served: ${reason}`] },
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The stored bytes of a user's head; a sealed head that does not open reads as bytes that are no head (reported, not failed on). */
export function storedHeadBytes(store: BlobStore, userId: string): Promise<Uint8Array | null> {
  return headBytes(store, storageKeys.auditHead(userId));
}

/** The stored head of a user's chain as parsed JSON; null when there is none or it is not JSON. */
export async function readStoredHead(store: BlobStore, userId: string): Promise<unknown> {
  return storedHeadValue(await headBytes(store, storageKeys.auditHead(userId)));
}

/** A stored head's bytes as the verifier takes them: parsed, `{ unreadable: true }` when not JSON, null when absent. */
export function storedHeadValue(bytes: Uint8Array | null): unknown {
  if (bytes === null) return null;
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch {
    return { unreadable: true };
  }
}

/** The most days one verification of a whole trail reads (ten years). */
export const MAX_VERIFY_DAYS = 3_660;

/**
 * The days a verification reads: `startDate`..`endDate` when given (as GET reads them), else the
 * whole trail, from the older of its first stored day and the head's first day to the latest of
 * the head's day, its last stored day and today: the days between that hold no file are left
 * out (the listing found them all), so a long trail costs a read per stored day, not per calendar day.
 */
export async function auditVerifyDays(
  store: BlobStore,
  userId: string,
  startDate: string | undefined,
  endDate: string | undefined,
  today: Date,
): Promise<string[]> {
  if (startDate !== undefined || endDate !== undefined) return auditDayRange(startDate, endDate, today);
  const [stored, storedDays] = await Promise.all([readHeadForVerify(store, userId), storedAuditDays(store, userId)]);
  // From the first day stored, not only the head's: a head removed (or replaced by a new chain's)
  // must not hide the days before it.
  const first = [stored?.firstDay, storedDays[0]].filter((day) => day !== undefined).sort()[0];
  if (first === undefined) return [utcDay(today)];
  const last = [stored?.day ?? "", storedDays[storedDays.length - 1] ?? "", utcDay(today)].sort()[2]!;
  const span = (Date.parse(`${last}T00:00:00Z`) - Date.parse(`${first}T00:00:00Z`)) / 86_400_000 + 1;
  if (!(span <= MAX_VERIFY_DAYS)) {
    throw ServiceError.validation(`The trail spans ${span} days, more than ${MAX_VERIFY_DAYS} at once: verify it in ranges (startDate and endDate)`, { firstDay: first, lastDay: last });
  }
  // The range's ends stay its first and last day (the verification's from and to).
  return [...new Set([first, ...storedDays, last])].sort();
}

/** The head's days for choosing what to verify; undefined when there is none or it cannot be read (the verification says so). */
async function readHeadForVerify(store: BlobStore, userId: string): Promise<{ firstDay: string; day: string } | undefined> {
  const stored = readHead(await headBytes(store, storageKeys.auditHead(userId)));
  return stored.kind === "head" ? stored.head : undefined;
}

// Stands in for a sealed head that does not open: not JSON, so it reads as an unreadable head.
const UNOPENED_HEAD = new TextEncoder().encode("\u0000sealed head that does not open");

/** A head's stored bytes; a sealed one that does not open (swapped, altered) is reported as unreadable, not failed on. */
async function headBytes(store: BlobStore, key: string): Promise<Uint8Array | null> {
  try {
    return await store.get(key);
  } catch (err) {
    if (err instanceof ServiceError && err.kind === "integrity-failed") return UNOPENED_HEAD;
    throw err;
  }
}

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.json$/;

/**
 * The days a user's trail has files for, oldest first, found by listing the audit store (the
 * days' keys are not folders of their own, so the listing is of every user's days).
 */
export async function storedAuditDays(store: BlobStore, userId: string): Promise<string[]> {
  const current = `audit-trails/${userId}-`;
  const legacy = `audit-trails/${userId}/`;
  const days = new Set<string>();
  for (const key of await store.list("audit-trails/")) {
    const rest = key.startsWith(current) ? key.slice(current.length) : key.startsWith(legacy) ? key.slice(legacy.length) : undefined;
    const day = rest === undefined ? undefined : DAY_FILE.exec(rest)?.[1];
    if (day !== undefined) days.add(day);
  }
  return [...days].sort();
}

/**
 * The stored days of `days` (oldest first, only those holding entries) and the head, as
 * {@link verifyAuditTrail} reads them: each day's entries as stored (legacy file first), an
 * entry that cannot be read as `{ unreadable: true }`, the head's entry not added to its day.
 */
export async function readAuditTrail(store: BlobStore, userId: string, days: readonly string[], parallel = 16): Promise<AuditTrailInput> {
  const { value: perDay, head } = await withSteadyHead(store, userId, async () => {
    const read = await eachDay(days, parallel, async (date): Promise<AuditTrailDay> => ({
      date,
      entries: await readDayItems(store, userId, date, () => ({ unreadable: true })),
    }));
    return read.filter((day) => day.entries.length > 0);
  });
  return { userId, days: perDay, head: storedHeadValue(head), from: days[0], to: days[days.length - 1] };
}

/** How many times a read starts over when appends moved the head while it read the days, before it makes them wait. */
const STEADY_HEAD_TRIES = 3;

/**
 * Runs `read` (of a user's days) between two reads of the user's head until the head did not
 * change meanwhile, and returns what it read with that head. An append writes its head before
 * its day, and a head drops the entries it held once they are in their day: days read while
 * the head moved on can end before what the head still holds (a false `tail dropped`, entries
 * missing from a read). Under appends that never pause, the last try holds this process's
 * appends to the user's trail back while it reads (another process's are not held).
 */
async function withSteadyHead<T>(
  store: BlobStore,
  userId: string,
  read: (before: Uint8Array | null) => Promise<T>,
): Promise<{ value: T; head: Uint8Array | null }> {
  const key = storageKeys.auditHead(userId);
  let before = await headBytes(store, key);
  for (let attempt = 1; attempt < STEADY_HEAD_TRIES; attempt++) {
    const value = await read(before);
    const after = await headBytes(store, key);
    if (before === null ? after === null : after !== null && sameBytes(before, after)) return { value, head: after };
    before = after;
  }
  return whileAppendsWait(store, userId, async () => {
    const value = await read(await headBytes(store, key));
    return { value, head: await headBytes(store, key) };
  });
}

/**
 * Options of {@link verifyStoredTrail}: those of {@link verifyAuditTrail} (with `onProgress`, the
 * days are read once more first, to count their entries) and the entries' hash.
 */
export interface VerifyStoredOptions extends VerifyAuditOptions {
  /** SHA-256 of entry hashes (a runtime's native one); default the core's JavaScript one. */
  hash?: SyncSha256 | undefined;
}

/** Thrown while a day is read line by line and one of its files is not in the one-entry-per-line form. */
class NotLineForm extends Error {}

/** How long verification computes before it lets other work run (other requests, `/health`). */
const VERIFY_SLICE_MS = 10;
/** Days read ahead of the one verified (each at most MAX_AUDIT_DAY_BYTES and its reserve when written by the service). */
const DAYS_AHEAD = 1;

const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Verifies the stored trail of `userId` over `days` (as {@link auditVerifyDays} lists them) as
 * {@link verifyAuditTrail} would verify what {@link readAuditTrail} reads, holding one day's
 * bytes (and the next one, read ahead) and one entry at a time instead of every entry of the trail:
 * each day is read as stored, its lines parsed and checked one by one, and every
 * {@link VERIFY_SLICE_MS} ms of that the work waits a turn so other requests are served. A
 * trail with a file not in the one-entry-per-line form (edited by hand, torn by a crash) is
 * verified the whole way instead.
 */
export async function verifyStoredTrail(store: BlobStore, userId: string, days: readonly string[], options: VerifyStoredOptions = {}): Promise<AuditVerification> {
  const from = days[0] ?? null;
  const to = days[days.length - 1] ?? null;
  const { onProgress } = options;
  try {
    const total = onProgress === undefined ? 0 : await countLines(store, userId, days);
    const { value: check, head } = await withSteadyHead(store, userId, async (before) => {
      const check = new TrailCheck(userId, storedHeadValue(before), from, to, options.hash);
      let since = Date.now();
      let checked = 0;
      const reads: Promise<{ key: string; bytes: Uint8Array }[]>[] = [];
      const readAhead = (upTo: number) => {
        while (reads.length < Math.min(upTo, days.length)) {
          const read = readDayFiles(store, userId, days[reads.length]!);
          // Read ahead of its turn: a failure is answered when its day comes.
          read.catch(() => undefined);
          reads.push(read);
        }
      };
      for (let at = 0; at < days.length; at++) {
        readAhead(at + 1 + DAYS_AHEAD);
        const files = await reads[at]!;
        reads[at] = Promise.resolve([]);
        let started = false;
        let index = 0;
        for (const { bytes } of files) {
          for (const item of lineItems(bytes)) {
            if (!started) check.startDay(days[at]!);
            started = true;
            // As verifyAuditTrail tells it: every PROGRESS_STEP entries of a day, and after each day.
            if (index > 0 && index % PROGRESS_STEP === 0) onProgress?.(checked + index, total);
            index++;
            check.entry(item);
            if (Date.now() - since >= VERIFY_SLICE_MS) {
              await nextTurn();
              since = Date.now();
            }
          }
        }
        if (started) {
          check.endDay();
          checked += index;
          onProgress?.(checked, total);
        }
      }
      return check;
    });
    return await check.finish(storedHeadValue(head), options);
  } catch (err) {
    if (!(err instanceof NotLineForm)) throw err;
    return verifyAuditTrail(await readAuditTrail(store, userId, days), options);
  }
}

/** How often a long day tells its progress, in entries (as verifyAuditTrail). */
const PROGRESS_STEP = 1_000;

/** The entries of `days` as stored in the one-entry-per-line form (its line breaks less one per file), one day's bytes at a time. */
async function countLines(store: BlobStore, userId: string, days: readonly string[]): Promise<number> {
  let total = 0;
  for (const day of days) {
    for (const { bytes } of await readDayFiles(store, userId, day)) {
      let breaks = 0;
      for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) breaks++;
      total += Math.max(0, breaks - 1);
    }
  }
  return total;
}

/**
 * The items of a stored day file in the one-entry-per-line form, one at a time, as
 * {@link readAuditTrail} reads them (one that cannot be served as `{ unreadable: true }`);
 * throws {@link NotLineForm} where the file leaves that form.
 */
function* lineItems(bytes: Uint8Array): Generator<unknown> {
  const end = bytes.length;
  if (end === 2 && bytes[0] === 0x5b && bytes[1] === 0x5d) return;
  if (end < 5 || bytes[0] !== 0x5b || bytes[1] !== 0x0a || bytes[end - 2] !== 0x0a || bytes[end - 1] !== 0x5d) throw new NotLineForm();
  let start = 2;
  for (;;) {
    const brk = bytes.indexOf(0x0a, start);
    const last = brk === end - 2;
    // Every line before the last ends with the comma that separates it from the next.
    if (last ? brk === start : brk - 1 <= start || bytes[brk - 1] !== 0x2c) throw new NotLineForm();
    const item = readJsonItem(decoder.decode(bytes.subarray(start, last ? brk : brk - 1)));
    const reason = unservable(item);
    if (reason === NOT_JSON) throw new NotLineForm();
    yield reason === undefined ? item : { unreadable: true };
    if (last) return;
    start = brk + 1;
  }
}
