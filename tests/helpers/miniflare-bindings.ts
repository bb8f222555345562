import { afterAll, beforeAll } from "vitest";
import { Miniflare } from "miniflare";
import type { KVNamespaceLike, R2BucketLike } from "../../src/adapters/cloudflare/bindings.ts";

/**
 * The real workerd's R2 buckets and KV namespaces (through Miniflare's bindings) for the
 * calling test file: started before its tests, disposed of after them. Each call of `bucket`
 * or `namespace` hands out one not handed out before, so cases share nothing.
 */
export function useWorkerdBindings(counts: { buckets: number; namespaces?: number }): {
  bucket(): Promise<R2BucketLike>;
  namespace(): Promise<KVNamespaceLike>;
} {
  const buckets = Array.from({ length: counts.buckets }, (_, i) => `BUCKET_${i}`);
  const namespaces = Array.from({ length: counts.namespaces ?? 0 }, (_, i) => `KV_${i}`);
  let mf: Miniflare | undefined;
  let nextBucket = 0;
  let nextNamespace = 0;
  beforeAll(async () => {
    mf = new Miniflare({
      modules: true,
      script: "export default { fetch() { return new Response('ok'); } }",
      compatibilityDate: "2026-04-01",
      r2Buckets: buckets,
      kvNamespaces: namespaces,
    });
    await mf.ready;
  }, 60_000);
  afterAll(async () => {
    await mf?.dispose();
  });
  return {
    bucket: async () => (await mf!.getR2Bucket(buckets[nextBucket++]!)) as unknown as R2BucketLike,
    namespace: async () => (await mf!.getKVNamespace(namespaces[nextNamespace++]!)) as unknown as KVNamespaceLike,
  };
}
