import { afterAll, expect, it } from "vitest";
import { createDenoKvBlobStore, createDenoKvStore, type DenoKvLike } from "../../src/adapters/deno/kv-blob-store.ts";
import { blobStoreSuite, kvStoreSuite } from "./suite.ts";

// Deno KV in memory (the same engine Deno Deploy runs), one namespace per store.
const deno = (globalThis as unknown as { Deno: { openKv(path?: string): Promise<DenoKvLike & { close(): void }> } }).Deno;
const kv = await deno.openKv(":memory:");
afterAll(() => kv.close());
let n = 0;

blobStoreSuite("Deno KV", () => createDenoKvBlobStore(kv, `s${n++}`), {
  makePair: () => {
    const store = `pair${n++}`;
    return Promise.resolve([createDenoKvBlobStore(kv, store), createDenoKvBlobStore(kv, store)]);
  },
});
kvStoreSuite("Deno KV", () => createDenoKvStore(kv, `kv${n++}`), {
  compareAndSet: true,
  makePair: () => {
    const store = `kvpair${n++}`;
    return Promise.resolve([createDenoKvStore(kv, store), createDenoKvStore(kv, store)]);
  },
});

it("[Deno KV] keeps blobs far larger than one KV value (64 KiB) and one commit (800 KiB)", async () => {
  const store = createDenoKvBlobStore(kv, `big${n++}`);
  const big = Uint8Array.from({ length: 2_500_000 }, (_, i) => (i * 7) % 251);
  await store.put("images/big", big);
  expect((await store.get("images/big"))!).toEqual(big);
  await store.put("images/big", big.slice(0, 100));
  expect((await store.get("images/big"))!.length).toBe(100);
  expect(await store.delete("images/big")).toBe(true);
  let leftovers = 0;
  for await (const _ of kv.list({ prefix: ["fa", `big${n - 1}`] })) leftovers++;
  expect(leftovers).toBe(0);
}, 60_000);

it("[Deno KV] two handles on one database file (two serve processes on one kv.sqlite3): concurrent appends and record updates all answer and lose nothing", async () => {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { expectNoLostRecordUpdates } = await import("./suite.ts");
  const dir = mkdtempSync(join(tmpdir(), "fa-kv-file-"));
  const [first, second] = [await deno.openKv(join(dir, "kv.sqlite3")), await deno.openKv(join(dir, "kv.sqlite3"))];
  try {
    const stores = [createDenoKvBlobStore(first, "audit"), createDenoKvBlobStore(second, "audit")];
    const key = "audit-trails/u1-2026-11-28.json";
    // SQLite answers a writer that finds the file locked by the other handle with "database is locked".
    const counts = await Promise.all(Array.from({ length: 200 }, (_, i) => stores[i % 2]!.appendToJsonArray(key, { i })));
    expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const items = JSON.parse(new TextDecoder().decode((await stores[0]!.get(key))!)) as { i: number }[];
    expect(items.map((item) => item.i).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    await expectNoLostRecordUpdates([createDenoKvStore(first, "users"), createDenoKvStore(second, "users")]);
  } finally {
    first.close();
    second.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
