// Audit days in blocks on R2 in workerd (through Miniflare's bindings): the array-block cases,
// with raw access through the bucket binding itself.
import { afterAll, beforeAll } from "vitest";
import { Miniflare } from "miniflare";
import { r2Backend } from "../../src/adapters/cloudflare/r2-store.ts";
import type { R2BucketLike } from "../../src/adapters/cloudflare/bindings.ts";
import { arrayBlockSuite } from "./array-blocks-suite.ts";

let mf: Miniflare;
let next = 0;
const BUCKETS = Array.from({ length: 16 }, (_, i) => `BUCKET_${i}`);
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

arrayBlockSuite("R2 (workerd)", async () => {
  const bucket = (await mf.getR2Bucket(BUCKETS[next++]!)) as unknown as R2BucketLike;
  const backend = r2Backend(bucket);
  return {
    backend,
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
    keys: async (prefix) => (await backend.list(prefix)).sort(),
  };
  // Five blocks of 128: each call crosses Miniflare's binding proxy, several times slower than s3rver.
}, { appends: 640 });
