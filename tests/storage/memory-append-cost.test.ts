// The memory store appends to a JSON array at a cost that does not grow with the array: the
// 1,500th append of a day parses, decodes, encodes and copies about as many bytes as the first.
// Counted, not timed: every byte the appends hand to JSON.parse, TextDecoder, TextEncoder or
// copy between buffers is added up, so the result does not depend on the machine's load.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createStorage } from "unstorage";
import { createBlobStore } from "../../src/core/storage/unstorage-stores.ts";
import { appendAuditEntry, readAuditTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { APPENDS, clock, DAY, entry, entryBytes, KEY, median } from "../helpers/append-cost.ts";


/**
 * The last appends of the day handle as many bytes as the first ones (the median, so that the
 * odd append that doubles the buffer does not count), and on average over all of them, those
 * doublings included, little more: a cost that grew with the day would be hundreds of times it.
 */
function expectConstantCost(perAppend: number[]): void {
  const first = median(perAppend.slice(10, 110));
  expect(median(perAppend.slice(-100))).toBeLessThanOrEqual(1.1 * first);
  expect(perAppend.reduce((a, b) => a + b, 0) / perAppend.length).toBeLessThan(2.5 * first);
}

let handled = 0;
beforeEach(() => {
  handled = 0;
  const parse = JSON.parse;
  vi.spyOn(JSON, "parse").mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    handled += text.length;
    return parse(text, reviver);
  });
  const decode = TextDecoder.prototype.decode;
  vi.spyOn(TextDecoder.prototype, "decode").mockImplementation(function (this: TextDecoder, input?: AllowSharedBufferSource, options?: TextDecodeOptions) {
    handled += input?.byteLength ?? 0;
    return decode.call(this, input, options);
  });
  const encode = TextEncoder.prototype.encode;
  vi.spyOn(TextEncoder.prototype, "encode").mockImplementation(function (this: TextEncoder, input?: string) {
    const out = encode.call(this, input);
    handled += out.length;
    return out;
  });
  const set = Uint8Array.prototype.set;
  vi.spyOn(Uint8Array.prototype, "set").mockImplementation(function (this: Uint8Array, source: ArrayLike<number>, offset?: number) {
    handled += source.length;
    return set.call(this, source, offset);
  });
  const slice = Uint8Array.prototype.slice;
  vi.spyOn(Uint8Array.prototype, "slice").mockImplementation(function (this: Uint8Array, start?: number, end?: number) {
    const out = slice.call(this, start, end);
    handled += out.length;
    return out;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("memory store: an append costs the same however long the day is", () => {
  it(`${APPENDS} plain appends to one day handle a bounded number of bytes each, and the day holds them all in order`, async () => {
    const store = createBlobStore(createStorage());
    const perAppend: number[] = [];
    for (let n = 0; n < APPENDS; n++) {
      const before = handled;
      expect(await store.appendToJsonArray(KEY, { ...entry(n), receivedAt: clock.now().toISOString() })).toBe(n + 1);
      perAppend.push(handled - before);
    }
    vi.restoreAllMocks();
    expectConstantCost(perAppend);
    // The store's own work stays about the entry's size (a rewrite of the day is ~APPENDS/2 entries).
    expect(median(perAppend.slice(-100))).toBeLessThan(3 * entryBytes);
    const items = JSON.parse(new TextDecoder().decode((await store.get(KEY))!)) as { details: { n: number } }[];
    expect(items.map((item) => item.details.n)).toEqual(Array.from({ length: APPENDS }, (_, n) => n));
  });

  it(`${APPENDS} chained appends handle a bounded number of bytes each, and the trail verifies`, async () => {
    const store = createBlobStore(createStorage());
    const perAppend: number[] = [];
    for (let n = 0; n < APPENDS; n++) {
      const before = handled;
      await appendAuditEntry(store, clock, "u1", entry(n));
      perAppend.push(handled - before);
    }
    vi.restoreAllMocks();
    expectConstantCost(perAppend);
    const result = await verifyAuditTrail(await readAuditTrail(store, "u1", [DAY]));
    expect(result.valid).toBe(true);
    expect(result.entries).toBe(APPENDS);
  });

  it("bytes read before an append stay as they were read (readers see the old array or the new, never a mix)", async () => {
    const store = createBlobStore(createStorage());
    await store.appendToJsonArray(KEY, { n: 1 });
    await store.appendToJsonArray(KEY, { n: 2 });
    const read = await store.get(KEY);
    const text = new TextDecoder().decode(read!);
    await store.appendToJsonArray(KEY, { n: 3 });
    expect(new TextDecoder().decode(read!)).toBe(text);
    expect(JSON.parse(text)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(JSON.parse(new TextDecoder().decode((await store.get(KEY))!))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it("a day replaced in the storage behind the store's back is read again, not appended over", async () => {
    const storage = createStorage();
    const store = createBlobStore(storage);
    await store.appendToJsonArray(KEY, { n: 1 });
    await store.appendToJsonArray(KEY, { n: 2 });
    await storage.setItemRaw(KEY.replaceAll("/", ":"), new TextEncoder().encode('[{"n":7}]'));
    expect(await store.appendToJsonArray(KEY, { n: 3 })).toBe(2);
    expect(await store.appendToJsonArray(KEY, { n: 3 }, 1)).toBe(2);
    expect(await store.appendToJsonArray(KEY, { n: 4 })).toBe(3);
    expect(JSON.parse(new TextDecoder().decode((await store.get(KEY))!))).toEqual([{ n: 7 }, { n: 3 }, { n: 4 }]);
  });
});
