/**
 * One history moved between the two kinds of store (docs/storage.md#record-history): a store one
 * process holds keeps no head (its log's last item is the newest version), a store several
 * processes share orders writes by a stored head. A log written without a head gets one from
 * its last item on the shared store's first write; a head found on a store one process holds
 * is folded into the log and removed. Both views here are over one unstorage storage, as a
 * data folder moved (or restored) from one deployment to the other.
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import { createKeyHistories, historyKeys } from "../../../src/core/history/mod.ts";
import { createBlobStore } from "../../../src/core/storage/unstorage-stores.ts";

const clock = { now: () => new Date("2026-12-03T10:00:00.000Z") };
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array | null) => (value === null ? null : new TextDecoder().decode(value));
const key = "u1/C-1/data.json";
const keys = historyKeys(key);

describe("a history moved between store kinds", () => {
  it("written where one process held the store, then shared, then held again: every version kept, in order, the chain whole", async () => {
    const storage = createStorage();
    const held = createKeyHistories(createBlobStore(storage, { soleWriter: true }), { clock });
    for (const n of [1, 2, 3]) await held.write(key, bytes(`{"n":${n}}`), "u1");
    const shared = createBlobStore(storage);
    expect(await shared.has(keys.head)).toBe(false);

    const sharedHistories = createKeyHistories(shared, { clock });
    expect((await sharedHistories.list(key))?.current).toBe(3);
    expect(await sharedHistories.verify(key)).toEqual({ valid: true });
    expect(await sharedHistories.current(key)).toMatchObject({ version: 3 });
    // The first write on the shared store takes the log's last item as its head, then records version 4.
    expect((await sharedHistories.write(key, bytes('{"n":4}'), "u1")).version).toBe(4);
    expect(await shared.has(keys.head)).toBe(true);
    await sharedHistories.remove(key, "u1");
    expect(await sharedHistories.verify(key)).toEqual({ valid: true });

    // Held by one process again (a new one: nothing in memory): the head is folded into the log and goes.
    const again = createKeyHistories(createBlobStore(storage, { soleWriter: true }), { clock });
    expect((await again.write(key, bytes('{"n":6}'), "u1")).version).toBe(6);
    expect(await shared.has(keys.head)).toBe(false);
    const listed = (await again.list(key))!;
    expect(listed.versions.map((version) => [version.version, version.deleted])).toEqual([[1, false], [2, false], [3, false], [4, false], [5, true], [6, false]]);
    expect(text(await again.readCurrent(key))).toBe('{"n":6}');
    expect(text(await again.read(key, 4))).toBe('{"n":4}');
    expect(await again.verify(key)).toEqual({ valid: true });
  });

  it("a head whose version never reached the log (a shared store's write cut after its head moved) is that version on the store one process holds", async () => {
    const storage = createStorage();
    const shared = createBlobStore(storage);
    const failing = { ...shared, appendToJsonArray: (k: string, item: unknown, atIndex?: number) => (atIndex === 1 ? Promise.reject(new Error("cut")) : shared.appendToJsonArray(k, item, atIndex)) };
    await createKeyHistories(shared, { clock }).write(key, bytes('{"n":1}'), "u1");
    await expect(createKeyHistories(failing, { clock }).write(key, bytes('{"n":2}'), "u1")).rejects.toThrow("cut");
    const held = createKeyHistories(createBlobStore(storage, { soleWriter: true }), { clock });
    // Version 2 was recorded (its head moved), as after a crash: it is in the log now, and the next write is 3.
    expect((await held.write(key, bytes('{"n":3}'), "u1")).version).toBe(3);
    expect(await held.list(key)).toMatchObject({ current: 3 });
    expect(text(await held.read(key, 2))).toBe('{"n":2}');
    expect(await held.verify(key)).toEqual({ valid: true });
  });
});
