// The Deno KV store appends to a JSON array at a cost that does not grow with the array: the
// 1,500th append of a day (seven 60 KiB chunks by then) reads and writes as many bytes of KV
// values as the first ones. Counted, not timed: every byte of a value read from or written to
// the KV (Deno KV in memory, the engine Deno Deploy runs) is added up.
import { afterAll, describe, expect, it } from "vitest";
import { createDenoKvBlobStore, type DenoKvLike, type KvKey } from "../../src/adapters/deno/kv-blob-store.ts";
import { appendAuditEntry, readAuditTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { APPENDS, clock, DAY, entry, entryBytes, KEY } from "../helpers/append-cost.ts";

const deno = (globalThis as unknown as { Deno: { openKv(path?: string): Promise<DenoKvLike & { close(): void }> } }).Deno;
const kv = await deno.openKv(":memory:");
afterAll(() => kv.close());
let n = 0;

const sizeOf = (value: unknown): number => (value instanceof Uint8Array ? value.length : new TextEncoder().encode(JSON.stringify(value ?? null)).length);

/** The KV, counting the bytes of every value read or written through it. */
function counted(): { kv: DenoKvLike; bytes(): number } {
  let bytes = 0;
  const wrapped: DenoKvLike = {
    async get<T>(key: KvKey) {
      const entry = await kv.get<T>(key);
      bytes += sizeOf(entry.value);
      return entry;
    },
    set: (key, value) => {
      bytes += sizeOf(value);
      return kv.set(key, value);
    },
    delete: (key) => kv.delete(key),
    list: (selector) => kv.list(selector),
    atomic() {
      const inner = kv.atomic();
      const op: ReturnType<DenoKvLike["atomic"]> = {
        check: (...checks) => (inner.check(...checks), op),
        set: (key, value) => {
          bytes += sizeOf(value);
          inner.set(key, value);
          return op;
        },
        delete: (key) => (inner.delete(key), op),
        commit: () => inner.commit(),
      };
      return op;
    },
  };
  return { kv: wrapped, bytes: () => bytes };
}

async function entriesUnder(store: string): Promise<number> {
  let entries = 0;
  for await (const _ of kv.list({ prefix: ["fa", store] })) entries++;
  return entries;
}

describe("Deno KV store: an append costs the same however long the day is", () => {
  it(`${APPENDS} plain appends to one day move a bounded number of bytes each, leave no stale chunk, and the day holds them all in order`, async () => {
    const name = `cost${n++}`;
    const counter = counted();
    const store = createDenoKvBlobStore(counter.kv, name);
    const perAppend: number[] = [];
    for (let i = 0; i < APPENDS; i++) {
      const before = counter.bytes();
      expect(await store.appendToJsonArray(KEY, { ...entry(i), receivedAt: clock.now().toISOString() })).toBe(i + 1);
      perAppend.push(counter.bytes() - before);
    }
    const day = (await store.get(KEY))!;
    expect(day.length).toBeGreaterThan(6 * 60 * 1024);
    // An append reads and writes the last chunk (up to 60 KiB) and the head, never the day: a
    // rewrite would move the whole day (400 KiB by the end) twice.
    expect(Math.max(...perAppend)).toBeLessThan(2 * 61 * 1024 + 2 * entryBytes + 1024);
    const first = perAppend.slice(0, 200).reduce((a, b) => a + b, 0) / 200;
    const last = perAppend.slice(-200).reduce((a, b) => a + b, 0) / 200;
    // Both are about a chunk's fill on average (the last chunk grows, then starts again).
    expect(last).toBeLessThan(1.5 * 61 * 1024);
    expect(first).toBeGreaterThan(0);
    const items = JSON.parse(new TextDecoder().decode(day)) as { details: { n: number } }[];
    expect(items.map((item) => item.details.n)).toEqual(Array.from({ length: APPENDS }, (_, i) => i));
    // The head and one entry per chunk: the replaced last chunks are gone.
    expect(await entriesUnder(name)).toBe(1 + Math.ceil(day.length / (60 * 1024)));
  }, 60_000);

  it(`${APPENDS} chained appends move a bounded number of bytes each, and the trail verifies`, async () => {
    const counter = counted();
    const store = createDenoKvBlobStore(counter.kv, `chain${n++}`);
    const perAppend: number[] = [];
    for (let i = 0; i < APPENDS; i++) {
      const before = counter.bytes();
      await appendAuditEntry(store, clock, "u1", entry(i));
      perAppend.push(counter.bytes() - before);
    }
    expect(Math.max(...perAppend.slice(1))).toBeLessThan(2 * 61 * 1024 + 20 * entryBytes);
    const result = await verifyAuditTrail(await readAuditTrail(store, "u1", [DAY]));
    expect(result.valid).toBe(true);
    expect(result.entries).toBe(APPENDS);
  }, 60_000);

  it("a reader during appends that cross a chunk's end sees the array before or after each append, never a mix", async () => {
    const store = createDenoKvBlobStore(kv, `read${n++}`);
    const big = "x".repeat(20_000);
    let reads = 0;
    const writing = (async () => {
      for (let i = 0; i < 40; i++) await store.appendToJsonArray(KEY, { i, big });
    })();
    let done = false;
    void writing.then(() => (done = true));
    while (!done) {
      const bytes = await store.get(KEY);
      if (bytes !== null) {
        const items = JSON.parse(new TextDecoder().decode(bytes)) as { i: number }[];
        expect(items.map((item) => item.i)).toEqual(Array.from({ length: items.length }, (_, i) => i));
        reads++;
      }
    }
    await writing;
    expect(reads).toBeGreaterThan(0);
    expect(((JSON.parse(new TextDecoder().decode((await store.get(KEY))!))) as unknown[]).length).toBe(40);
  }, 60_000);

  it("a day written whole, or stored by an earlier version (chunks not keyed for appends), is read once and appended after", async () => {
    const name = `old${n++}`;
    const store = createDenoKvBlobStore(kv, name);
    // As the previous version stored a value: a head without layout and chunks keyed by index only.
    const generation = crypto.randomUUID();
    const old = new TextEncoder().encode('[\n{"n":1},\n{"n":2}\n]');
    await kv.set(["fa", name, ...KEY.split("/"), "\u0001chunk", generation, 0], old);
    await kv.set(["fa", name, ...KEY.split("/"), "\u0000head"], { generation, chunks: 1, size: old.length });
    expect(await store.appendToJsonArray(KEY, { n: 3 }, 2)).toBe(3);
    expect(await store.appendToJsonArray(KEY, { n: 3 }, 2)).toBe(3);
    expect(await store.appendToJsonArray(KEY, { n: 4 })).toBe(4);
    expect(JSON.parse(new TextDecoder().decode((await store.get(KEY))!))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    await store.put(KEY, new TextEncoder().encode('[{"n":7}]'));
    expect(await store.appendToJsonArray(KEY, { n: 8 })).toBe(2);
    expect(JSON.parse(new TextDecoder().decode((await store.get(KEY))!))).toEqual([{ n: 7 }, { n: 8 }]);
    expect(await store.delete(KEY)).toBe(true);
    expect(await entriesUnder(name)).toBe(0);
  });
});
