import { afterAll, beforeAll } from "vitest";
import { Miniflare } from "miniflare";
import { createR2BlobStore } from "../../src/adapters/cloudflare/r2-store.ts";
import { createKvNamespaceStore } from "../../src/adapters/cloudflare/kv-store.ts";
import type { KVNamespaceLike, R2BucketLike } from "../../src/adapters/cloudflare/bindings.ts";
import { blobStoreSuite, kvStoreSuite } from "./suite.ts";

// The real workerd's R2 and KV (through Miniflare's bindings), one bucket per test.
let mf: Miniflare;
let next = 0;
const BUCKETS = Array.from({ length: 24 }, (_, i) => `BUCKET_${i}`);
const NAMESPACES = Array.from({ length: 2 }, (_, i) => `KV_${i}`);
beforeAll(async () => {
  mf = new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response('ok'); } }",
    compatibilityDate: "2026-04-01",
    r2Buckets: BUCKETS,
    kvNamespaces: NAMESPACES,
  });
  await mf.ready;
}, 60_000);
afterAll(async () => {
  await mf?.dispose();
});

const bucket = async () => (await mf.getR2Bucket(BUCKETS[next++]!)) as unknown as R2BucketLike;
blobStoreSuite("R2 (workerd)", async () => createR2BlobStore(await bucket()), {
  makePair: async () => {
    const shared = await bucket();
    return [createR2BlobStore(shared), createR2BlobStore(shared)];
  },
});
// The audit bucket's form: JSON arrays in blocks (of 3 items here, so every append case crosses blocks).
blobStoreSuite("R2 (workerd), arrays in blocks of 3", async () => createR2BlobStore(await bucket(), { arrayBlocks: { items: 3 } }), {
  makePair: async () => {
    const shared = await bucket();
    return [createR2BlobStore(shared, { arrayBlocks: { items: 3 } }), createR2BlobStore(shared, { arrayBlocks: { items: 3 } })];
  },
});
let kv = 0;
kvStoreSuite("KV (workerd)", async () => createKvNamespaceStore((await mf.getKVNamespace(NAMESPACES[kv++]!)) as unknown as KVNamespaceLike));
