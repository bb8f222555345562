import { createR2BlobStore } from "../../src/adapters/cloudflare/r2-store.ts";
import { createKvNamespaceStore } from "../../src/adapters/cloudflare/kv-store.ts";
import { useWorkerdBindings } from "../helpers/miniflare-bindings.ts";
import { blobStoreSuite, kvStoreSuite } from "./suite.ts";

// The real workerd's R2 and KV (each call made by a worker in Miniflare), one bucket per test.
const { bucket, namespace } = useWorkerdBindings({ buckets: 34, namespaces: 3 });

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
  history: false,
});
// Workers KV has no compare-and-swap: user records are lossless within one isolate only.
kvStoreSuite("KV (workerd)", async () => createKvNamespaceStore(await namespace()), { compareAndSet: false });
