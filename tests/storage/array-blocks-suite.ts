/**
 * Audit days in blocks on a compare-and-swap object store (S3, R2), every backend the same cases:
 * an append's cost does not grow with the day (counted: the requests and bytes between the store
 * and the backend), the blocks are plain JSON arrays under `{key}#{first index}`, days written in
 * one object go on in blocks, and tampering inside a later block is detected and named.
 */
import { describe, expect, it } from "vitest";
import type { VersionedBackend } from "../../src/core/storage/versioned-store.ts";
import { createArrayBlockStore } from "../../src/core/storage/array-blocks.ts";
import { appendAuditEntry, readAuditTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { encryptedBlobStore, Keyring, rotateKeys } from "../../src/core/encryption/mod.ts";
import { APPENDS, clock, DAY, entry, entryBytes, KEY, median } from "../helpers/append-cost.ts";
import { containsBytes, dataKey } from "../helpers/encryption.ts";
import { createSomeArraysInBlocksStore } from "../../src/core/storage/some-arrays-in-blocks.ts";
import { createKeyHistories } from "../../src/core/history/mod.ts";
import { isHistoryArrayKey } from "../../src/core/history/history-keys.ts";

/** Requests made to a backend and the bytes they carried (values written and read, keys listed). */
export interface Traffic {
  requests: number;
  bytes: number;
}

/** The requests and bytes of `traffic` that each of `count` calls of `call` (given 0, 1, ...) made. */
async function perCall(traffic: Traffic, count: number, call: (n: number) => Promise<void>): Promise<{ requests: number[]; bytes: number[] }> {
  const requests: number[] = [];
  const bytes: number[] = [];
  for (let n = 0; n < count; n++) {
    const [r, b] = [traffic.requests, traffic.bytes];
    await call(n);
    requests.push(traffic.requests - r);
    bytes.push(traffic.bytes - b);
  }
  return { requests, bytes };
}

/** `backend` with every call and byte it moves counted in `traffic`. */
export function countingBackend(backend: VersionedBackend, traffic: Traffic): VersionedBackend {
  const keyBytes = (keys: string[]) => keys.reduce((sum, key) => sum + key.length, 0);
  return {
    get: async (key) => {
      traffic.requests++;
      const stored = await backend.get(key);
      traffic.bytes += stored?.bytes.length ?? 0;
      return stored;
    },
    put: (key, value) => {
      traffic.requests++;
      traffic.bytes += value.length;
      return backend.put(key, value);
    },
    putIf: (key, value, expected) => {
      traffic.requests++;
      traffic.bytes += value.length;
      return backend.putIf(key, value, expected);
    },
    ...(backend.putIfVersion === undefined ? {} : {
      putIfVersion: (key: string, value: Uint8Array, expected: string | null) => {
        traffic.requests++;
        traffic.bytes += value.length;
        return backend.putIfVersion!(key, value, expected);
      },
    }),
    delete: (key) => {
      traffic.requests++;
      return backend.delete(key);
    },
    has: (key) => {
      traffic.requests++;
      return backend.has(key);
    },
    list: async (prefix) => {
      traffic.requests++;
      const keys = await backend.list(prefix);
      traffic.bytes += keyBytes(keys);
      return keys;
    },
  };
}

/** A fresh, empty bucket (or prefix): its backend, and raw access to its objects. */
export interface BlockBackend {
  backend: VersionedBackend;
  /** The object's bytes as stored (null when absent). */
  read(key: string): Promise<Uint8Array | null>;
  write(key: string, bytes: Uint8Array): Promise<void>;
  remove(key: string): Promise<void>;
  /** Every object key under a prefix. */
  keys(prefix: string): Promise<string[]>;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const itemsOf = (bytes: Uint8Array | null) => JSON.parse(decoder.decode(bytes!)) as Record<string, unknown>[];
const arrayText = (items: string[]) => encoder.encode(items.length === 0 ? "[]" : `[\n${items.join(",\n")}\n]`);
/** The stored block's item lines, as stored. */
const lines = (bytes: Uint8Array | null) => decoder.decode(bytes!).split("\n").slice(1, -1).map((line) => line.replace(/,$/, ""));

/** Runs the array-block cases against `make()` (a fresh, empty backend per call). */
export function arrayBlockSuite(
  name: string,
  make: () => Promise<BlockBackend> | BlockBackend,
  options: {
    /** Appends of the cost cases (default 1,500): at least three blocks of 128. */
    appends?: number;
    /** False when the backend ignores conditional writes (s3rver): two stores over it are not lossless. */
    conditionalWrites?: boolean;
    /** Writes of the record-history cost case (default 64): eight blocks' worth. */
    historyWrites?: number;
  } = {},
): void {
  const appends = options.appends ?? APPENDS;
  describe(`audit days in blocks on ${name}`, () => {
    it(`[${name}] ${appends} plain appends to one day: 1 request each, one block's bytes at most, the last 128 cost what the first 128 did`, async () => {
      const { backend } = await make();
      const traffic: Traffic = { requests: 0, bytes: 0 };
      const store = createArrayBlockStore(countingBackend(backend, traffic));
      const { requests, bytes } = await perCall(traffic, appends, async (n) => {
        expect(await store.appendToJsonArray(KEY, { ...entry(n), receivedAt: clock.now().toISOString() })).toBe(n + 1);
      });
      // The first append looks for the day's blocks (a list) and reads the last; then one
      // conditional write each: the store keeps the block it wrote and the version it got.
      expect(requests[0]).toBe(3);
      expect(new Set(requests.slice(1))).toEqual(new Set([1]));
      // A block holds 128 items: an append writes at most one, with the new item.
      expect(Math.max(...bytes.slice(1))).toBeLessThan(129 * (entryBytes + 2) + 16);
      // Over a whole block, the day's end costs what its beginning did (a rewrite of the day
      // would cost ~appends/2 entries each way at the end, ~10 times more at 1,500).
      expect(median(bytes.slice(-128))).toBeLessThanOrEqual(1.1 * median(bytes.slice(0, 128)));
      expect(median(bytes.slice(-128))).toBeGreaterThanOrEqual(0.9 * median(bytes.slice(0, 128)));
      const items = itemsOf(await store.get(KEY)) as { details: { n: number } }[];
      expect(items.map((item) => item.details.n)).toEqual(Array.from({ length: appends }, (_, n) => n));
    }, 300_000);

    it(`[${name}] ${appends} chained appends: the same requests each, bounded bytes, and the trail verifies`, async () => {
      const { backend } = await make();
      const traffic: Traffic = { requests: 0, bytes: 0 };
      const store = createArrayBlockStore(countingBackend(backend, traffic));
      const { requests, bytes } = await perCall(traffic, appends, async (n) => {
        await appendAuditEntry(store, clock, "u1", entry(n));
      });
      // The head's read and write, the last block's write.
      expect(new Set(requests.slice(1))).toEqual(new Set([3]));
      expect(median(bytes.slice(-128))).toBeLessThanOrEqual(1.1 * median(bytes.slice(0, 128)));
      const result = await verifyAuditTrail(await readAuditTrail(store, "u1", [DAY]));
      expect(result.valid, JSON.stringify(result.firstBad)).toBe(true);
      expect(result.entries).toBe(appends);
    }, 300_000);

    if (options.conditionalWrites ?? true) it(`[${name}] chained appends by two processes' stores in turn: each finds the other's last entry in one block, so the bytes stay bounded`, async () => {
      const { backend } = await make();
      const traffic: Traffic = { requests: 0, bytes: 0 };
      const stores = [0, 1].map(() => createArrayBlockStore(countingBackend(backend, traffic), { items: 32 }));
      const bytes: number[] = [];
      const turns = 320;
      for (let n = 0; n < turns; n++) {
        const b = traffic.bytes;
        await appendAuditEntry(stores[n % 2]!, clock, "u1", entry(n));
        bytes.push(traffic.bytes - b);
      }
      // Reading the whole day to check the other's entry would cost ~turns/2 entries at the end.
      expect(median(bytes.slice(-32))).toBeLessThanOrEqual(1.1 * median(bytes.slice(32, 64)));
      expect(Math.max(...bytes.slice(1))).toBeLessThan(5 * 33 * (entryBytes + 200));
      const result = await verifyAuditTrail(await readAuditTrail(stores[0]!, "u1", [DAY]));
      expect(result.valid, JSON.stringify(result.firstBad)).toBe(true);
      expect(result.entries).toBe(turns);
    }, 300_000);

    it(`[${name}] record history in blocks: each write of one key costs the same requests, and its bytes do not grow with the versions; the history verifies`, async () => {
      const raw = await make();
      const traffic: Traffic = { requests: 0, bytes: 0 };
      const rememberWrites = options.conditionalWrites ?? true;
      const writes = options.historyWrites ?? 64;
      const block = writes / 8;
      const store = createSomeArraysInBlocksStore(countingBackend(raw.backend, traffic), isHistoryArrayKey, { items: block, rememberWrites });
      const histories = createKeyHistories(store, { clock });
      const key = "u1/C-1/data.json";
      const document = (n: number) => encoder.encode(JSON.stringify({ caseNumber: "C-1", notes: "x".repeat(400), n }));
      const { requests, bytes } = await perCall(traffic, writes, async (n) => {
        await histories.write(key, document(n), "u1");
      });
      // Rewriting the log would cost ~writes versions each way at the end, several times a block's share.
      expect(median(bytes.slice(-block))).toBeLessThanOrEqual(1.1 * median(bytes.slice(block, 2 * block)));
      // The same requests each (a new block is one more write, at most, when one fills).
      expect(Math.max(...requests.slice(2))).toBeLessThanOrEqual(Math.min(...requests.slice(2)) + 2);
      // The log is eight blocks in the bucket; the document and its head one object each.
      expect(await raw.keys(`#history/${key}/log`)).toHaveLength(8);
      expect(await store.list("#history/")).toEqual([`#history/${key}/head`, `#history/${key}/log`]);
      expect(await store.list("u1/")).toEqual([key]);
      const listed = (await histories.list(key))!;
      expect(listed.versions.map((version) => version.version)).toEqual(Array.from({ length: writes }, (_, n) => n + 1));
      expect(decoder.decode((await histories.read(key, 20))!)).toBe(decoder.decode(document(19)));
      expect(await histories.verify(key)).toEqual({ valid: true });
    }, 300_000);

    it(`[${name}] blocks are plain JSON arrays at {key}#{first index}; the day reads, lists and deletes as one; a fresh store goes on where the day ends`, async () => {
      const raw = await make();
      // Without conditional writes, a store must read what another one may have written.
      const rememberWrites = options.conditionalWrites ?? true;
      const store = createArrayBlockStore(raw.backend, { items: 4, rememberWrites });
      for (let n = 0; n < 10; n++) await store.appendToJsonArray(KEY, { n });
      expect(await raw.keys("audit-trails/")).toEqual([KEY, `${KEY}#4`, `${KEY}#8`]);
      expect(itemsOf(await raw.read(KEY))).toEqual([0, 1, 2, 3].map((n) => ({ n })));
      expect(itemsOf(await raw.read(`${KEY}#4`))).toEqual([4, 5, 6, 7].map((n) => ({ n })));
      expect(itemsOf(await raw.read(`${KEY}#8`))).toEqual([8, 9].map((n) => ({ n })));
      expect(itemsOf(await store.get(KEY))).toEqual(Array.from({ length: 10 }, (_, n) => ({ n })));
      expect(await store.list("audit-trails/")).toEqual([KEY]);
      // One item is read from the one block holding it.
      expect(await store.jsonArrayItem!(KEY, 5)).toEqual({ n: 5 });
      expect(await store.jsonArrayItem!(KEY, 10)).toBeUndefined();
      // Another process's store finds the last block, and with atIndex stores an item once.
      const other = createArrayBlockStore(raw.backend, { items: 4, rememberWrites });
      expect(await other.appendToJsonArray(KEY, { n: 10 }, 10)).toBe(11);
      expect(await store.appendToJsonArray(KEY, { n: 10 }, 10)).toBe(11);
      expect(await store.appendToJsonArray(KEY, { n: 11 })).toBe(12);
      expect(await other.appendToJsonArray(KEY, { n: 12 })).toBe(13);
      expect(await raw.keys("audit-trails/")).toEqual([KEY, `${KEY}#12`, `${KEY}#4`, `${KEY}#8`]);
      expect(itemsOf(await other.get(KEY))).toEqual(Array.from({ length: 13 }, (_, n) => ({ n })));
      expect(await other.jsonArrayItem!(KEY, 3)).toEqual({ n: 3 });
      expect(await store.jsonArrayItem!(KEY, 12)).toEqual({ n: 12 });
      // A whole-day update (key rotation, sealing) writes each item back into its block.
      await store.update(KEY, (current) => encoder.encode(decoder.decode(current!).replaceAll('"n"', '"m"')));
      expect(itemsOf(await raw.read(`${KEY}#4`))).toEqual([4, 5, 6, 7].map((m) => ({ m })));
      expect(itemsOf(await store.get(KEY))).toEqual(Array.from({ length: 13 }, (_, m) => ({ m })));
      // Blocks are named by their first item's index: an update that drops an item, or is no
      // array, is refused and nothing is written.
      await expect(store.update(KEY, () => encoder.encode(JSON.stringify(Array.from({ length: 12 }, (_, m) => ({ m })))))).rejects.toThrow(/keep its 13 items/);
      await expect(store.update(KEY, () => encoder.encode("{}"))).rejects.toThrow(/keep its 13 items/);
      expect(itemsOf(await store.get(KEY))).toEqual(Array.from({ length: 13 }, (_, m) => ({ m })));
      expect(await store.delete(KEY)).toBe(true);
      expect(await raw.keys("audit-trails/")).toEqual([]);
      expect(await store.get(KEY)).toBeNull();
      // The day is started again from block 0 by either store.
      expect(await other.appendToJsonArray(KEY, { n: 0 })).toBe(1);
      expect(await store.appendToJsonArray(KEY, { n: 1 })).toBe(2);
      expect(await raw.keys("audit-trails/")).toEqual([KEY]);
    }, 60_000);

    it(`[${name}] a last block shortened behind this store (a restore, an edit): an append at an index its remembered block passed is stored, not taken as done`, async () => {
      const raw = await make();
      const store = createArrayBlockStore(raw.backend, { items: 8, rememberWrites: options.conditionalWrites ?? true });
      for (let n = 0; n < 4; n++) await store.appendToJsonArray(KEY, { n });
      // The object put back as it was after two items, by someone else than this store.
      await raw.backend.put(KEY, encoder.encode(JSON.stringify([{ n: 0 }, { n: 1 }])));
      expect(await store.appendToJsonArray(KEY, { n: 2 }, 2)).toBe(3);
      expect(itemsOf(await store.get(KEY))).toEqual([0, 1, 2].map((n) => ({ n })));
    });

    it(`[${name}] a day stored in one object (of any size) is read as it is, and appends go on in a block after it`, async () => {
      const raw = await make();
      const legacy = Array.from({ length: 10 }, (_, n) => JSON.stringify({ n }));
      await raw.write(KEY, arrayText(legacy));
      const store = createArrayBlockStore(raw.backend, { items: 4 });
      expect(itemsOf(await store.get(KEY))).toHaveLength(10);
      for (let n = 10; n < 15; n++) expect(await store.appendToJsonArray(KEY, { n }, n)).toBe(n + 1);
      expect(decoder.decode((await raw.read(KEY))!)).toBe(decoder.decode(arrayText(legacy)));
      expect(await raw.keys("audit-trails/")).toEqual([KEY, `${KEY}#10`, `${KEY}#14`]);
      expect(itemsOf(await store.get(KEY))).toEqual(Array.from({ length: 15 }, (_, n) => ({ n })));
      // A whole value put over the day replaces it, later blocks included.
      await store.put(KEY, arrayText(['{"n":0}']));
      expect(await raw.keys("audit-trails/")).toEqual([KEY]);
      expect(await store.appendToJsonArray(KEY, { n: 1 })).toBe(2);
    }, 60_000);

    if (options.conditionalWrites ?? true) it(`[${name}] encrypted at rest: sealed entries in blocks, read back, checked one by one by another store, re-wrapped by keys rotate`, async () => {
      const raw = await make();
      const [k1, k2] = [dataKey("k1"), dataKey("k2")];
      const keyring = new Keyring([k1]);
      const stores = [0, 1].map(() => encryptedBlobStore(createArrayBlockStore(raw.backend, { items: 2 }), keyring, { appendLog: true }));
      // Stores in turn: each checks the other's newest entry through the sealed item it reads.
      for (let n = 0; n < 7; n++) await appendAuditEntry(stores[n % 2]!, clock, "u1", entry(n));
      expect(await raw.keys("audit-trails/")).toEqual([KEY, `${KEY}#2`, `${KEY}#4`, `${KEY}#6`]);
      for (const key of await raw.keys("audit-trails/")) expect(containsBytes((await raw.read(key))!, encoder.encode("examiner@lab.example"))).toBe(false);
      expect(await stores[0]!.jsonArrayItem!(KEY, 3)).toMatchObject({ seq: 4, details: { n: 3 } });
      const verify = async () => verifyAuditTrail(await readAuditTrail(stores[1]!, "u1", [DAY]));
      expect((await verify()).valid).toBe(true);
      // keys rotate re-wraps every block's items in place, each under its own version.
      const rotated = new Keyring([k2, k1]);
      const before = await raw.read(`${KEY}#4`);
      await rotateKeys({ blobs: [{ name: "audit", store: createArrayBlockStore(raw.backend, { items: 2 }), appendLog: true }], kvs: [] }, rotated);
      expect(await raw.read(`${KEY}#4`)).not.toEqual(before);
      const after = encryptedBlobStore(createArrayBlockStore(raw.backend, { items: 2 }), new Keyring([k2]), { appendLog: true });
      expect((await verifyAuditTrail(await readAuditTrail(after, "u1", [DAY]))).entries).toBe(7);
    }, 60_000);

    describe(`[${name}] tampering inside a later block, on the stored bytes, is detected and named`, () => {
      // One day of 10 chained entries in blocks of 4: seq 1-4 at the key, 5-8 at #4, 9-10 at #8.
      async function trail() {
        const raw = await make();
        const store = createArrayBlockStore(raw.backend, { items: 4 });
        for (let n = 0; n < 10; n++) await appendAuditEntry(store, clock, "u1", entry(n));
        expect(await raw.keys("audit-trails/")).toEqual([KEY, `${KEY}#4`, `${KEY}#8`]);
        const verify = async () => verifyAuditTrail(await readAuditTrail(createArrayBlockStore(raw.backend), "u1", [DAY]));
        expect((await verify()).valid).toBe(true);
        return { raw, verify, block: async () => lines(await raw.read(`${KEY}#4`)) };
      }

      it("an edited field of seq 6: edited", async () => {
        const { raw, verify, block } = await trail();
        const items = await block();
        expect(items[1]).toContain('"n":5');
        items[1] = items[1]!.replace('"n":5', '"n":55');
        await raw.write(`${KEY}#4`, arrayText(items));
        expect((await verify()).firstBad).toMatchObject({ date: DAY, seq: 6, index: 5, reason: "edited" });
      });

      it("a deleted seq 6: missing", async () => {
        const { raw, verify, block } = await trail();
        const items = await block();
        items.splice(1, 1);
        await raw.write(`${KEY}#4`, arrayText(items));
        expect((await verify()).firstBad).toMatchObject({ date: DAY, seq: 6, reason: "missing" });
      });

      it("seq 6 and 7 swapped: reordered", async () => {
        const { raw, verify, block } = await trail();
        const items = await block();
        [items[1], items[2]] = [items[2]!, items[1]!];
        await raw.write(`${KEY}#4`, arrayText(items));
        expect((await verify()).firstBad).toMatchObject({ date: DAY, seq: 6, index: 5, reason: "reordered" });
      });

      it("a copy of seq 2 inserted after seq 6: inserted", async () => {
        const { raw, verify, block } = await trail();
        const items = await block();
        items.splice(2, 0, lines(await raw.read(KEY))[1]!);
        await raw.write(`${KEY}#4`, arrayText(items));
        expect((await verify()).firstBad).toMatchObject({ date: DAY, seq: 2, index: 6, reason: "inserted" });
      });

      it("the last block removed: tail dropped at seq 9; a middle block removed: missing seq 5", async () => {
        const first = await trail();
        await first.raw.remove(`${KEY}#8`);
        expect((await first.verify()).firstBad).toMatchObject({ date: DAY, seq: 9, reason: "tail dropped" });
        const second = await trail();
        await second.raw.remove(`${KEY}#4`);
        expect((await second.verify()).firstBad).toMatchObject({ date: DAY, seq: 5, reason: "missing" });
      });

      it("the first block removed: the later blocks are still read, and seq 1 is missing", async () => {
        const { raw, verify } = await trail();
        await raw.remove(KEY);
        const result = await verify();
        expect(result.firstBad).toMatchObject({ date: DAY, seq: 1, reason: "missing" });
        expect(result.days[0]?.entries).toBe(6);
      });
    });
  });
}
