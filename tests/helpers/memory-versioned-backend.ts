/**
 * A compare-and-swap backend in memory, as R2, S3, Redis and Deno KV are to
 * `createVersionedBlobStore`: what two service processes over one such store share. `beforePutIf`
 * runs before each conditional write, so a test can land another process's write in between.
 */
import type { VersionedBackend } from "../../src/core/storage/versioned-store.ts";

export function memoryVersionedBackend(hooks: { beforePutIf?: (key: string) => Promise<void> } = {}): VersionedBackend {
  const values = new Map<string, { bytes: Uint8Array; version: string }>();
  let written = 0;
  return {
    get: async (key) => {
      const value = values.get(key);
      return value === undefined ? null : { bytes: value.bytes.slice(), version: value.version };
    },
    put: async (key, bytes) => {
      values.set(key, { bytes: bytes.slice(), version: String(++written) });
    },
    putIf: async (key, bytes, expected) => {
      await hooks.beforePutIf?.(key);
      if ((values.get(key)?.version ?? null) !== expected) return false;
      values.set(key, { bytes: bytes.slice(), version: String(++written) });
      return true;
    },
    delete: async (key) => values.delete(key),
    has: async (key) => values.has(key),
    list: async (prefix) => [...values.keys()].filter((key) => key.startsWith(prefix)),
  };
}
