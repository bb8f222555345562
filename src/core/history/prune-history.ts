/**
 * @module
 * Retention of data-key histories (docs/operations.md#history-retention): the bytes of versions
 * written before a cut-off are removed, each item's contents in the log replaced by a mark
 * `{v, pruned: true}`. The records stay, so every version keeps its number, `sha256`,
 * `writtenAt`, `writtenBy` and `previous`, and the chain still verifies: what was removed is a
 * prefix recorded as such. A key's newest version is never pruned, nor the versions after the
 * first one written at or after the cut-off (so the pruned versions are always a prefix).
 */
import type { BlobStore, Clock } from "../ports.ts";
import { encodeJsonArray, parseJsonArray } from "../storage/json-array.ts";
import { historyDataKey, historyKeys, HISTORY_ROOT } from "./history-keys.ts";
import { createKeyHistories } from "./key-history.ts";

/** The mark that replaces a pruned version's contents in the log. */
export interface PrunedContents {
  /** The version. */
  v: number;
  /** Always true. */
  pruned: true;
}

/** Whether a contents item is a pruned version's mark. */
export function isPrunedContents(item: unknown): item is PrunedContents {
  return item !== null && typeof item === "object" && (item as { pruned?: unknown }).pruned === true;
}

/** What a prune did to one key. */
export interface KeyPruned {
  /** The data key. */
  key: string;
  /** The versions whose bytes were removed now. */
  versions: number[];
}

/** Options of {@link pruneHistories}. */
export interface PruneOptions {
  /** The server's clock: the cut-off is `now - retentionDays`. */
  clock: Clock;
  /** Versions written more than this many days ago are pruned. */
  retentionDays: number;
  /** Whether a key must be kept whole (a case on legal hold); such a key is not touched. */
  isHeld: (key: string) => Promise<boolean>;
  /** Called once per key pruned, after its bytes are gone (the owner's audit entry), with the cut-off. */
  onPruned?: (pruned: KeyPruned, cutoff: string) => Promise<void>;
}

/** What a prune did. */
export interface PruneSummary {
  /** ISO time before which versions were pruned. */
  cutoff: string;
  /** Histories examined. */
  histories: number;
  /** Keys whose versions were pruned now, with the versions. */
  pruned: KeyPruned[];
  /** Keys left whole because their case is on legal hold (whatever their age). */
  held: string[];
}

/** Thrown inside an update that has nothing to change. */
const NOTHING = new Error("nothing to prune");

/** The data keys that have a history in `data` (a head or a log), sorted. */
async function historyDataKeys(data: BlobStore): Promise<string[]> {
  const keys = new Set<string>();
  for (const stored of await data.list(`${HISTORY_ROOT}/`)) {
    if (!stored.endsWith("/head") && !stored.endsWith("/log")) continue;
    const key = historyDataKey(stored);
    if (key !== undefined) keys.add(key);
  }
  return [...keys].sort();
}

/** A log item whose bytes are pruned; the item as it is when they cannot be (a deletion mark, pruned already, out of place). */
function prunedItem(item: unknown, version: number, deleted: ReadonlySet<number>): unknown {
  const contents = (item as { contents?: unknown } | null)?.contents;
  const pruned = prunedContents(contents, version, deleted);
  return pruned === undefined ? item : { ...(item as object), contents: pruned };
}

/** The mark that replaces a version's contents; undefined when they stay. */
function prunedContents(item: unknown, version: number, deleted: ReadonlySet<number>): PrunedContents | undefined {
  // A deletion mark holds no bytes; an item out of place is left for verify to name.
  if (deleted.has(version) || isPrunedContents(item) || item === null || typeof item !== "object" || (item as { v?: unknown }).v !== version) return undefined;
  return { v: version, pruned: true };
}

/** Prunes every history of `data` as {@link PruneOptions} says; a key under legal hold is left whole. */
export async function pruneHistories(data: BlobStore, options: PruneOptions): Promise<PruneSummary> {
  const cutoffMs = options.clock.now().getTime() - options.retentionDays * 86_400_000;
  const cutoff = new Date(cutoffMs).toISOString();
  const histories = createKeyHistories(data, { clock: options.clock });
  const summary: PruneSummary = { cutoff, histories: 0, pruned: [], held: [] };
  for (const key of await historyDataKeys(data)) {
    summary.histories++;
    if (await options.isHeld(key)) {
      summary.held.push(key);
      continue;
    }
    const listed = await histories.list(key);
    if (listed === null || listed.versions.length < 2) continue;
    // The prefix written before the cut-off, never the newest version.
    let through = 0;
    for (const record of listed.versions.slice(0, -1)) {
      const at = Date.parse(record.writtenAt);
      if (!(at < cutoffMs)) break;
      through = record.version;
    }
    if (through === 0) continue;
    const deleted = new Set(listed.versions.filter((record) => record.deleted).map((record) => record.version));
    let versions: number[] = [];
    const keys = historyKeys(key);
    // The log; a history of an earlier release not written since keeps its contents array.
    const inLog = await data.has(keys.log);
    await data.update(inLog ? keys.log : keys.contents, (stored) => {
      versions = [];
      if (stored === null) throw NOTHING;
      const items = parseJsonArray(stored).items.slice();
      for (let index = 0; index < Math.min(through, items.length); index++) {
        const version = index + 1;
        const item = inLog ? prunedItem(items[index], version, deleted) : prunedContents(items[index], version, deleted);
        if (item === undefined || item === items[index]) continue;
        items[index] = item;
        versions.push(version);
      }
      if (versions.length === 0) throw NOTHING;
      return encodeJsonArray(items);
    }).catch((err: unknown) => {
      if (err !== NOTHING) throw err;
      versions = [];
    });
    if (versions.length === 0) continue;
    const pruned = { key, versions };
    summary.pruned.push(pruned);
    await options.onPruned?.(pruned, cutoff);
  }
  return summary;
}
