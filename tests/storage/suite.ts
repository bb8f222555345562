/**
 * The storage-port suite: every BlobStore backend runs the same cases (ARCHITECTURE,
 * after unstorage's `testDriver`), each asserting that no concurrent append is lost.
 */
import { describe, expect, it } from "vitest";
import type { BlobStore, KvStore } from "../../src/core/ports.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array | null) => (value === null ? null : new TextDecoder().decode(value));

/** Runs the BlobStore cases against `make()` (a fresh, empty store per call). */
export function blobStoreSuite(
  name: string,
  make: () => Promise<BlobStore> | BlobStore,
  options: {
    /** Two stores over one backend, as two processes or isolates would hold them. */
    makePair?: () => Promise<[BlobStore, BlobStore]>;
  } = {},
): void {
  describe(`BlobStore on ${name}`, () => {
    it(`[${name}] put, get, has, delete keep /-separated keys as they are`, async () => {
      const store = await make();
      expect(await store.get("u1/C-1/data.json")).toBeNull();
      expect(await store.has("u1/C-1/data.json")).toBe(false);
      await store.put("u1/C-1/data.json", bytes('{"caseNumber":"C-1","note":"é ✓"}'));
      expect(text(await store.get("u1/C-1/data.json"))).toBe('{"caseNumber":"C-1","note":"é ✓"}');
      expect(await store.has("u1/C-1/data.json")).toBe(true);
      expect(await store.delete("u1/C-1/data.json")).toBe(true);
      expect(await store.delete("u1/C-1/data.json")).toBe(false);
      expect(await store.get("u1/C-1/data.json")).toBeNull();
    });

    it(`[${name}] stores binary bytes exactly`, async () => {
      const store = await make();
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      await store.put("images/bin", all);
      expect(Array.from((await store.get("images/bin"))!)).toEqual(Array.from(all));
    });

    it(`[${name}] lists keys under a folder`, async () => {
      const store = await make();
      for (const key of ["u1/C-1/data.json", "u1/C-1/f1/data.json", "u1/C-2/data.json", "u2/C-1/data.json"]) {
        await store.put(key, bytes("{}"));
      }
      expect(await store.list("u1/")).toEqual(["u1/C-1/data.json", "u1/C-1/f1/data.json", "u1/C-2/data.json"]);
      expect(await store.list("u1/C-1/")).toEqual(["u1/C-1/data.json", "u1/C-1/f1/data.json"]);
      expect(await store.list("u3/")).toEqual([]);
    });

    it(`[${name}] concurrent updates of one key lose nothing`, async () => {
      const store = await make();
      await Promise.all(
        Array.from({ length: 40 }, () =>
          store.update("counter.json", (current) => bytes(String(Number(text(current) ?? "0") + 1)))
        ),
      );
      expect(text(await store.get("counter.json"))).toBe("40");
    }, 60_000);

    it(`[${name}] 8 writers x 16 concurrent appends to one day: 0 lost, counts 1..128 once each`, async () => {
      const store = await make();
      const key = "audit-trails/u1-2026-11-22.json";
      const counts = await Promise.all(
        Array.from({ length: 8 }, (_, writer) =>
          Promise.all(Array.from({ length: 16 }, (_, i) => store.appendToJsonArray(key, { writer, i })))
        ),
      );
      expect(counts.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 128 }, (_, i) => i + 1));
      const items = JSON.parse(text(await store.get(key))!) as { writer: number; i: number }[];
      expect(items).toHaveLength(128);
      expect(new Set(items.map((item) => `${item.writer}:${item.i}`)).size).toBe(128);
    }, 60_000);

    if (options.makePair) {
      const makePair = options.makePair;
      it(`[${name}] appends from two processes' stores over one backend: 0 lost`, async () => {
        const [a, b] = await makePair();
        const key = "audit-trails/u1-2026-11-23.json";
        const counts = await Promise.all(
          Array.from({ length: 64 }, (_, i) => (i % 2 === 0 ? a : b).appendToJsonArray(key, { i })),
        );
        expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
        const items = JSON.parse(text(await a.get(key))!) as { i: number }[];
        expect(items.map((item) => item.i).sort((x, y) => x - y)).toEqual(Array.from({ length: 64 }, (_, i) => i));
      }, 60_000);
    }
  });
}

/** Runs the KvStore cases against `make()`. */
export function kvStoreSuite(name: string, make: () => Promise<KvStore> | KvStore): void {
  describe(`KvStore on ${name}`, () => {
    it(`[${name}] put, get, delete, list`, async () => {
      const store = await make();
      expect(await store.get("u1")).toBeNull();
      await store.put("u1", JSON.stringify({ uid: "u1", firstName: "Zoë" }));
      await store.put("u2", "{}");
      expect(JSON.parse((await store.get("u1"))!)).toEqual({ uid: "u1", firstName: "Zoë" });
      expect(await store.list("")).toEqual(["u1", "u2"]);
      expect(await store.delete("u1")).toBe(true);
      expect(await store.delete("u1")).toBe(false);
      expect(await store.get("u1")).toBeNull();
    });
  });
}
