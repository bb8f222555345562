/**
 * @module
 * A data key's history as it stood at one moment, while writes go on (docs/operations.md#backups).
 * Where several processes share the store, a write moves the key's head first, then makes sure
 * the log holds the head's version, then sets the value (history/key-history.ts). So the head is
 * read first, the log is cut to the head's version (whatever it holds past it was written after
 * the head was read: restored, it would take the place of the next write's version), and the
 * value must be the head's: when it is not (a write between the reads), the whole history is
 * read again. Where one process holds the store there is no head: a write appends to the log,
 * then sets the value, so the value must be the log's last version, the log unchanged around it.
 * A history of an earlier release (two arrays beside its head) is cut the same way as a log.
 */
import type { Bytes } from "../ports.ts";
import { HISTORY_PARTS, HISTORY_ROOT } from "../history/mod.ts";
import { firstItems } from "./audit-snapshot.ts";
import { bytesOf } from "../history/version-record.ts";
import { parseJsonArray } from "../storage/json-array.ts";
import { sameBytes } from "../encoding/same-bytes.ts";

const PARTS = HISTORY_PARTS;

/** The listed keys of one data key's history. */
export interface HistoryGroup {
  /** The data key itself (its value). */
  key: string;
  /** `#history/{key}/head`, `.../log` (and `.../versions`, `.../contents` of an earlier release), as listed. */
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
  // Only a listed head or log makes a snapshot; arrays without a head are copied as they are.
  const histories = [...groups.values()].filter((group) => group.parts.head !== undefined || group.parts.log !== undefined);
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

/** The objects of one history and its key's value as of one head (or one log), each as stored; `null` values are left out. */
export async function historySnapshot(group: HistoryGroup, reader: HistoryReader, attempts = 5): Promise<[string, Bytes][]> {
  const base = `${HISTORY_ROOT}/${group.key}`;
  const headKey = `${base}/head`;
  const arrayKeys = [`${base}/log`, `${base}/versions`, `${base}/contents`];
  if (group.parts.head === undefined) return await logSnapshot(group.key, `${base}/log`, reader, attempts);
  for (let attempt = 1; ; attempt++) {
    const head = await reader.get(headKey);
    if (head === null) {
      // Gone since the listing (a store one process holds drops it when it makes the history a log): the log alone.
      return group.parts.log === undefined ? await plainParts([group.key, ...arrayKeys], reader) : await logSnapshot(group.key, `${base}/log`, reader, attempts);
    }
    const named = headVersionOf(await reader.open(headKey, head));
    if (named === undefined) return [[headKey, head], ...(await plainParts([...arrayKeys, group.key], reader))];
    const arrays = await Promise.all(arrayKeys.map((key) => reader.get(key)));
    let value = await reader.get(group.key);
    const opened = value === null ? null : await reader.open(group.key, value);
    const matches = named.deleted ? value === null : opened !== null && reader.sha256(opened) === named.sha256;
    const again = await reader.get(headKey);
    const still = again !== null && sameBytes(again, head);
    if (!(matches && still) && attempt < attempts) continue;
    // Still between a head's move and its value (a key written without pause): the head's own value.
    if (!matches && !reader.sealed) value = named.deleted ? null : named.bytes;
    const out: [string, Bytes][] = [[headKey, head]];
    arrays.forEach((array, i) => {
      if (array !== null) out.push([arrayKeys[i]!, firstItems(array, named.version)]);
    });
    if (value !== null) out.push([group.key, value]);
    return out;
  }
}

/**
 * A log without a head (a store one process holds) and its key's value: the value must be the
 * log's last version, and the log the same before and after the value was read.
 */
async function logSnapshot(key: string, logKey: string, reader: HistoryReader, attempts: number): Promise<[string, Bytes][]> {
  for (let attempt = 1; ; attempt++) {
    const log = await reader.get(logKey);
    if (log === null) return await plainParts([key], reader);
    let value = await reader.get(key);
    const last = lastVersionOf(await reader.open(logKey, log));
    const opened = value === null ? null : await reader.open(key, value);
    const matches = last === undefined || (last.deleted ? value === null : opened !== null && reader.sha256(opened) === last.sha256);
    const again = await reader.get(logKey);
    const still = again !== null && sameBytes(again, log);
    if (!(matches && still) && attempt < attempts) continue;
    // Still between a version's append and its value: the version's own value.
    if (!matches && !reader.sealed && last !== undefined) value = last.deleted ? null : last.bytes;
    return value === null ? [[logKey, log]] : [[logKey, log], [key, value]];
  }
}

/** What a log's last item says of the newest version; undefined when it has none or it is not a version. */
function lastVersionOf(opened: Uint8Array): HeadVersion | undefined {
  let items: readonly unknown[];
  try {
    items = parseJsonArray(opened).items;
  } catch {
    return undefined;
  }
  const item = items.at(-1) as { record?: unknown; contents?: unknown } | undefined;
  if (item === undefined || item === null || typeof item !== "object") return undefined;
  const record = item.record as { version?: unknown; deleted?: unknown; sha256?: unknown } | null | undefined;
  if (record === null || typeof record !== "object" || typeof record.version !== "number" || typeof record.sha256 !== "string") return undefined;
  return { version: record.version, deleted: record.deleted === true, sha256: record.sha256, bytes: bytesOf(item.contents) };
}

async function plainParts(keys: readonly string[], reader: HistoryReader): Promise<[string, Bytes][]> {
  const out: [string, Bytes][] = [];
  for (const key of keys) {
    const value = await reader.get(key);
    if (value !== null) out.push([key, value]);
  }
  return out;
}
