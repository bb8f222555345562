/**
 * @module
 * A data key's history as it stood at one moment, while writes go on (docs/operations.md#backups).
 * A write moves the key's head first, then makes sure both arrays hold the head's version, then
 * sets the value (history/key-history.ts). So the head is read first, the arrays are cut to the
 * head's version (whatever they hold past it was written after the head was read: restored, it
 * would take the place of the next write's version), and the value must be the head's: when it
 * is not (a write between the reads), the whole history is read again.
 */
import type { Bytes } from "../ports.ts";
import { HISTORY_ROOT } from "../history/mod.ts";
import { firstItems } from "./audit-snapshot.ts";
import { bytesOf } from "../history/version-record.ts";

const PARTS = ["head", "versions", "contents"] as const;

/** The listed keys of one data key's history. */
export interface HistoryGroup {
  /** The data key itself (its value). */
  key: string;
  /** `#history/{key}/head`, `.../versions`, `.../contents`, as listed. */
  parts: Partial<Record<(typeof PARTS)[number], string>>;
}

/** The data store's keys: the histories (with their keys' values) and every other key, in listing order. */
export function groupHistoryKeys(keys: readonly string[]): { histories: HistoryGroup[]; others: string[] } {
  const groups = new Map<string, HistoryGroup>();
  for (const stored of keys) {
    if (!stored.startsWith(`${HISTORY_ROOT}/`)) continue;
    const slash = stored.lastIndexOf("/");
    const part = stored.slice(slash + 1);
    if (!(PARTS as readonly string[]).includes(part)) continue;
    const key = stored.slice(HISTORY_ROOT.length + 1, slash);
    let group = groups.get(key);
    if (group === undefined) groups.set(key, group = { key, parts: {} });
    group.parts[part as (typeof PARTS)[number]] = stored;
  }
  // Only a listed head makes a snapshot; arrays without one are copied as they are.
  const histories = [...groups.values()].filter((group) => group.parts.head !== undefined);
  const taken = new Set(histories.flatMap((group) => [group.key, ...Object.values(group.parts)]));
  return { histories, others: keys.filter((key) => !taken.has(key)) };
}

/** What a head says of the newest version: its number, whether it is a deletion mark, its SHA-256 and bytes. */
interface HeadVersion {
  version: number;
  deleted: boolean;
  sha256: string;
  bytes: Bytes | null;
}

/** The newest version a stored head (opened) names; undefined when it is not a history head. */
export function headVersionOf(opened: Uint8Array): HeadVersion | undefined {
  let head: unknown;
  try {
    head = JSON.parse(new TextDecoder().decode(opened));
  } catch {
    return undefined;
  }
  if (head === null || typeof head !== "object" || !("record" in head) || head.record === null || typeof head.record !== "object") return undefined;
  const record = head.record as { version?: unknown; deleted?: unknown; sha256?: unknown };
  if (typeof record.version !== "number" || !Number.isSafeInteger(record.version) || record.version < 1 || typeof record.sha256 !== "string") return undefined;
  return { version: record.version, deleted: record.deleted === true, sha256: record.sha256, bytes: "contents" in head ? bytesOf(head.contents) : null };
}

/** How a snapshot reads the store. */
export interface HistoryReader {
  /** The stored bytes of a key (sealed, when the store is). */
  get(key: string): Promise<Bytes | null>;
  /** Opens a stored object when the store is sealed; the bytes as they are otherwise. */
  open(key: string, stored: Bytes): Promise<Bytes>;
  /** Hex SHA-256. */
  sha256(bytes: Uint8Array): string;
  /** Whether the objects stay sealed in the archive (then a value is never rebuilt from its head). */
  sealed: boolean;
}

/** The objects of one history and its key's value as of one head, each as stored; `null` values are left out. */
export async function historySnapshot(group: HistoryGroup, reader: HistoryReader, attempts = 5): Promise<[string, Bytes][]> {
  const headKey = group.parts.head!;
  const versionsKey = `${HISTORY_ROOT}/${group.key}/versions`;
  const contentsKey = `${HISTORY_ROOT}/${group.key}/contents`;
  for (let attempt = 1; ; attempt++) {
    const head = await reader.get(headKey);
    if (head === null) {
      // Gone since the listing (or never whole): the parts as they are.
      return await plainParts([group.key, versionsKey, contentsKey], reader);
    }
    const named = headVersionOf(await reader.open(headKey, head));
    if (named === undefined) return [[headKey, head], ...(await plainParts([versionsKey, contentsKey, group.key], reader))];
    const versions = await reader.get(versionsKey);
    const contents = await reader.get(contentsKey);
    let value = await reader.get(group.key);
    const opened = value === null ? null : await reader.open(group.key, value);
    const matches = named.deleted ? value === null : opened !== null && reader.sha256(opened) === named.sha256;
    const again = await reader.get(headKey);
    const still = again !== null && again.length === head.length && again.every((byte, i) => byte === head[i]);
    if (!(matches && still) && attempt < attempts) continue;
    // Still between a head's move and its value (a key written without pause): the head's own value.
    if (!matches && !reader.sealed) value = named.deleted ? null : named.bytes;
    const out: [string, Bytes][] = [[headKey, head]];
    if (versions !== null) out.push([versionsKey, firstItems(versions, named.version)]);
    if (contents !== null) out.push([contentsKey, firstItems(contents, named.version)]);
    if (value !== null) out.push([group.key, value]);
    return out;
  }
}

async function plainParts(keys: readonly string[], reader: HistoryReader): Promise<[string, Bytes][]> {
  const out: [string, Bytes][] = [];
  for (const key of keys) {
    const value = await reader.get(key);
    if (value !== null) out.push([key, value]);
  }
  return out;
}
