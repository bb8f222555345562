/**
 * @module
 * One user's audit trail as it stood at one moment, while appends go on: the head is read
 * first, then the days; an append writes its head before its day and waits for the entry the
 * head names to be in its day before the next, so every day holds at least what that head
 * covers, and whatever a day holds past the head's entry (or a day after the head's) was
 * appended after the head was read and is left out. The trail so cut verifies as the stored
 * one did at that moment, entries held in the head included.
 */
import type { Bytes } from "../ports.ts";
import { readHead } from "../audit/chain.ts";
import { encodeJsonArray, jsonArrayLines, parseJsonArray } from "../storage/json-array.ts";

const HEAD_KEY = /^audit-heads\/([^/]+)\.json$/;
const DAY_KEY = /^audit-trails\/([^/]+)-(\d{4}-\d{2}-\d{2})\.json$/;
const LEGACY_DAY_KEY = /^audit-trails\/([^/]+)\/(\d{4}-\d{2}-\d{2})\.json$/;

/** The user an audit key belongs to (a head or a day of theirs), or undefined for any other key. */
export function auditUserOf(key: string): string | undefined {
  return (HEAD_KEY.exec(key) ?? DAY_KEY.exec(key) ?? LEGACY_DAY_KEY.exec(key))?.[1];
}

/** One user's audit keys, as listed. */
export interface UserAuditKeys {
  /** The head's key, when one was listed. */
  head?: string;
  /** Day files: the day, whether it is the legacy key, and the key. */
  days: { day: string; legacy: boolean; key: string }[];
}

/** The audit store's keys grouped by user (sorted), and the keys that belong to no trail. */
export function groupAuditKeys(keys: readonly string[]): { users: Map<string, UserAuditKeys>; others: string[] } {
  const users = new Map<string, UserAuditKeys>();
  const others: string[] = [];
  const of = (user: string) => {
    let found = users.get(user);
    if (found === undefined) users.set(user, found = { days: [] });
    return found;
  };
  for (const key of keys) {
    const head = HEAD_KEY.exec(key);
    const day = DAY_KEY.exec(key);
    const legacy = LEGACY_DAY_KEY.exec(key);
    if (head) of(head[1]!).head = key;
    else if (day) of(day[1]!).days.push({ day: day[2]!, legacy: false, key });
    else if (legacy) of(legacy[1]!).days.push({ day: legacy[2]!, legacy: true, key });
    else others.push(key);
  }
  return { users: new Map([...users].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), others: others.sort() };
}

/** Where a head (opened, when the store is sealed) says the trail ends: its day and the entry's position there. */
export interface TrailEnd {
  day: string;
  index: number;
}

/** The end a stored head names; undefined when there is no readable head (nothing is cut then). */
export function trailEndOf(openedHead: Uint8Array | null): TrailEnd | undefined {
  const stored = readHead(openedHead);
  return stored.kind === "head" ? { day: stored.head.day, index: stored.head.index } : undefined;
}

const encoder = new TextEncoder();

/** The first `count` items of a stored JSON array in its own form; the bytes as they are when they hold no more. */
export function firstItems(bytes: Bytes, count: number): Bytes {
  const lines = jsonArrayLines(bytes);
  if (lines !== undefined) {
    if (lines.length <= count) return bytes;
    if (count === 0) return encoder.encode("[]");
    // The one-item-per-line form, cut after the item: `[\n` items joined by `,\n`, then `\n]`.
    const end = lines[count - 1]!.byteOffset - bytes.byteOffset + lines[count - 1]!.length;
    const out = new Uint8Array(end + 2);
    out.set(bytes.subarray(0, end));
    out.set([0x0a, 0x5d], end);
    return out;
  }
  // Another form, or a day read while an append wrote over its closing `\n]`: its complete items, re-encoded.
  const { items, recovered } = parseJsonArray(bytes);
  if (items.length <= count && !recovered) return bytes;
  return encodeJsonArray(items.slice(0, count)) as Bytes;
}

/**
 * The day file as it belongs to the trail at `end`: as stored before the head's day, cut after
 * the head's entry on its day, and null (left out) after it. Legacy days are never appended to.
 */
export function dayAtEnd(day: { day: string; legacy: boolean }, bytes: Bytes, end: TrailEnd | undefined): Bytes | null {
  if (end === undefined || day.legacy || day.day < end.day) return bytes;
  if (day.day > end.day) return null;
  return firstItems(bytes, end.index + 1);
}
