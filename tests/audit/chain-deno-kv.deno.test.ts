import { afterAll } from "vitest";
import { createDenoKvBlobStore, type DenoKvLike } from "../../src/adapters/deno/kv-blob-store.ts";
import { auditChainSuite } from "./chain-suite.ts";

// Deno KV in memory (the engine Deno Deploy runs). Tampering rewrites the KV entries with a
// separate handle on the same namespace, as someone with access to the database would; the
// second store is another isolate's.
const deno = (globalThis as unknown as { Deno: { openKv(path?: string): Promise<DenoKvLike & { close(): void }> } }).Deno;
const kv = await deno.openKv(":memory:");
afterAll(() => kv.close());
let n = 0;

auditChainSuite("Deno KV", () => {
  const name = `chain${n++}`;
  const raw = createDenoKvBlobStore(kv, name);
  return {
    store: createDenoKvBlobStore(kv, name),
    other: createDenoKvBlobStore(kv, name),
    raw: {
      read: (key) => raw.get(key),
      write: (key, bytes) => raw.put(key, bytes),
      remove: async (key) => {
        await raw.delete(key);
      },
    },
  };
}, { writers: 32, appends: 50 });
