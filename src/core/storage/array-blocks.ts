/**
 * @module
 * Append-only JSON arrays (audit days) kept as blocks on a compare-and-swap object store (S3,
 * R2), so an append moves one bounded block, not the day (docs/storage.md#audit-days). The key
 * itself holds block 0; a later block lives at `{key}#{first}`, where `first` is the index of its
 * first item in the whole array. Every block is a complete JSON array; the value is the blocks'
 * items in the order of `first`. An append writes the last block back with the item under the
 * version it was read with (or that this process's last write of it answered, without reading it
 * again); once the block holds `items` items, it goes to a new block created only if absent.
 * So every write is one compare-and-swap of one object, and a block that has a successor never
 * changes again: nothing is lost under concurrency. `#` never occurs in a key (storage/keys.ts),
 * so no other key is taken for a block.
 */
import type { BlobStore, Bytes } from "../ports.ts";
import { KeyedMutex } from "./keyed-mutex.ts";
import { encodeJsonArray, parseJsonArray, startsArray } from "./json-array.ts";
import type { Versioned, VersionedBackend } from "./versioned-store.ts";
import { CONFLICT, retryOnConflict } from "./conflict-retry.ts";
import { sameBytes } from "../encoding/same-bytes.ts";
import { joinStream } from "./byte-stream.ts";

/** Options of {@link createArrayBlockStore}. */
export interface ArrayBlockOptions {
  /** Items a block holds before appends go on in the next one (default 128). */
  items?: number;
  /** Conditional-write attempts before giving up (default 50). */
  maxAttempts?: number;
  /**
   * Write a key's last block again without reading it back, under the version its previous
   * write answered (default true): one request per append. Only where the backend honours
   * conditional writes; elsewhere a block another process wrote since would be overwritten.
   */
  rememberWrites?: boolean;
}

/** Separates a key from the index of a later block's first item. */
export const BLOCK_SEPARATOR = "#";
/** The key of the block whose first item is item `first` of the array at `key`. */
export const blockKey = (key: string, first: number): string => (first === 0 ? key : `${key}${BLOCK_SEPARATOR}${first}`);

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const OPEN = "[\n";
const CLOSE = "\n]";
// Tails this process knows, per key: enough for every day being written at once.
const MAX_TAILS = 10_000;
// Last blocks kept with their items (at most 128 items each): the days being written at once.
const MAX_BLOCKS = 256;
// Blocks read at once when a value is assembled.
const PARALLEL_READS = 16;

/** Reads `keys` with at most {@link PARALLEL_READS} requests in flight, in order. */
async function readAll(backend: VersionedBackend, keys: string[]): Promise<(Versioned | null)[]> {
  const out: (Versioned | null)[] = new Array(keys.length).fill(null);
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const at = next++;
      out[at] = await backend.get(keys[at]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, keys.length) }, worker));
  return out;
}

/** One array of the blocks' items, in order; blocks in the canonical form are joined as text. */
export function joinBlocks(blocks: readonly (Uint8Array | null)[]): Bytes {
  const parts: string[] = [];
  for (const bytes of blocks) {
    if (bytes === null) continue;
    let text = decoder.decode(bytes);
    if (!(text.startsWith(OPEN) && text.endsWith(CLOSE) && text.length > OPEN.length + CLOSE.length)) {
      const items = parseJsonArray(text).items;
      if (items.length === 0) continue;
      text = decoder.decode(encodeJsonArray(items));
    }
    parts.push(text.slice(OPEN.length, -CLOSE.length));
  }
  return encoder.encode(parts.length === 0 ? "[]" : `${OPEN}${parts.join(",\n")}${CLOSE}`) as Bytes;
}

/**
 * A `BlobStore` whose JSON arrays are kept in blocks of at most `items` appended items (see the
 * module). A value that is not an array (an audit head) is one object, read and swapped as the
 * plain versioned store does, with no request more.
 */
export function createArrayBlockStore(backend: VersionedBackend, options: ArrayBlockOptions = {}): BlobStore {
  const perBlock = options.items ?? 128;
  const maxAttempts = options.maxAttempts ?? 50;
  const rememberWrites = options.rememberWrites ?? true;
  const mutex = new KeyedMutex();
  // The first index of each key's last block, as this process last saw it.
  const tails = new Map<string, number>();
  // The last block this process wrote of each key, as written: at most MAX_BLOCKS of them.
  const lastBlocks = new Map<string, { first: number; version: string; items: unknown[] }>();
  const rememberTail = (key: string, first: number) => {
    tails.delete(key);
    tails.set(key, first);
    if (tails.size > MAX_TAILS) tails.delete(tails.keys().next().value ?? key);
  };

  const forget = (key: string) => {
    tails.delete(key);
    lastBlocks.delete(key);
  };

  /** The first indexes of the key's later blocks, ascending (one list request). */
  async function laterBlocks(key: string): Promise<number[]> {
    const prefix = `${key}${BLOCK_SEPARATOR}`;
    const firsts: number[] = [];
    for (const found of await backend.list(prefix)) {
      if (!found.startsWith(prefix)) continue;
      const first = found.slice(prefix.length);
      if (/^[1-9]\d*$/.test(first)) firsts.push(Number(first));
    }
    return firsts.sort((a, b) => a - b);
  }

  /**
   * Every block of the value: listed first, then read, so that each listed block but the last
   * was full (and so final) before it was read, and the value read is one the array really held.
   */
  async function readBlocks(key: string, firsts: number[]): Promise<{ first: number; stored: Versioned | null }[]> {
    const all = [0, ...firsts];
    const stored = await readAll(backend, all.map((first) => blockKey(key, first)));
    return all.map((first, i) => ({ first, stored: stored[i] ?? null }));
  }

  async function get(key: string): Promise<Bytes | null> {
    const head = await backend.get(key);
    if (head !== null && !startsArray(head.bytes)) return head.bytes;
    const firsts = await laterBlocks(key);
    if (firsts.length === 0) return head?.bytes ?? null;
    // Block 0 is read again after the listing: the first read may predate its last items.
    return joinBlocks((await readBlocks(key, firsts)).map((block) => block.stored?.bytes ?? null));
  }

  /** Removes the key's later blocks, the last first, so that a removal cut short leaves a whole beginning of the array. */
  async function removeLater(key: string, firsts: number[]): Promise<boolean> {
    for (const first of [...firsts].reverse()) await backend.delete(blockKey(key, first));
    return firsts.length > 0;
  }

  /** Where the key's last block starts: the last listed block (one list request). */
  async function locateTail(key: string): Promise<number> {
    const firsts = await laterBlocks(key);
    return firsts[firsts.length - 1] ?? 0;
  }

  /** Item `index` from the one block that holds it: the last this process knows, else the one the listing names. */
  async function itemAt(key: string, index: number): Promise<unknown> {
    const known = tails.get(key);
    let firsts: number[] | undefined;
    let first = known;
    if (first === undefined || index < first) {
      firsts = await laterBlocks(key);
      first = firsts.filter((start) => start <= index).pop() ?? 0;
    }
    const items = async (start: number) => {
      const stored = await backend.get(blockKey(key, start));
      return stored === null ? [] : parseJsonArray(stored.bytes).items;
    };
    const held = await items(first);
    if (index - first < held.length) return held[index - first];
    // Past the block: a later one may hold it (blocks other processes added).
    firsts ??= await laterBlocks(key);
    const later = firsts.filter((start) => start > first && start <= index).pop();
    return later === undefined ? undefined : (await items(later))[index - later];
  }

  /** A conditional write answering the new version (see `putIfVersion`), null on conflict. */
  const write = async (key: string, value: Uint8Array, expected: string | null): Promise<string | null> =>
    backend.putIfVersion ? backend.putIfVersion(key, value, expected) : ((await backend.putIf(key, value, expected)) ? "" : null);

  /** Keeps the last block this process wrote of a key (its items and version), when the backend named the version. */
  const rememberBlock = (key: string, first: number, version: string, items: unknown[]) => {
    rememberTail(key, first);
    lastBlocks.delete(key);
    if (version === "" || !rememberWrites) return;
    lastBlocks.set(key, { first, version, items });
    if (lastBlocks.size > MAX_BLOCKS) lastBlocks.delete(lastBlocks.keys().next().value ?? key);
  };

  /** One try of an append: the count after it, or null when another write won the block. */
  async function tryAppend(key: string, item: unknown, atIndex: number | undefined, skipped?: () => void): Promise<number | null> {
    let first = tails.get(key) ?? await locateTail(key);
    // The block this process wrote last: written again without reading it, under the version
    // its write answered; if another writer changed it since, that write fails and it is read.
    let known = lastBlocks.get(key);
    lastBlocks.delete(key);
    for (;;) {
      let items: unknown[];
      let version: string | null;
      const cached = known !== undefined && known.first === first;
      if (cached) {
        ({ items, version } = known!);
        known = undefined;
      } else {
        const current = await backend.get(blockKey(key, first));
        if (current === null && first > 0) {
          // The block is gone (the value was replaced or removed): find the tail again.
          tails.delete(key);
          const located = await locateTail(key);
          if (located === first) return null;
          first = located;
          continue;
        }
        items = current === null ? [] : parseJsonArray(current.bytes).items;
        version = current?.version ?? null;
      }
      const count = first + items.length;
      // Blocks only grow through this store: a count over the index, as stored, means the item
      // is. A remembered count is read again first: a block restored or edited behind this
      // process may be shorter, and the item would be acknowledged and never written.
      if (atIndex !== undefined && count > atIndex) {
        if (cached) continue;
        rememberTail(key, first);
        skipped?.();
        return count;
      }
      if (items.length < perBlock) {
        const next = [...items, item];
        const written = await write(blockKey(key, first), encodeJsonArray(next), version);
        if (written === null) {
          if (cached) continue; // what this process remembered was stale: read the block
          return null;
        }
        rememberBlock(key, first, written, next);
        return count + 1;
      }
      // Full: the next block starts at this count, created only if absent; if another writer
      // created it meanwhile, it is read in turn (no conflict to wait for).
      const written = await write(blockKey(key, count), encodeJsonArray([item]), null);
      if (written !== null) {
        rememberBlock(key, count, written, [item]);
        return count + 1;
      }
      first = count;
    }
  }

  /**
   * Writes `next` over the blocks read: the items go back into the same blocks, as many per
   * block as each held, each block written only when it changed and under the version read,
   * the last block first. False when a block changed meanwhile. Throws, writing nothing, when
   * `next` is not an array of as many items: blocks are named by their first item's index, so
   * an update may change items (re-wrap, encrypt) but never their number.
   */
  async function writeBlocks(blocks: { first: number; stored: Versioned | null; count: number }[], key: string, next: Uint8Array): Promise<boolean> {
    const count = blocks.reduce((sum, block) => sum + block.count, 0);
    const items = startsArray(next) ? parseJsonArray(next).items : null;
    if (items === null || items.length !== count) {
      throw new Error(`${key} is kept in blocks: an update must keep its ${count} items (it gave ${items === null ? "no array" : items.length})`);
    }
    const contents: Uint8Array[] = [];
    let at = 0;
    for (const block of blocks) {
      contents.push(encodeJsonArray(items.slice(at, at + block.count)));
      at += block.count;
    }
    for (let i = blocks.length - 1; i >= 0; i--) {
      const { first, stored } = blocks[i]!;
      // Unchanged, or nothing to put where no block was.
      if (stored === null ? parseJsonArray(contents[i]!).items.length === 0 : sameBytes(stored.bytes, contents[i]!)) continue;
      if (!(await backend.putIf(blockKey(key, first), contents[i]!, stored?.version ?? null))) return false;
    }
    return true;
  }

  const update = (key: string, change: (current: Bytes | null) => Uint8Array | Promise<Uint8Array>): Promise<Uint8Array> =>
    retryOnConflict(key, maxAttempts, async () => {
      const head = await backend.get(key);
      const firsts = head !== null && startsArray(head.bytes) ? await laterBlocks(key) : [];
      if (firsts.length === 0) {
        // One object (a head, or a day in one block): one compare-and-swap.
        const next = await change(head?.bytes ?? null);
        return (await backend.putIf(key, next, head?.version ?? null)) ? next : CONFLICT;
      }
      const blocks = (await readBlocks(key, firsts)).map((block) => ({
        ...block,
        count: block.stored === null ? 0 : parseJsonArray(block.stored.bytes).items.length,
      }));
      const next = await change(joinBlocks(blocks.map((block) => block.stored?.bytes ?? null)));
      return (await writeBlocks(blocks, key, next)) ? next : CONFLICT;
    });

  return {
    get,
    // The new value is written before the later blocks go, so a put cut short loses nothing.
    put: (key, value) =>
      mutex.run(key, async () => {
        const firsts = await laterBlocks(key);
        await backend.put(key, value);
        forget(key);
        await removeLater(key, firsts);
      }),
    putStream: (key, size, body) =>
      mutex.run(key, async () => {
        const firsts = await laterBlocks(key);
        await (backend.putStream ? backend.putStream(key, size, body) : backend.put(key, await joinStream(body, size)));
        forget(key);
        await removeLater(key, firsts);
      }),
    delete: (key) =>
      mutex.run(key, async () => {
        forget(key);
        const later = await removeLater(key, await laterBlocks(key));
        return (await backend.delete(key)) || later;
      }),
    has: async (key) => (await backend.has(key)) || (await laterBlocks(key)).length > 0,
    // A later block names its array's key; an array whose block 0 is gone is listed by its later blocks.
    list: async (prefix) => {
      const keys = new Set<string>();
      for (const key of await backend.list(prefix)) {
        const base = key.split(BLOCK_SEPARATOR)[0]!;
        if (base.startsWith(prefix)) keys.add(base);
      }
      return [...keys].sort();
    },
    update: (key, change) =>
      mutex.run(key, () => {
        lastBlocks.delete(key);
        return update(key, change);
      }),
    jsonArrayItem: itemAt,
    appendToJsonArray: (key, item, atIndex, appendOptions) =>
      mutex.run(key, () => retryOnConflict(key, maxAttempts, async () => (await tryAppend(key, item, atIndex, appendOptions?.skipped)) ?? CONFLICT)),
  };
}
