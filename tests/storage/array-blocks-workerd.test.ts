// Audit days in blocks on R2 in workerd (each call made by a worker in Miniflare): the array-block cases,
// with raw access through the bucket binding itself.
import { r2Backend } from "../../src/adapters/cloudflare/r2-store.ts";
import { useWorkerdBindings } from "../helpers/miniflare-bindings.ts";
import { arrayBlockSuite } from "./array-blocks-suite.ts";

const bindings = useWorkerdBindings({ buckets: 16 });

arrayBlockSuite("R2 (workerd)", async () => {
  const bucket = await bindings.bucket();
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
  // Five blocks of 128: each call is a request to a worker in Miniflare, slower than s3rver.
}, { appends: 640, historyWrites: 32 });
