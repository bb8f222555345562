import { afterAll, beforeAll } from "vitest";
import { Miniflare } from "miniflare";
import { createR2BlobStore } from "../../src/adapters/cloudflare/r2-store.ts";
import type { R2BucketLike } from "../../src/adapters/cloudflare/bindings.ts";
import { auditChainSuite } from "./chain-suite.ts";

// The real workerd's R2 (through Miniflare's bindings), one bucket per case.
let mf: Miniflare;
let next = 0;
const BUCKETS = Array.from({ length: 12 }, (_, i) => `BUCKET_${i}`);
beforeAll(async () => {
  mf = new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response('ok'); } }",
    compatibilityDate: "2026-04-01",
    r2Buckets: BUCKETS,
  });
  await mf.ready;
}, 60_000);
afterAll(async () => {
  await mf?.dispose();
});

// Tampering writes the objects through the bucket binding itself; the second store is another
// isolate's view of the same bucket (appends meet on the objects' ETags).
// 32 writers x 25 appends: every append rewrites the whole day object, so 800 entries already
// take a minute or more through Miniflare; at 32 x 50, after about 1,100 entries (a day of some
// 500 KB), Miniflare's Node-side proxy of the bucket fails an assertion of its synchronous
// fetcher (a reply for another call) while reading the day, and the run stops there.
auditChainSuite("R2 (workerd)", async () => {
  const bucket = (await mf.getR2Bucket(BUCKETS[next++]!)) as unknown as R2BucketLike;
  return {
    store: createR2BlobStore(bucket),
    other: createR2BlobStore(bucket),
    raw: {
      read: async (key) => {
        const object = await bucket.get(key);
        return object === null ? null : new Uint8Array(await object.arrayBuffer());
      },
      write: async (key, bytes) => {
        await bucket.put(key, bytes);
      },
      remove: async (key) => {
        await bucket.delete(key);
      },
    },
  };
}, { writers: 32, appends: 25 });
