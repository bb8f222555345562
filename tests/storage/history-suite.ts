/**
 * Record history (src/core/history) over one BlobStore backend: versions, deletion marks, the
 * chain and its tampering, and concurrent writes. Called by blobStoreSuite for every backend.
 */
import { expect, it } from "vitest";
import type { BlobStore, Clock } from "../../src/core/ports.ts";
import { createKeyHistories, historyKeys, recordHash, type VersionRecord } from "../../src/core/history/mod.ts";
import { pruneHistories } from "../../src/core/history/prune-history.ts";
import { sha256Hex } from "../../src/core/encoding/digest.ts";
import { encodeJsonArray } from "../../src/core/storage/json-array.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array | null) => (value === null ? null : new TextDecoder().decode(value));
const clock: Clock = { now: () => new Date("2026-12-02T04:00:00.000Z") };

/** The history cases of one backend; `makePair` gives two stores over one backend (two processes). */
export function historySuite(name: string, make: () => Promise<BlobStore> | BlobStore, makePair?: () => Promise<[BlobStore, BlobStore]>): void {
  it(`[${name}] history: each write and delete is a version, oldest first, chained`, async () => {
    const store = await make();
    const histories = createKeyHistories(store, { clock });
    const key = "u1/C-1/data.json";
    expect(await histories.list(key)).toBeNull();
    await histories.write(key, bytes('{"a":1}'), "u1");
    await histories.write(key, bytes('{"a":2}'), "data-key");
    expect(text(await store.get(key))).toBe('{"a":2}');
    expect(await histories.remove(key, "u1")).toMatchObject({ version: 3, deleted: true, size: 0 });
    expect(await store.get(key)).toBeNull();
    expect(await histories.remove(key, "u1")).toBeNull();
    await histories.write(key, bytes('{"a":4}'), "u1");
    const listed = (await histories.list(key))!;
    expect(listed.current).toBe(4);
    expect(listed.versions.map((v) => [v.version, v.deleted, v.writtenBy, v.size])).toEqual([
      [1, false, "u1", 7],
      [2, false, "data-key", 7],
      [3, true, "u1", 0],
      [4, false, "u1", 7],
    ]);
    expect(listed.versions[0]!.previous).toBeNull();
    expect(listed.versions[0]!.writtenAt).toBe("2026-12-02T04:00:00.000Z");
    for (const v of listed.versions.slice(1)) expect(v.previous).toMatch(/^[0-9a-f]{64}$/);
    expect(text(await histories.read(key, 1))).toBe('{"a":1}');
    expect(text(await histories.read(key, 2))).toBe('{"a":2}');
    expect(await histories.read(key, 3)).toBeNull();
    expect(await histories.read(key, 5)).toBeNull();
    expect(await histories.current(key)).toMatchObject({ version: 4, sha256: listed.versions[3]!.sha256 });
    expect(await histories.verify(key)).toEqual({ valid: true });
    // No history key shows under the user's folder (case listing, account deletion).
    expect(await store.list("u1/")).toEqual([key]);
  }, 60_000);

  it(`[${name}] history: readCurrent refuses an earlier version put back in the store once its write has settled, serves what was written around the history`, async () => {
    const store = await make();
    let now = Date.parse("2026-12-02T04:00:00.000Z");
    const histories = createKeyHistories(store, { clock: { now: () => new Date(now) } });
    const key = "u5/C-1/data.json";
    expect(await histories.readCurrent(key)).toBeNull();
    await histories.write(key, bytes('{"a":1}'), "u5");
    await histories.write(key, bytes('{"a":2}'), "u5");
    expect(text(await histories.readCurrent(key))).toBe('{"a":2}');
    await store.put(key, bytes('{"a":1}'));
    // Within a minute of the head it may be a write settling in another process: as stored.
    expect(text(await histories.readCurrent(key))).toBe('{"a":1}');
    now += 60_000;
    const refused = await histories.readCurrent(key).then(() => "served", (err: unknown) => err);
    expect(refused).toMatchObject({ kind: "integrity-failed", details: { key, version: 1, current: 2 } });
    // A value that is no version (DATA_HISTORY=off wrote it) is served; a removed one is missing.
    await store.put(key, bytes('{"a":"off"}'));
    expect(text(await histories.readCurrent(key))).toBe('{"a":"off"}');
    await store.delete(key);
    expect(await histories.readCurrent(key)).toBeNull();
    // A deleted key's earlier version put back is refused; a key without history reads as stored.
    await histories.write(key, bytes('{"a":3}'), "u5");
    await histories.remove(key, "u5");
    await store.put(key, bytes('{"a":3}'));
    now += 60_000;
    expect(await histories.readCurrent(key).then(() => "served", (err: unknown) => err)).toMatchObject({ kind: "integrity-failed", details: { version: 3, current: 4 } });
    await store.put("u5/C-2/data.json", bytes("{}"));
    expect(text(await histories.readCurrent("u5/C-2/data.json"))).toBe("{}");
    // A value this process found current is trusted for a minute only: another process writes
    // on, the one it found is put back, and it is refused once that minute is over.
    const other = createKeyHistories(store, { clock: { now: () => new Date(now) } });
    await histories.write(key, bytes('{"a":7}'), "u5");
    expect(text(await histories.readCurrent(key))).toBe('{"a":7}');
    await other.write(key, bytes('{"a":8}'), "u5");
    await store.put(key, bytes('{"a":7}'));
    expect(text(await histories.readCurrent(key))).toBe('{"a":7}');
    now += 60_000;
    expect(await histories.readCurrent(key).then(() => "served", (err: unknown) => err)).toMatchObject({ kind: "integrity-failed", details: { version: 5, current: 6 } });
  }, 60_000);

  it(`[${name}] history: a value stored before history becomes version 1; bytes that are not UTF-8 come back as stored`, async () => {
    const store = await make();
    const histories = createKeyHistories(store, { clock });
    await store.put("u2/C-1/data.json", bytes('{"old":true}'));
    expect(await histories.list("u2/C-1/data.json")).toEqual({ key: "u2/C-1/data.json", versions: [], current: null });
    await histories.write("u2/C-1/data.json", bytes('{"new":true}'), "u2");
    const listed = (await histories.list("u2/C-1/data.json"))!;
    expect(listed.versions.map((v) => v.writtenBy)).toEqual(["before-history", "u2"]);
    expect(text(await histories.read("u2/C-1/data.json", 1))).toBe('{"old":true}');
    const raw = new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d, 0xff]);
    await histories.write("u2/C-2/data.json", raw, "u2");
    expect(await histories.read("u2/C-2/data.json", 1)).toEqual(raw);
    expect(await histories.verify("u2/C-2/data.json")).toEqual({ valid: true });
  }, 60_000);

  it(`[${name}] history: tampering with the stored history names the first bad version`, async () => {
    const store = await make();
    const histories = createKeyHistories(store, { clock });
    const key = "u3/C-1/data.json";
    for (let i = 1; i <= 4; i++) await histories.write(key, bytes(`{"n":${i}}`), "u3");
    expect(await histories.verify(key)).toEqual({ valid: true });
    const keys = historyKeys(key);
    const original = await store.get(keys.log);
    const edit = async (change: (items: { record: Record<string, unknown>; contents: Record<string, unknown> }[]) => void) => {
      const items = JSON.parse(text(await store.get(keys.log))!) as { record: Record<string, unknown>; contents: Record<string, unknown> }[];
      change(items);
      await store.put(keys.log, bytes(JSON.stringify(items)));
    };
    // Version 2's bytes altered.
    await edit((items) => (items[1]!.contents.text = '{"n":20}'));
    expect(await histories.verify(key)).toEqual({ valid: false, firstBadVersion: 2, reason: "bytes altered" });
    await expect(histories.read(key, 2)).rejects.toThrow(/integrity check/);
    await store.put(keys.log, original!);
    // Version 2's record rewritten to match altered bytes: the chain shows it at version 3.
    await edit((items) => (items[1]!.record.writtenBy = "someone else"));
    expect(await histories.verify(key)).toEqual({ valid: false, firstBadVersion: 3, reason: "chain broken" });
    await store.put(keys.log, original!);
    // Version 1 dropped.
    await edit((items) => items.shift());
    expect(await histories.verify(key)).toMatchObject({ valid: false, firstBadVersion: 1 });
    // Versions 2 and 3 swapped.
    await store.put(keys.log, original!);
    await edit((items) => items.splice(1, 2, items[2]!, items[1]!));
    expect(await histories.verify(key)).toMatchObject({ valid: false, firstBadVersion: 2 });
    await store.put(keys.log, original!);
    expect(await histories.verify(key)).toEqual({ valid: true });
    // The value put back to an earlier version.
    await store.put(key, bytes('{"n":1}'));
    expect(await histories.verify(key)).toEqual({ valid: false, firstBadVersion: 4, reason: "value differs" });
  }, 60_000);

  it(`[${name}] history: a history an earlier release stored as two arrays and a head reads as it was; the next write makes it one log and follows it`, async () => {
    const store = await make();
    const key = "u8/C-1/data.json";
    const keys = historyKeys(key);
    // Three versions as that release stored them, cut between the head's move and the records' append: version 3 is in the head and the contents only.
    const records: VersionRecord[] = [];
    const contents: unknown[] = [];
    let previous: string | null = null;
    for (const [i, body] of ['{"a":1}', '{"a":2}', '{"a":3}'].entries()) {
      const record: VersionRecord = { version: i + 1, sha256: await sha256Hex(bytes(body)), size: body.length, writtenAt: "2026-11-01T00:00:00.000Z", writtenBy: "u8", deleted: false, previous };
      records.push(record);
      contents.push({ v: i + 1, text: body });
      previous = await recordHash(record);
    }
    await store.put(keys.versions, encodeJsonArray(records.slice(0, 2)));
    await store.put(keys.contents, encodeJsonArray(contents));
    await store.put(keys.head, bytes(JSON.stringify({ format: "forensic-annotation/history-head@1", key, record: records[2], hash: previous, contents: contents[2] })));
    await store.put(key, bytes('{"a":3}'));
    const histories = createKeyHistories(store, { clock });
    expect(await histories.list(key)).toEqual({ key, versions: records, current: 3 });
    expect(text(await histories.read(key, 1))).toBe('{"a":1}');
    expect(text(await histories.read(key, 3))).toBe('{"a":3}');
    expect(await histories.verify(key)).toEqual({ valid: true });
    expect(text(await histories.readCurrent(key))).toBe('{"a":3}');
    // The next write is version 4; the arrays are merged into the log and removed.
    expect(await histories.write(key, bytes('{"a":4}'), "u8")).toMatchObject({ version: 4, previous: await recordHash(records[2]!) });
    expect(await store.has(keys.log)).toBe(true);
    expect(await store.has(keys.versions)).toBe(false);
    expect(await store.has(keys.contents)).toBe(false);
    expect((await histories.list(key))!.versions.slice(0, 3)).toEqual(records);
    expect(await histories.verify(key)).toEqual({ valid: true });
    // Another history over the store (another process, or after a restart) follows the log.
    const again = createKeyHistories(store, { clock });
    expect(text(await again.read(key, 3))).toBe('{"a":3}');
    expect((await again.write(key, bytes('{"a":5}'), "u8")).version).toBe(5);
    expect(text(await again.readCurrent(key))).toBe('{"a":5}');
    expect(await again.verify(key)).toEqual({ valid: true });
  }, 60_000);

  it(`[${name}] history: 16 concurrent writes of one key are 16 versions, none lost or twice`, async () => {
    const store = await make();
    const histories = createKeyHistories(store, { clock });
    const key = "u4/C-1/data.json";
    const records = await Promise.all(Array.from({ length: 16 }, (_, i) => histories.write(key, bytes(`{"i":${i}}`), "u4")));
    expect(records.map((r) => r.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    const listed = (await histories.list(key))!;
    expect(listed.versions).toHaveLength(16);
    const bodies = await Promise.all(listed.versions.map((v) => histories.read(key, v.version).then(text)));
    expect(new Set(bodies).size).toBe(16);
    expect(text(await store.get(key))).toBe(bodies[15]);
    expect(await histories.verify(key)).toEqual({ valid: true });
  }, 60_000);

  it(`[${name}] history: concurrent updates each build on the version before: none lost`, async () => {
    const store = await make();
    const histories = createKeyHistories(store, { clock });
    const key = "u6/C-1/1/data.json";
    const add = (current: Uint8Array | null) => bytes(String(Number(text(current) ?? "0") + 1));
    await Promise.all(Array.from({ length: 12 }, () => histories.update(key, add, "u6")));
    expect(text(await store.get(key))).toBe("12");
    const listed = (await histories.list(key))!;
    expect(await Promise.all(listed.versions.map((v) => histories.read(key, v.version).then(text)))).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)));
  }, 60_000);

  it(`[${name}] history: a value back after its deletion mark (a write another process's DELETE overtook, or one made around the history) goes with a deletion of its own; no DELETE answers a version another one was given`, async () => {
    const store = await make();
    const histories = createKeyHistories(store, { clock });
    const key = "u6/C-1/data.json";
    await histories.write(key, bytes('{"a":1}'), "u6");
    const first = await histories.remove(key, "u6");
    expect(first).toMatchObject({ version: 2, deleted: true });
    // Version 1's bytes put back behind the history, as an overtaken writer's value write can.
    await store.put(key, bytes('{"a":1}'));
    const second = await histories.remove(key, "u6");
    expect(second).toMatchObject({ version: 3, deleted: true, previous: await recordHash(first!) });
    expect(await store.get(key)).toBeNull();
    // Nothing left to delete: no version, and none answered twice.
    expect(await histories.remove(key, "u6")).toBeNull();
    const listed = (await histories.list(key))!;
    expect(listed.versions.map((v) => [v.version, v.deleted])).toEqual([[1, false], [2, true], [3, true]]);
    expect(listed.current).toBeNull();
    expect(await histories.verify(key)).toEqual({ valid: true });
  }, 60_000);

  it(`[${name}] history prune: the old prefix loses its bytes in the store, the newest and a held key stay, what remains verifies`, async () => {
    const store = await make();
    const old: Clock = { now: () => new Date("2026-01-01T00:00:00.000Z") };
    const key = "u7/C-1/data.json";
    const held = "u7/HELD/data.json";
    const past = createKeyHistories(store, { clock: old });
    for (const i of [1, 2, 3]) await past.write(key, bytes(`{"old":${i}}`), "u7");
    for (const i of [1, 2]) await past.write(held, bytes(`{"kept":${i}}`), "u7");
    const histories = createKeyHistories(store, { clock });
    await histories.write(key, bytes('{"new":4}'), "u7");
    const summary = await pruneHistories(store, { clock, retentionDays: 30, isHeld: async (k) => k === held });
    expect(summary.pruned).toEqual([{ key, versions: [1, 2, 3] }]);
    expect(summary.held).toEqual([held]);
    expect(text(await store.get(historyKeys(key).log))).not.toContain("old");
    expect(await histories.read(key, 2)).toBeNull();
    expect(text(await histories.read(key, 4))).toBe('{"new":4}');
    expect(text(await store.get(key))).toBe('{"new":4}');
    expect(await histories.verify(key)).toEqual({ valid: true });
    expect(text(await histories.read(held, 1))).toBe('{"kept":1}');
    expect(await histories.verify(held)).toEqual({ valid: true });
    // A write after the prune appends as before.
    await histories.write(key, bytes('{"new":5}'), "u7");
    expect((await histories.list(key))!.versions.map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
    expect(await histories.verify(key)).toEqual({ valid: true });
  }, 60_000);

  if (makePair) {
    it(`[${name}] history: writes and deletes from two processes' stores over one backend: every one a version, the value the newest`, async () => {
      const [a, b] = await makePair();
      const pair = [createKeyHistories(a, { clock }), createKeyHistories(b, { clock })];
      const key = "u5/C-1/data.json";
      const done = await Promise.all(Array.from({ length: 20 }, (_, i) => {
        const histories = pair[i % 2]!;
        return i % 10 === 9 ? histories.remove(key, "u5") : histories.write(key, bytes(`{"i":${i}}`), "u5");
      }));
      const versions = done.filter((r) => r !== null).map((r) => r!.version);
      expect(new Set(versions).size).toBe(versions.length);
      const listed = (await pair[0]!.list(key))!;
      expect(listed.versions.map((v) => v.version)).toEqual(Array.from({ length: listed.versions.length }, (_, i) => i + 1));
      expect(listed.versions.filter((v) => !v.deleted)).toHaveLength(18);
      expect(await pair[1]!.verify(key)).toEqual({ valid: true });
    }, 60_000);
  }
}
