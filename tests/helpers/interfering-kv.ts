import type { KvStore } from "../../src/core/ports.ts";

/**
 * `inner` with another process's write (`meanwhile`) landing just before its first
 * compare-and-set: between a caller's read and its write, the case a compare-and-set is for.
 */
export function writeBeforeFirstCompareAndSet(inner: KvStore, meanwhile: (inner: KvStore, key: string) => Promise<void>): KvStore {
  let interfered = false;
  return {
    ...inner,
    replaceIf: async (key, expected, value) => {
      if (!interfered) {
        interfered = true;
        await meanwhile(inner, key);
      }
      return await inner.replaceIf!(key, expected, value);
    },
  };
}
