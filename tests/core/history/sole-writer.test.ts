/**
 * A store one process holds (files, memory: `BlobStore.soleWriter`) keeps each key's newest
 * version in memory: a history write is one append to the key's log, then the value set
 * straight away, with no head stored. A store other processes write (Redis, S3, Deno KV...)
 * orders writes by the stored head and sets the value under its own compare-and-swap.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import type { BlobStore, Clock } from "../../../src/core/ports.ts";
import { createKeyHistories, historyKeys } from "../../../src/core/history/mod.ts";
import { createBlobStore } from "../../../src/core/storage/unstorage-stores.ts";
import { createMemoryPorts } from "../../../src/core/service/memory-ports.ts";
import { createFileBlobStore, createFilePorts } from "../../../src/adapters/server/files/file-ports.ts";
import { encryptedBlobStore, Keyring } from "../../../src/core/encryption/mod.ts";
import { dataKey } from "../../helpers/encryption.ts";

const dirs: string[] = [];
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "fa-sole-writer-"));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const clock: Clock = { now: () => new Date("2026-12-02T13:00:00.000Z") };
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array | null) => (value === null ? null : new TextDecoder().decode(value));

/** `store` with every call on the data key `key`, its head and its log counted. */
function counted(store: BlobStore, key: string) {
  const calls: string[] = [];
  const { head, log } = historyKeys(key);
  const name = (k: string) => (k === key ? "value" : k === head ? "head" : k === log ? "log" : null);
  const note = (method: string, k: string) => {
    const which = name(k);
    if (which !== null) calls.push(`${method} ${which}`);
  };
  const wrapped: BlobStore = {
    ...store,
    get: (k) => (note("get", k), store.get(k)),
    put: (k, v) => (note("put", k), store.put(k, v)),
    update: (k, change, options) => (note("update", k), store.update(k, change, options)),
    delete: (k) => (note("delete", k), store.delete(k)),
    appendToJsonArray: (k, item, atIndex, options) => (note("append", k), store.appendToJsonArray(k, item, atIndex, options)),
  };
  return { store: wrapped, calls };
}

describe("sole-writer stores", () => {
  it("the files and memory data stores say one process holds them, also sealed at rest; a plain unstorage store does not", async () => {
    expect(createFilePorts(await freshDir()).data.soleWriter).toBeDefined();
    expect(createFileBlobStore(await freshDir()).soleWriter).toBeDefined();
    expect(createMemoryPorts().data.soleWriter).toBeDefined();
    const files = createFileBlobStore(await freshDir());
    const sealed = encryptedBlobStore(files, new Keyring([dataKey("k1")]));
    // The very locks of the store it wraps: histories over either take the same ones.
    expect(sealed.soleWriter).toBe(files.soleWriter);
    // createBlobStore over a driver of unknown reach (Redis, S3, a KV) claims nothing.
    expect(createBlobStore(createStorage()).soleWriter).toBeUndefined();
  });

  it("on a sole-writer store a write is one append to the key's log, then the value put once, with no head read or written", async () => {
    for (const make of [async () => createFileBlobStore(await freshDir(), { historyHeads: true }), async () => createMemoryPorts().data]) {
      const key = "u1/C-1/data.json";
      const { store, calls } = counted(await make(), key);
      const histories = createKeyHistories(store, { clock });
      await histories.write(key, bytes('{"a":1}'), "u1");
      calls.length = 0;
      await histories.write(key, bytes('{"a":2}'), "u1");
      expect(calls).toEqual(["append log", "put value"]);
      expect(text(await store.get(key))).toBe('{"a":2}');
      calls.length = 0;
      await histories.remove(key, "u1");
      expect(calls).toEqual(["append log", "delete value"]);
      expect(await store.get(key)).toBeNull();
      expect(await store.has(historyKeys(key).head)).toBe(false);
      expect(await histories.verify(key)).toEqual({ valid: true });
      // Another history over the store (a new process's would read the log) sees the same newest version.
      expect((await createKeyHistories(store, { clock }).list(key))?.current).toBeNull();
      expect((await createKeyHistories(store, { clock }).list(key))?.versions.map((version) => version.deleted)).toEqual([false, false, true]);
    }
  });

  it("a sole-writer store tells every put, update and delete of a key, not an append, also through a store sealing it at rest", async () => {
    const files = createFileBlobStore(await freshDir(), { historyHeads: true });
    const { head, log } = historyKeys("u1/C-1/data.json");
    const told: string[] = [];
    files.soleWriter!.onWrite((key) => told.push(key));
    const sealed = encryptedBlobStore(files, new Keyring([dataKey("k1")]));
    for (const write of [() => sealed.put(head, bytes("a")), () => files.update(head, () => bytes("b"), { inPlace: true }), () => files.put(head, bytes("c")), () => files.delete(head)]) {
      const before = told.length;
      await write();
      // As the write starts and as it ends.
      expect(told.slice(before)).toEqual([head, head]);
    }
    const before = told.length;
    await files.appendToJsonArray(log, { a: 1 });
    await sealed.appendToJsonArray(log, { a: 2 });
    expect(told.slice(before)).toEqual([]);
  });

  it("on a store other processes may write, the value is set under its own compare-and-swap with the head read inside it", async () => {
    const key = "u1/C-1/data.json";
    const { store, calls } = counted(createBlobStore(createStorage()), key);
    const histories = createKeyHistories(store, { clock });
    await histories.write(key, bytes('{"a":1}'), "u1");
    calls.length = 0;
    await histories.write(key, bytes('{"a":2}'), "u1");
    expect(calls).toEqual(["update head", "append log", "update value", "get head"]);
    expect(text(await store.get(key))).toBe('{"a":2}');
  });

  it("two histories over one sole-writer store (a service and a data worker mounted beside it): a write of one never undoes the other's newer one", async () => {
    for (const make of [async () => createFileBlobStore(await freshDir(), { historyHeads: true }), async () => createBlobStore(createStorage(), { soleWriter: true })]) {
      const key = "u3/C-1/data.json";
      const store = await make();
      const other = createKeyHistories(new Proxy(store, {}), { clock }); // as the service wraps its ports
      await other.write(key, bytes('{"i":1}'), "u3");
      // The first history's write stops after its append, while the other history writes the key.
      let racing: Promise<unknown> | undefined;
      const paused: BlobStore = {
        ...store,
        appendToJsonArray: async (k, item, atIndex, options) => {
          const count = await store.appendToJsonArray(k, item, atIndex, options);
          if (racing === undefined && k === historyKeys(key).log && atIndex === 1) {
            racing = other.write(key, bytes('{"i":3}'), "u3");
            // Long enough for the other write to finish, unless it waits for this one.
            await Promise.race([racing, new Promise((resolve) => setTimeout(resolve, 200))]);
          }
          return count;
        },
      };
      const mine = await createKeyHistories(paused, { clock }).write(key, bytes('{"i":2}'), "u3");
      const theirs = (await racing) as { version: number };
      const newest = Math.max(mine.version, theirs.version);
      expect([mine.version, theirs.version].sort()).toEqual([2, 3]);
      expect(text(await store.get(key))).toBe(text(await other.read(key, newest)));
      expect(await other.verify(key)).toEqual({ valid: true });
    }
  });

  it.each(["update", "put"] as const)("a log replaced between a write's append and its value (a restore, by %s) is what the value becomes, never the write's own bytes", async (how) => {
    const key = "u4/C-1/data.json";
    const inner = createFileBlobStore(await freshDir(), { historyHeads: true });
    const histories = createKeyHistories(inner, { clock });
    await histories.write(key, bytes('{"restored":true}'), "u4");
    const restoredLog = (await inner.get(historyKeys(key).log))!;
    await histories.write(key, bytes('{"before":1}'), "u4");
    // The next write's append: a restore puts the earlier log (and its value) back meanwhile.
    let restored = false;
    const store: BlobStore = {
      ...inner,
      appendToJsonArray: async (k, item, atIndex, options) => {
        const count = await inner.appendToJsonArray(k, item, atIndex, options);
        if (!restored && k === historyKeys(key).log && atIndex === 2) {
          restored = true;
          if (how === "update") await inner.update(historyKeys(key).log, () => restoredLog);
          else await inner.put(historyKeys(key).log, restoredLog);
          await inner.put(key, bytes('{"restored":true}'));
        }
        return count;
      },
    };
    await createKeyHistories(store, { clock }).write(key, bytes('{"racing":3}'), "u4");
    expect(restored).toBe(true);
    // The value is what the (restored) log names: served as current, not refused as an older version.
    expect(text(await inner.get(key))).toBe('{"restored":true}');
    expect(text(await histories.readCurrent(key))).toBe('{"restored":true}');
    // The next write follows the restored history.
    expect((await histories.write(key, bytes('{"after":2}'), "u4")).version).toBe(2);
    expect(await histories.verify(key)).toEqual({ valid: true });
  });

  it("a log whose last item was edited by hand is not built on: a write answers an integrity failure naming the version, as verify does, and changes nothing", async () => {
    const key = "u6/C-1/data.json";
    const store = createFileBlobStore(await freshDir(), { historyHeads: true });
    const histories = createKeyHistories(store, { clock });
    await histories.write(key, bytes('{"n":1}'), "u6");
    await histories.write(key, bytes('{"n":2}'), "u6");
    const log = text(await store.get(historyKeys(key).log))!;
    await store.put(historyKeys(key).log, bytes(log.replace('"version":2', '"version":7')));
    await expect(histories.write(key, bytes('{"n":3}'), "u6")).rejects.toMatchObject({ kind: "integrity-failed", details: { key, version: 2 } });
    expect(await histories.verify(key)).toMatchObject({ valid: false, firstBadVersion: 2 });
    expect(text(await store.get(key))).toBe('{"n":2}');
    expect(text(await store.get(historyKeys(key).log))).toBe(log.replace('"version":2', '"version":7'));
  });

  it("many writes of one key at once on a sole-writer store: every one a version, the value the newest", async () => {
    const key = "u2/C-1/data.json";
    const store = createFileBlobStore(await freshDir(), { historyHeads: true });
    const histories = createKeyHistories(store, { clock });
    const done = await Promise.all(Array.from({ length: 40 }, (_, i) => histories.write(key, bytes(`{"i":${i}}`), "u2")));
    expect(done.map((record) => record.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const newest = done.find((record) => record.version === 40)!;
    const listed = (await histories.list(key))!;
    expect(listed.current).toBe(40);
    expect(text(await store.get(key))).toBe(text(await histories.read(key, 40)));
    expect(listed.versions.at(-1)?.sha256).toBe(newest.sha256);
    expect(await histories.verify(key)).toEqual({ valid: true });
  });
});
