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
