/**
 * @module
 * The per-user hash chain of the audit trail (docs/storage.md#audit-chain). Every stored entry
 * carries `seq` (1, 2, 3... across all of the user's days), `prevHash` (the previous entry's
 * `hash`, 64 zeros for the first) and `hash`: the SHA-256 of the RFC 8785 canonical JSON of the
 * entry without `hash`. The head (`audit-heads/{userId}.json`) names the newest entry, holds
 * a copy of it and, with a signing key, a JWS over its facts.
 *
 * One append: (1) under the head's compare-and-swap, make sure the entry the head names is
 * stored (a writer that died after step 1 left it only in the head), then compute the new
 * entry from the head and write the new head; (2) append the entry to its day at the index
 * the head names. Step 2 may run twice (its writer and a later one) and stores it once. The
 * head always names the newest entry, so a dropped tail is seen; a head one entry ahead of
 * its day is an append in flight or cut short, whose entry the head itself holds.
 *
 * A store whose day appends may resolve before they are durable (`syncJsonArray`: files with
 * fsync) is given `deferSync`, and its heads also hold (`held`, oldest first) every entry
 * before the newest whose day flush this process has not seen resolve: an append waits for its
 * head's flush only. A day flush (`syncJsonArray`) starts, not awaited, once {@link FLUSH_AT}
 * entries are held, so one flush covers several appends and seldom runs beside a head's (two
 * flushes at once cost about what they cost in a row); a head drops an entry only after that
 * flush resolved, and an append finding {@link MAX_HELD} entries held waits for it first. After
 * a power cut the day lacks at most the entries the head holds, and step (1) stores them in
 * order. Crash points (files, FSYNC=audit): head N+1 not on disk: head N holds every entry its
 * day may lack; head N+1 on disk: it holds N+1 and every earlier entry not known flushed. A new
 * day's file and folder entry are synced before the append resolves, as before.
 */
import type { AppendOptions, BlobStore } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import { canonicalJson, quoted } from "../encoding/canonical-json.ts";
import { sha256HexSync } from "../encoding/sha256.ts";
import { sameBytes } from "../encoding/same-bytes.ts";
import { KeyedMutex } from "../storage/keyed-mutex.ts";
import { forgetJsonText, parseJsonArray, useJsonText } from "../storage/json-array.ts";
import { storageKeys } from "../storage/keys.ts";

/** The fields the service writes on every chained entry; clients may not send them. */
export const CHAIN_FIELDS = ["seq", "prevHash", "hash"] as const;
/** `prevHash` of a user's first chained entry. */
export const GENESIS_HASH = "0".repeat(64);
/** Marks a head document, so a reader knows what it holds. */
export const HEAD_FORMAT = "forensic-annotation/audit-head@1";

/** A stored entry with its chain fields. */
export interface ChainedEntry extends Record<string, unknown> {
  /** Its place in the user's trail, from 1, across days. */
  seq: number;
  /** The hash of the entry before it (64 zeros for the first). */
  prevHash: string;
  /** SHA-256 of its canonical JSON without `hash`, hex. */
  hash: string;
}

/** The facts a head states (and a signature covers). */
export interface HeadFacts {
  /** {@link HEAD_FORMAT}. */
  format: typeof HEAD_FORMAT;
  /** The user whose trail it is. */
  userId: string;
  /** The newest entry's seq. */
  seq: number;
  /** The newest entry's hash. */
  hash: string;
  /** The day file holding it. */
  day: string;
  /** Its position in that file, from 0. */
  index: number;
  /** The day of the user's first chained entry. */
  firstDay: string;
  /** When the head was written (the service's clock). */
  updatedAt: string;
  /**
   * On a signed head of a trail whose heads were unsigned before (`audit sign-heads` signed it):
   * the newest entry then. Entries up to it were appended under unsigned heads.
   */
  unsignedUntil?: number;
}

/** An entry a head holds, and where its day stores it. */
export interface HeldEntry {
  /** The day file holding it. */
  day: string;
  /** Its position in that file, from 0. */
  index: number;
  /** The entry as stored. */
  entry: ChainedEntry;
}

/** The stored head: its facts, the newest entry itself, and the signature when a key is configured. */
export interface AuditHead extends HeadFacts {
  /** A copy of the newest entry, so a writer cut short loses nothing. */
  entry: ChainedEntry;
  /**
   * The entries before it (oldest first, seqs in a row) whose day may not be durable yet, on a
   * store whose day appends are flushed later (files with fsync). Heads written before held one, as `previous`.
   */
  held?: HeldEntry[];
  /** Until when (epoch ms) the writer of the newest entry is still storing it. */
  until: number;
  /**
   * The UTF-8 bytes of the entries appended to the head's day through the chain, separators
   * included (not signed: it bounds the day, it proves nothing). Absent on heads written before:
   * the next append to that day measures the stored day.
   */
  dayBytes?: number;
  /** Compact JWS whose payload is the canonical JSON of the facts. */
  signature?: string;
}

/** Signs head facts (a compact JWS over their canonical JSON). */
export interface HeadSigner {
  /** The compact JWS of `payload`. */
  sign(payload: string): Promise<string>;
  /**
   * Whether a stored head's signature holds (this key's public half or an older verify key).
   * An append signs over a head it did not write only when it does; without this check, a
   * signed head is taken as it is.
   */
  holds?(signature: string, facts: HeadFacts): Promise<boolean>;
}

/** Lower-case hex SHA-256 of a text's UTF-8, computed synchronously. */
export type SyncSha256 = (text: string) => string;

/** Options of the chained append. */
export interface AuditChainOptions {
  /**
   * Signs every head of a trail begun with it or signed before (`AUDIT_SIGNING_KEY`); a trail
   * whose head is unsigned, or signed by no key it knows, stays unsigned until `audit sign-heads`
   * signs it: signing over such a head would vouch for whatever was done to it. Without a
   * signer heads are unsigned.
   */
  signer?: HeadSigner | undefined;
  /**
   * The SHA-256 of entry hashes: a runtime's native one (the server adapters') is several
   * times faster than the core's JavaScript one, the default; both give the same hex.
   */
  hash?: SyncSha256 | undefined;
  /**
   * The most bytes a day of the user's trail takes (`MAX_AUDIT_DAY_BYTES`, default
   * {@link DEFAULT_MAX_DAY_BYTES}): an append past it is refused ({@link AuditDayFull}).
   */
  maxDayBytes?: number | undefined;
  /**
   * The entry is never refused by `maxDayBytes`: the service's own entries record what was already
   * done (an upload, a deletion), so refusing one would leave that act out of the trail; their
   * routes' rate limits bound them.
   */
  reserve?: boolean | undefined;
  /**
   * Writes nothing when the newest entry of the day satisfies it, and answers that entry instead
   * (a refusal recorded once, not once per refused request).
   */
  unlessNewest?: ((entry: ChainedEntry) => boolean) | undefined;
}

/** The default of `MAX_AUDIT_DAY_BYTES`: 64 MiB, far below what a reader can hold as one string (V8: about 512 MiB). */
export const DEFAULT_MAX_DAY_BYTES = 64 * 1024 * 1024;

/** An append refused because its day holds `MAX_AUDIT_DAY_BYTES` (429 until the next UTC day; nothing written). */
export class AuditDayFull extends ServiceError {
  /** Refuses the append of `userId` to `day` (a `YYYY-MM-DD` UTC day) under the cap `maxDayBytes`, at `now` (epoch ms). */
  constructor(userId: string, day: string, maxDayBytes: number, now: number) {
    const retryAfterSeconds = Math.max(1, Math.ceil((Date.parse(`${day}T00:00:00Z`) + 86_400_000 - now) / 1000));
    super(
      "rate-limited",
      `The audit trail of ${userId} holds its most for ${day} (MAX_AUDIT_DAY_BYTES, ${maxDayBytes} bytes): appends resume on the next UTC day`,
      { limit: "MAX_AUDIT_DAY_BYTES", maxDayBytes, day, retryAfterSeconds },
    );
  }
}

/** Answered by an append that wrote nothing (`unlessNewest`): the newest entry of the day. */
class NewestKept extends Error {
  constructor(readonly head: AuditHead) {
    super("newest kept");
  }
}

// A writer stores its entry within milliseconds; past this, another writer stores it instead.
const LEASE_MS = 3_000;
const MAX_WAIT_MS = 2 * LEASE_MS;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
// Heads are rewritten by every append: a store may write them in place (files: two slots).
const IN_PLACE = { inPlace: true } as const;
// The head holds the entry until a later flush of its day (syncJsonArray) resolved.
const DEFER_SYNC: AppendOptions = { deferSync: true };
/** Entries a head holds (the newest included) at which their days' flush starts, not awaited. */
export const FLUSH_AT = 8;
/** The most entries a head holds: an append finding this many waits for the days' flush. */
export const MAX_HELD = 16;
// Nor more than this of entry text (the head's slot grows with it): past it, the flush is awaited too.
const MAX_HELD_CHARS = 64 * 1024;

/** The hash of an entry: SHA-256 (`sha256`, default the core's own) over the canonical JSON of the entry without `hash`. */
export function entryHash(entry: Record<string, unknown>, sha256: SyncSha256 = sha256HexSync): string {
  return sha256(canonicalJson(entry, "hash"));
}

/**
 * A copy of `record` that members may be added to: by Object.assign, which keeps V8's fast
 * object layout, where a spread with members added after it made a slow one (about 3 us more
 * per entry, and slower to serialize and hash). A member named `__proto__` would be assigned as
 * the prototype instead of copied: such a record is spread.
 */
export function extendableCopy(record: Record<string, unknown>): Record<string, unknown> {
  return Object.prototype.hasOwnProperty.call(record, "__proto__") ? { ...record } : Object.assign({}, record);
}

/** A copy of `entry` with `seq` and `prevHash` after its own members, then its `hash`: the entry as stored. */
export function chainEntry(entry: Record<string, unknown>, seq: number, prevHash: string, sha256?: SyncSha256): ChainedEntry {
  const chained = extendableCopy(entry) as ChainedEntry;
  chained.seq = seq;
  chained.prevHash = prevHash;
  chained.hash = entryHash(chained, sha256);
  return chained;
}

/**
 * The text of `JSON.stringify(head)` for a head whose members are in the stored order (its
 * facts, `entry`, `held` when any, `until`, then `signature` when signed), written member by
 * member with `entryText` = `JSON.stringify(head.entry)` given, so the entry is serialized once
 * for the head and its day (and `heldTexts`, the held entries' texts, kept from the heads before).
 */
export function headJson(head: AuditHead, entryText: string, heldTexts?: readonly string[]): string {
  const signature = head.signature === undefined ? "" : `,"signature":${quoted(head.signature)}`;
  let held = "";
  const entries = head.held ?? [];
  for (let i = 0; i < entries.length; i++) {
    const { day, index, entry } = entries[i]!;
    held += `${i === 0 ? ',"held":[' : ","}{"day":${quoted(day)},"index":${jsonNumber(index)},"entry":${heldTexts?.[i] ?? JSON.stringify(entry)}}`;
  }
  if (entries.length > 0) held += "]";
  return `{"format":${quoted(head.format)},"userId":${quoted(head.userId)},"seq":${jsonNumber(head.seq)},"hash":${quoted(head.hash)},` +
    `"day":${quoted(head.day)},"index":${jsonNumber(head.index)},"firstDay":${quoted(head.firstDay)},"updatedAt":${quoted(head.updatedAt)},` +
    `${head.unsignedUntil === undefined ? "" : `"unsignedUntil":${jsonNumber(head.unsignedUntil)},`}"entry":${entryText}${held},"until":${jsonNumber(head.until)}${head.dayBytes === undefined ? "" : `,"dayBytes":${jsonNumber(head.dayBytes)}`}${signature}}`;
}

/** The entries a head holds, oldest first: `held`, then the newest. */
export function heldEntries(head: AuditHead): HeldEntry[] {
  const newest = { day: head.day, index: head.index, entry: head.entry };
  return head.held === undefined ? [newest] : [...head.held, newest];
}

/** The length of a text's UTF-8 (a lone surrogate as the 3 bytes of U+FFFD, as TextEncoder writes it). */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2;
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** A number as JSON.stringify writes it. */
const jsonNumber = (value: number): string => (Number.isFinite(value) ? String(value) : "null");

/** The facts of a head, the part a signature covers. */
export function headFacts(head: HeadFacts): HeadFacts {
  const { format, userId, seq, hash, day, index, firstDay, updatedAt, unsignedUntil } = head;
  const facts: HeadFacts = { format, userId, seq, hash, day, index, firstDay, updatedAt };
  if (unsignedUntil !== undefined) facts.unsignedUntil = unsignedUntil;
  return facts;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Whether a value has well-formed chain fields. */
export function isChained(value: unknown): value is ChainedEntry {
  return isRecord(value) && Number.isSafeInteger(value.seq) && (value.seq as number) >= 1 &&
    typeof value.prevHash === "string" && typeof value.hash === "string";
}

/** What a stored head holds: the newest entry, nothing yet (`empty`: no entry was ever kept), or unreadable bytes. */
export type StoredHead = { kind: "head"; head: AuditHead } | { kind: "empty" } | { kind: "unreadable" };

/** Reads stored head bytes. */
export function readHead(bytes: Uint8Array | null): StoredHead {
  if (bytes === null) return { kind: "empty" };
  const head = parseHead(bytes);
  if (head !== undefined) return { kind: "head", head };
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes));
    if (isRecord(value) && value.format === HEAD_FORMAT && value.seq === 0) return { kind: "empty" };
  } catch {
    // not JSON: unreadable
  }
  return { kind: "unreadable" };
}

/** A stored head read back; undefined when the bytes are not one. */
export function parseHead(bytes: Uint8Array): AuditHead | undefined {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    return undefined;
  }
  if (!isRecord(value) || value.format !== HEAD_FORMAT || !isChained(value.entry)) return undefined;
  const { userId, seq, hash, day, index, firstDay, updatedAt, until, signature } = value;
  if (typeof userId !== "string" || !Number.isSafeInteger(seq) || typeof hash !== "string" || typeof day !== "string") return undefined;
  if (!Number.isSafeInteger(index) || typeof firstDay !== "string" || typeof updatedAt !== "string") return undefined;
  if (!DAY.test(day) || !DAY.test(firstDay) || firstDay > day) return undefined;
  if (typeof until !== "number" || (signature !== undefined && typeof signature !== "string")) return undefined;
  const { unsignedUntil, dayBytes } = value;
  if (dayBytes !== undefined && !(Number.isSafeInteger(dayBytes) && (dayBytes as number) >= 0)) return undefined;
  if (unsignedUntil !== undefined && !(Number.isSafeInteger(unsignedUntil) && (unsignedUntil as number) >= 0 && (unsignedUntil as number) <= (seq as number))) return undefined;
  const { previous, held } = value;
  if (held !== undefined && !(Array.isArray(held) && held.every(isHeld))) return undefined;
  if (previous !== undefined && (held !== undefined || !isHeld(previous))) return undefined;
  // A head written before held one entry at most, as `previous`: read as `held` of one.
  if (previous !== undefined) {
    value.held = [previous];
    delete value.previous;
  }
  return value as unknown as AuditHead;
}

const isHeld = (value: unknown): value is HeldEntry =>
  isRecord(value) && typeof value.day === "string" && DAY.test(value.day) && Number.isSafeInteger(value.index) &&
  (value.index as number) >= 0 && isChained(value.entry);

const DAY = /^\d{4}-\d{2}-\d{2}$/;

class HeadBusy extends Error {}

/** Users a store's per-user values are kept for in this process. */
const MAX_TIPS = 10_000;

/** Per store, a value per user, for at most {@link MAX_TIPS} users (the one set longest ago goes first). */
class PerUser<T> {
  readonly #stores = new WeakMap<BlobStore, Map<string, T>>();

  /** The user's value in `store`, if any. */
  get(store: BlobStore, userId: string): T | undefined {
    return this.#stores.get(store)?.get(userId);
  }

  /** Sets the user's value as the newest; past the bound, the oldest user's goes. */
  set(store: BlobStore, userId: string, value: T): void {
    let users = this.#stores.get(store);
    if (users === undefined) this.#stores.set(store, users = new Map());
    users.delete(userId);
    users.set(userId, value);
    if (users.size > MAX_TIPS) users.delete(users.keys().next().value ?? userId);
  }
}

// Per store: one append per user at a time in this process, the newest entries this process
// has seen stored (so the common append does not reread its day), and the head it last wrote
// (so the next append does not parse it again while the stored bytes are still those).
const locks = new WeakMap<BlobStore, KeyedMutex>();
const storedTips = new PerUser<string>();
const writtenHeads = new PerUser<WrittenHead>();

/** A head this process wrote: its bytes, itself, its entry's JSON text and its held entries' (for the next head's `held`). */
interface WrittenHead {
  bytes: Uint8Array;
  head: AuditHead;
  entryText: string;
  heldTexts: readonly string[];
}

/** Per user: every entry up to `durableSeq` is known durable in its day; `flushing` while a day flush runs. */
interface Durability {
  durableSeq: number;
  flushing: Promise<void> | undefined;
}
const durabilities = new PerUser<Durability>();

function durabilityOf(store: BlobStore, userId: string): Durability {
  let durability = durabilities.get(store, userId);
  if (durability === undefined) durabilities.set(store, userId, durability = { durableSeq: 0, flushing: undefined });
  return durability;
}

/** Marks the user's entries up to `seq` durable in their days. */
function markDurable(store: BlobStore, userId: string, seq: number): void {
  const durability = durabilityOf(store, userId);
  if (seq > durability.durableSeq) durability.durableSeq = seq;
}

/**
 * Flushes the days of every entry `head` holds and marks them durable when done (the store's
 * own flushes fail for good after one failed: the entries then stay held, and appends fail).
 */
function flushHeld(store: BlobStore, head: AuditHead): Promise<void> {
  const durability = durabilityOf(store, head.userId);
  const keys = new Set(heldEntries(head).map((held) => storageKeys.auditDay(head.userId, held.day)));
  const flushed = Promise.all([...keys].map((key) => store.syncJsonArray!(key))).then(() => markDurable(store, head.userId, head.seq));
  const running: Promise<void> = flushed.catch(() => undefined).finally(() => {
    if (durability.flushing === running) durability.flushing = undefined;
  });
  durability.flushing = running;
  return flushed;
}

/** How many of the entries a head written here holds (its newest included) are not known durable, and their JSON text's length. */
function notDurable(written: Pick<WrittenHead, "head" | "entryText" | "heldTexts">, durableSeq: number): { count: number; chars: number } {
  let count = 1;
  let chars = written.entryText.length;
  (written.head.held ?? []).forEach((held, i) => {
    if (held.entry.seq <= durableSeq) return;
    count++;
    chars += written.heldTexts[i]?.length ?? 0;
  });
  return { count, chars };
}

/** Waits, before the next head, until the entries the last head of this process holds leave room for one more. */
async function makeRoom(store: BlobStore, userId: string): Promise<void> {
  const written = writtenHeads.get(store, userId);
  if (written === undefined) return;
  const durability = durabilityOf(store, userId);
  const full = () => {
    const { count, chars } = notDurable(written, durability.durableSeq);
    return count >= MAX_HELD || chars >= MAX_HELD_CHARS;
  };
  if (!full() || written.head.seq <= durability.durableSeq) return;
  await durability.flushing;
  if (full() && written.head.seq > durability.durableSeq) await flushHeld(store, written.head);
}
/** The head this process last wrote for the user when `bytes` are still its bytes. */
function writtenHeadOf(store: BlobStore, userId: string, bytes: Uint8Array | null): WrittenHead | undefined {
  const written = writtenHeads.get(store, userId);
  return bytes !== null && written !== undefined && sameBytes(bytes, written.bytes) ? written : undefined;
}

/** Runs `read` while this process's appends to the user's trail wait, so the head cannot move under it. */
export function whileAppendsWait<T>(store: BlobStore, userId: string, read: () => Promise<T>): Promise<T> {
  return lockOf(store).run(userId, read);
}

function lockOf(store: BlobStore): KeyedMutex {
  let lock = locks.get(store);
  if (lock === undefined) locks.set(store, lock = new KeyedMutex());
  return lock;
}


/** Days read whole, by key, while their held entries are placed (two held entries usually share a day). */
type DaysRead = Map<string, Promise<readonly unknown[]>>;

/** Where an entry a head holds stands in its day: stored at its index, absent, or its place taken by another item. */
async function placeOf(store: BlobStore, key: string, held: HeldEntry, days: DaysRead): Promise<"stored" | "absent" | "taken"> {
  // A store that reads one item (a day in blocks) spares reading the whole day.
  let item: unknown;
  if (store.jsonArrayItem !== undefined) item = await store.jsonArrayItem(key, held.index);
  else {
    let items = days.get(key);
    if (items === undefined) days.set(key, items = store.get(key).then((bytes) => (bytes === null ? [] : parseJsonArray(bytes).items)));
    item = (await items)[held.index];
  }
  if (item === undefined) return "absent";
  return isRecord(item) && item.hash === held.entry.hash ? "stored" : "taken";
}

/**
 * Makes sure the entry a head names is stored; rejects with {@link HeadBusy} while its writer
 * may still be at work. Undefined, without a promise to wait for, when this process stored it.
 */
function storeTip(store: BlobStore, head: AuditHead): Promise<void> | undefined {
  return storedTips.get(store, head.userId) === head.hash ? undefined : storeUnknownTip(store, head);
}

async function storeUnknownTip(store: BlobStore, head: AuditHead): Promise<void> {
  // Oldest first, so the day keeps them in chain order.
  let displaced = false;
  const unsynced = new Set<string>();
  const days: DaysRead = new Map();
  for (const held of heldEntries(head)) {
    const key = storageKeys.auditDay(head.userId, held.day);
    const place = await placeOf(store, key, held, days);
    // An append below changes the day: the next entry reads it again.
    if (place !== "stored") days.delete(key);
    // Found stored by a process before this one: with deferred appends it may not be on disk yet.
    if (place === "stored") unsynced.add(key);
    if (place === "absent" && head.until > Date.now()) throw new HeadBusy();
    // A foreign item in its place (the day was edited): append it after, never drop it; what follows it too.
    if (place === "absent" && !displaced) await store.appendToJsonArray(key, held.entry, held.index);
    else if (place !== "stored") {
      await store.appendToJsonArray(key, held.entry);
      displaced = true;
    }
  }
  // The next head drops what this one holds: it must be on disk first.
  if (store.syncJsonArray !== undefined) for (const key of unsynced) await store.syncJsonArray(key);
  markDurable(store, head.userId, head.seq);
  storedTips.set(store, head.userId, head.hash);
}

/** The bytes a stored day holds before its closing `\n]` (as `dayBytes` counts them); 0 when it cannot be read. */
async function storedBytes(store: BlobStore, key: string): Promise<number> {
  const bytes = await store.get(key).catch(() => null);
  return bytes === null ? 0 : Math.max(0, bytes.length - 2);
}

async function countItems(store: BlobStore, key: string): Promise<number> {
  const bytes = await store.get(key);
  return bytes === null ? 0 : parseJsonArray(bytes).items.length;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What a chained append stored. */
export interface ChainedAppend {
  /** The entry as stored, chain fields included. */
  entry: ChainedEntry;
  /** Its day file. */
  filename: string;
  /** Items in that file after the append. */
  entryCount: number;
}

/**
 * Appends the entry of `fields` (as they will be stored, `receivedAt` included) to the chain of
 * `userId` at `now` (ISO 8601, UTC), in the file of `today` or, when the head is on a later day (another process's
 * clock ahead of this one), of the head's day: a chain never goes back a day.
 */
export function appendChained(
  store: BlobStore,
  userId: string,
  today: string,
  now: string,
  fields: Record<string, unknown>,
  options: AuditChainOptions = {},
): Promise<ChainedAppend> {
  const maxDayBytes = options.maxDayBytes ?? DEFAULT_MAX_DAY_BYTES;
  return lockOf(store).run(userId, async () => {
    const headKey = storageKeys.auditHead(userId);
    // A store whose day appends are flushed later: the head holds every entry not known flushed.
    const deferring = store.syncJsonArray !== undefined;
    if (deferring) await makeRoom(store, userId);
    let previous: Uint8Array | null = null;
    let liveTexts: { entryText: string; heldTexts: readonly string[] } | undefined;
    let heldTexts: string[] = [];
    let written: AuditHead | undefined;
    let writtenBytes: Uint8Array | undefined;
    let entryText = "";
    // The head's next bytes, computed from the stored head; each step waits only when it must
    // (an entry not known stored, a day's count, a signature), as an await costs even when ready.
    const encode = (head: AuditHead): Uint8Array => {
      head.until = Date.now() + LEASE_MS;
      written = head;
      return writtenBytes = encoder.encode(headJson(head, entryText, heldTexts));
    };
    // Whether the new head is signed: a new trail's is, and one over a head signed by a key the signer trusts (this process's own heads need no check).
    const signsOver = (live: AuditHead | undefined, ownHead: boolean): boolean | Promise<boolean> => {
      const signer = options.signer;
      if (signer === undefined) return false;
      if (live === undefined) return true;
      if (live.signature === undefined) return false;
      if (ownHead || signer.holds === undefined) return true;
      return signer.holds(live.signature, headFacts(live));
    };
    const next = (live: AuditHead | undefined, day: string, index: number, signing: boolean, counted?: number): Uint8Array | Promise<Uint8Array> => {
      const entry = chainEntry(fields, (live?.seq ?? 0) + 1, live?.hash ?? GENESIS_HASH, options.hash);
      entryText = JSON.stringify(entry);
      // The day as the store holds it (`,\n` or `[\n` before each entry): past the cap, nothing is written.
      const dayBytes = (live !== undefined && live.day === day ? live.dayBytes ?? counted ?? 0 : 0) + utf8Length(entryText) + 2;
      if (dayBytes > maxDayBytes && options.reserve !== true) throw new AuditDayFull(userId, day, maxDayBytes, Date.parse(now));
      const head: AuditHead = {
        format: HEAD_FORMAT,
        userId,
        seq: entry.seq,
        hash: entry.hash,
        day,
        index,
        firstDay: live?.firstDay ?? day,
        updatedAt: now,
        entry,
        until: 0,
        dayBytes,
      };
      if (signing && live?.unsignedUntil !== undefined) head.unsignedUntil = live.unsignedUntil;
      if (deferring && live !== undefined) {
        // The live head's entries still not known flushed (texts kept when this process wrote it).
        const durableSeq = durabilityOf(store, userId).durableSeq;
        const texts = liveTexts === undefined ? undefined : [...liveTexts.heldTexts, liveTexts.entryText];
        const held: HeldEntry[] = [];
        heldTexts = [];
        heldEntries(live).forEach((candidate, i) => {
          if (candidate.entry.seq <= durableSeq) return;
          held.push(candidate);
          heldTexts.push(texts?.[i] ?? JSON.stringify(candidate.entry));
        });
        if (held.length > 0) head.held = held;
      }
      if (!signing) return encode(head);
      return options.signer!.sign(canonicalJson(headFacts(head))).then((signature) => {
        head.signature = signature;
        return encode(head);
      });
    };
    const afterTip = (live: AuditHead | undefined, signing: boolean): Uint8Array | Promise<Uint8Array> => {
      const day = live !== undefined && live.day > today ? live.day : today;
      if (live !== undefined && live.day === day && options.unlessNewest?.(live.entry) === true) throw new NewestKept(live);
      // A head written before days were counted: its day is measured once (read as bytes, never as one string).
      if (live !== undefined && live.day === day && live.dayBytes === undefined) {
        return storedBytes(store, storageKeys.auditDay(userId, day)).then((counted) => next(live, day, live.index + 1, signing, counted));
      }
      if (live !== undefined && live.day === day) return next(live, day, live.index + 1, signing);
      return countItems(store, storageKeys.auditDay(userId, day)).then((index) => next(live, day, index, signing));
    };
    const change = (current: Uint8Array | null): Uint8Array | Promise<Uint8Array> => {
      previous = current;
      const known = writtenHeadOf(store, userId, current);
      const stored: StoredHead = known === undefined ? readHead(current) : { kind: "head", head: known.head };
      liveTexts = known;
      // Starting over would hide whatever was done to the trail: appends stop until the head is restored.
      if (stored.kind === "unreadable") {
        throw ServiceError.server(`The audit head of ${userId} cannot be read; verify the trail and restore the head before appending`);
      }
      const live = stored.kind === "head" ? stored.head : undefined;
      // Another user's head copied here: going on would continue (and sign) that user's chain as this one's.
      if (live !== undefined && live.userId !== userId) {
        throw ServiceError.server(`The audit head of ${userId} is the head of another user's trail; verify the trail and restore the head before appending`);
      }
      const storing = live === undefined ? undefined : storeTip(store, live);
      const signing = signsOver(live, known !== undefined);
      if (storing === undefined && typeof signing === "boolean") return afterTip(live, signing);
      return Promise.all([storing, signing]).then(([, signs]) => afterTip(live, signs));
    };
    const started = Date.now();
    for (;;) {
      try {
        await store.update(headKey, change, IN_PLACE);
        break;
      } catch (err) {
        if (err instanceof NewestKept) {
          const kept = err.head;
          return { entry: kept.entry, filename: storageKeys.auditDay(userId, kept.day), entryCount: kept.index + 1 };
        }
        if (!(err instanceof HeadBusy)) throw err;
        if (Date.now() - started > MAX_WAIT_MS) throw ServiceError.server(`The audit trail of ${userId} stayed busy`);
        await pause(5 + Math.random() * 20);
      }
    }
    const head = written!;
    writtenHeads.set(store, userId, { bytes: writtenBytes!, head, entryText, heldTexts });
    const filename = storageKeys.auditDay(userId, head.day);
    let entryCount: number;
    // Told when the day already held more items than the head's index: whose item has that place is then asked.
    let skipped = false;
    const onSkip = () => {
      skipped = true;
    };
    useJsonText(head.entry, entryText);
    try {
      entryCount = await store.appendToJsonArray(filename, head.entry, head.index, deferring ? { deferSync: true, skipped: onSkip } : { skipped: onSkip });
    } catch (err) {
      await rollBack(store, headKey, head, previous).catch(() => undefined);
      throw err;
    } finally {
      forgetJsonText(head.entry);
    }
    if (skipped) entryCount = await keepDisplaced(store, filename, head, deferring) ?? entryCount;
    storedTips.set(store, userId, head.hash);
    // Enough entries not known durable (a flush may have resolved since the head): their days' flush starts, not awaited.
    if (deferring) {
      const durability = durabilityOf(store, userId);
      const { count } = notDurable({ head, entryText, heldTexts }, durability.durableSeq);
      if (count >= FLUSH_AT && durability.flushing === undefined) flushHeld(store, head).catch(() => undefined);
    }
    return { entry: head.entry, filename, entryCount };
  });
}

/**
 * After a day append given the head's index wrote nothing (the day held more items): when the
 * item in that place is another one (written into the day behind the service's back), the entry
 * goes after the day's items, as a tip whose place is taken does, instead of being lost; the
 * count after it, or undefined when the place holds the entry (another writer stored it).
 */
async function keepDisplaced(store: BlobStore, key: string, head: AuditHead, deferring: boolean): Promise<number | undefined> {
  const place = await placeOf(store, key, { day: head.day, index: head.index, entry: head.entry }, new Map());
  if (place === "stored") return undefined;
  return store.appendToJsonArray(key, head.entry, undefined, deferring ? DEFER_SYNC : undefined);
}

/**
 * After a failed append, puts the previous head back while no other writer may have stored the
 * entry (its lease runs), so a failed request leaves nothing behind (not in place: no slot keeps
 * the failed head); past the lease the entry stays, and the next append stores it. An entry the
 * day holds anyway (the write landed, its answer was lost), or whose place cannot be read, keeps
 * its head: put back, the head would send the next entry to that place, where the day append
 * (given the index) writes nothing, and an acknowledged entry would be lost.
 */
async function rollBack(store: BlobStore, headKey: string, head: AuditHead, previous: Uint8Array | null): Promise<void> {
  const key = storageKeys.auditDay(head.userId, head.day);
  const place = await placeOf(store, key, { day: head.day, index: head.index, entry: head.entry }, new Map()).catch(() => "unknown" as const);
  if (place === "stored") storedTips.set(store, head.userId, head.hash);
  if (place !== "absent") return;
  // A first entry had no head before it: an empty head (seq 0) says so.
  const empty = encoder.encode(JSON.stringify({ format: HEAD_FORMAT, userId: head.userId, seq: 0 }));
  await store.update(headKey, (current) => {
    const now = current === null ? undefined : parseHead(current);
    if (current === null) return empty;
    if (now?.hash !== head.hash || Date.now() > head.until - LEASE_MS / 3) return current;
    return previous ?? empty;
  });
}

/** What {@link signUnsignedHead} did. */
export type HeadSigning = "signed" | "already signed" | "changed";

class HeadChanged extends Error {}

/**
 * Signs a trail's unsigned head as it stands (`audit sign-heads`, once its trail verified), with
 * `unsignedUntil` its newest seq: from then on its appends sign their heads. `verified` is the
 * head's bytes as verified: a head that moved meanwhile is left as it is (`changed`).
 */
export function signUnsignedHead(store: BlobStore, userId: string, signer: HeadSigner, verified: Uint8Array): Promise<HeadSigning> {
  return lockOf(store).run(userId, async () => {
    let outcome: HeadSigning = "changed";
    try {
      await store.update(storageKeys.auditHead(userId), async (current) => {
        const head = current === null || !sameBytes(current, verified) ? undefined : parseHead(current);
        if (head === undefined) throw new HeadChanged();
        if (head.signature !== undefined) {
          outcome = "already signed";
          throw new HeadChanged();
        }
        head.unsignedUntil = head.seq;
        head.signature = await signer.sign(canonicalJson(headFacts(head)));
        outcome = "signed";
        return encoder.encode(headJson(head, JSON.stringify(head.entry)));
      });
    } catch (err) {
      if (!(err instanceof HeadChanged)) throw err;
    }
    return outcome;
  });
}
