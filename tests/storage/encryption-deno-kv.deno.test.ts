import { afterAll, describe } from "vitest";
import { createDenoKvBlobStore, createDenoKvStore, type DenoKvLike } from "../../src/adapters/deno/kv-blob-store.ts";
import { systemClock } from "../../src/core/ports.ts";
import { encryptionSuite } from "./encryption-suite.ts";

// Deno KV in memory (the engine Deno Deploy runs); every value under the "fa" prefix is what it stores.
const deno = (globalThis as unknown as { Deno: { openKv(path?: string): Promise<DenoKvLike & { close(): void }> } }).Deno;
const kv = await deno.openKv(":memory:");
afterAll(() => kv.close());
let n = 0;

/** Every value Deno KV holds for stores whose names start with `prefix` (chunks, records, versions). */
async function valuesOf(names: readonly string[]): Promise<Uint8Array[]> {
  const values: Uint8Array[] = [];
  for (const name of names) {
    for await (const entry of kv.list({ prefix: ["fa", name] })) {
      const value = entry.value;
      if (value instanceof Uint8Array) values.push(value);
      else values.push(new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value)));
    }
  }
  return values;
}

describe("encryption at rest on Deno KV", () => {
  const names = new WeakMap<object, string[]>();
  encryptionSuite("Deno KV", {
    ports: async () => {
      const id = n++;
      const stores = [`d${id}`, `a${id}`, `i${id}`, `u${id}`];
      const ports = {
        data: createDenoKvBlobStore(kv, stores[0]!),
        audit: createDenoKvBlobStore(kv, stores[1]!),
        images: createDenoKvBlobStore(kv, stores[2]!),
        users: createDenoKvStore(kv, stores[3]!),
        clock: systemClock,
      };
      names.set(ports.data, stores);
      return ports;
    },
    dump: (ports) => valuesOf(names.get(ports.data)!),
  });
});
