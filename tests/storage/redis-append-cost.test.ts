// The Redis store appends to a JSON array at a cost that does not grow with the array: the
// 1,500th append of a day moves as many bytes between the service and redis-server as the
// first, and the server never reads the day back. Counted, not timed: redis-server's own
// byte counters (INFO stats) and command counts (INFO commandstats).
import { describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { createRedisBlobStore } from "../../src/adapters/server/redis/redis-store.ts";
import { appendAuditEntry, readAuditTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { APPENDS, clock, DAY, entry, entryBytes, KEY, median } from "../helpers/append-cost.ts";
import { redisForSuite } from "../helpers/redis-server.ts";

const { client, prefix: fresh } = redisForSuite();


/** Bytes redis-server has received and sent so far, counted by the server. */
async function netBytes(info: Redis): Promise<number> {
  const stats = await info.info("stats");
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, "m").exec(stats)![1]);
  return field("total_net_input_bytes") + field("total_net_output_bytes");
}

/** Calls of each command since the last CONFIG RESETSTAT (scripts' own calls included). */
async function commandCalls(info: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const [, name, count] of (await info.info("commandstats")).matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) calls.set(name!, Number(count));
  return calls;
}

/** Bytes on the wire per call of `step`, less what reading the counters costs. */
async function bytesPerCall(info: Redis, times: number, step: (n: number) => Promise<unknown>): Promise<number[]> {
  const overhead: number[] = [];
  for (let i = 0; i < 20; i++) overhead.push(-(await netBytes(info)) + (await netBytes(info)));
  const base = median(overhead);
  const perCall: number[] = [];
  for (let n = 0; n < times; n++) {
    const before = await netBytes(info);
    await step(n);
    perCall.push((await netBytes(info)) - before - base);
  }
  return perCall;
}

describe("Redis store: an append costs the same however long the day is (a real redis-server)", () => {
  it(`${APPENDS} plain appends to one day move a bounded number of bytes each, never read the day back, and the day holds them all in order`, async () => {
    const info = client();
    const store = createRedisBlobStore({ client: client(), prefix: fresh("cost") });
    await info.config("RESETSTAT");
    const perAppend = await bytesPerCall(info, APPENDS, async (n) => {
      expect(await store.appendToJsonArray(KEY, { ...entry(n), receivedAt: clock.now().toISOString() })).toBe(n + 1);
    });
    const calls = await commandCalls(info);
    const first = median(perAppend.slice(10, 110));
    expect(median(perAppend.slice(-100))).toBeLessThanOrEqual(1.1 * first);
    expect(Math.max(...perAppend.slice(1))).toBeLessThanOrEqual(1.2 * first);
    // The item travels once (a new day is made of it by the script) plus the script's SHA-1
    // and keys: a rewrite of the day would be ~APPENDS/2 entries each way.
    expect(median(perAppend.slice(-100))).toBeLessThan(2 * entryBytes);
    // Written in place: one SETRANGE per append after the first, no whole-value read or write.
    expect(calls.get("setrange")).toBe(APPENDS - 1);
    expect(calls.get("get") ?? 0).toBe(0);
    expect(calls.get("hset")).toBe(APPENDS);
    const items = JSON.parse(new TextDecoder().decode((await store.get(KEY))!)) as { details: { n: number } }[];
    expect(items.map((item) => item.details.n)).toEqual(Array.from({ length: APPENDS }, (_, n) => n));
  });

  it(`${APPENDS} chained appends move a bounded number of bytes each, and the trail verifies`, async () => {
    const info = client();
    const store = createRedisBlobStore({ client: client(), prefix: fresh("chain") });
    const perAppend = await bytesPerCall(info, APPENDS, (n) => appendAuditEntry(store, clock, "u1", entry(n)));
    const first = median(perAppend.slice(10, 110));
    expect(median(perAppend.slice(-100))).toBeLessThanOrEqual(1.1 * first);
    expect(median(perAppend.slice(-100))).toBeLessThan(20 * entryBytes);
    const result = await verifyAuditTrail(await readAuditTrail(store, "u1", [DAY]));
    expect(result.valid).toBe(true);
    expect(result.entries).toBe(APPENDS);
  });

  it("a day written whole, or whose bytes changed in Redis behind the store's back, is read again, not appended over", async () => {
    const raw = client();
    const prefix = fresh("back");
    const store = createRedisBlobStore({ client: client(), prefix });
    const text = async () => JSON.parse(new TextDecoder().decode((await store.get(KEY))!)) as unknown;
    await store.put(KEY, new TextEncoder().encode('[{"n":1},{"n":2}]'));
    expect(await store.appendToJsonArray(KEY, { n: 3 })).toBe(3);
    expect(await store.appendToJsonArray(KEY, { n: 3 }, 2)).toBe(3);
    expect(await store.appendToJsonArray(KEY, { n: 4 }, 3)).toBe(4);
    expect(await text()).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    // Someone with access to Redis drops two items: the count the store kept no longer holds.
    await raw.set(`${prefix}${KEY}#d`, '[\n{"n":7}\n]');
    expect(await store.appendToJsonArray(KEY, { n: 8 }, 1)).toBe(2);
    expect(await store.appendToJsonArray(KEY, { n: 9 })).toBe(3);
    expect(await text()).toEqual([{ n: 7 }, { n: 8 }, { n: 9 }]);
    // A server that lost its scripts (restarted, SCRIPT FLUSH) is sent them again.
    await raw.script("FLUSH");
    // A whole-value update replaces the appendable form; appends go on after it.
    await store.update(KEY, () => new TextEncoder().encode('[\n{"n":0}\n]'));
    expect(await store.appendToJsonArray(KEY, { n: 1 })).toBe(2);
    expect(await text()).toEqual([{ n: 0 }, { n: 1 }]);
    expect(await store.list("audit-trails/")).toEqual([KEY]);
    expect(await store.delete(KEY)).toBe(true);
    expect(await raw.exists(`${prefix}${KEY}`, `${prefix}${KEY}#d`)).toBe(0);
    expect(await store.get(KEY)).toBeNull();
  });
});
