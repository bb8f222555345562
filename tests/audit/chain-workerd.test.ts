import { expect, it } from "vitest";
import { createR2BlobStore } from "../../src/adapters/cloudflare/r2-store.ts";
import type { R2BucketLike } from "../../src/adapters/cloudflare/bindings.ts";
import { readAuditTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { useWorkerdBindings } from "../helpers/miniflare-bindings.ts";
import { SERVICE_STORES, useWorkerd } from "../helpers/workerd-service.ts";
import { auditChainSuite } from "./chain-suite.ts";

// The real workerd's R2 (through a worker in Miniflare that makes each call), one bucket per case.
const bindings = useWorkerdBindings({ buckets: 24 });
const workerd = useWorkerd("fa-chain-workerd-");

// Tampering writes the objects through the bucket binding itself; the second store is another
// isolate's view of the same bucket (appends meet on the objects' ETags). The concurrent case
// runs below, against the audit worker in workerd.
auditChainSuite("R2 (workerd)", async () => {
  const bucket = await bindings.bucket();
  return {
    store: createR2BlobStore(bucket, { arrayBlocks: {} }),
    other: createR2BlobStore(bucket, { arrayBlocks: {} }),
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
}, { concurrent: false });

// 32 writers x 50 appends as POSTs to the audit worker, so R2 is driven inside workerd as in
// production.
// The result is read from the bucket's objects, through the binding, after the writers are done.
it("[R2 (workerd)] 32 writers x 50 concurrent appends through the audit worker: 1600 entries, one gap-free chain that verifies", async () => {
  const worker = await workerd.start({
    scriptPath: await workerd.bundle("audit"),
    ...SERVICE_STORES,
    // Rate limits off: 1,600 appends from one address are the point here.
    bindings: { R2_KEY_SECRET: "r2-key", RATE_LIMITS: "off" },
  });
  const writers = 32;
  const appends = 50;
  const statuses: number[] = [];
  await Promise.all(Array.from({ length: writers }, async (_, writer) => {
    for (let i = 0; i < appends; i++) {
      const body = JSON.stringify(auditEntry({ details: { validationErrors: [], writer, i } }));
      const answer = await worker.dispatchFetch("http://w/audit/?userId=u1", { method: "POST", headers: { "X-Custom-Auth-Key": "r2-key" }, body });
      statuses.push(answer.status);
      await answer.arrayBuffer();
    }
  }));
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
  // Verified inside workerd by the worker itself...
  const verified = await worker.dispatchFetch("http://w/audit/verify?userId=u1", { headers: { "X-Custom-Auth-Key": "r2-key" } });
  expect(await verified.json()).toMatchObject({ valid: true, entries: writers * appends, head: { seq: writers * appends } });
  // ...and from the bucket's objects as stored.
  const bucket = (await worker.getR2Bucket("STRIAE_AUDIT")) as unknown as R2BucketLike;
  // The UTC day may turn during the run: every day the user has.
  const days = (await bucket.list({ prefix: "audit-trails/u1-" })).objects.map((object) => object.key.slice("audit-trails/u1-".length, -".json".length)).sort();
  const input = await readAuditTrail(createR2BlobStore(bucket, { arrayBlocks: {} }), "u1", days);
  const result = await verifyAuditTrail(input);
  expect(result.valid, JSON.stringify(result.firstBad)).toBe(true);
  expect(result.entries).toBe(writers * appends);
  expect(input.days.flatMap((day) => (day.entries as { seq: number }[]).map((entry) => entry.seq))).toEqual(Array.from({ length: writers * appends }, (_, i) => i + 1));
  expect(result.head?.seq).toBe(writers * appends);
}, 600_000);
