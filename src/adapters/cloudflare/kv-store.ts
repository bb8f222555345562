/**
 * @module
 * A `KvStore` on a Workers KV binding (the `USER_DB` namespace), keys as they are.
 */
import type { KvStore } from "../../core/ports.ts";
import type { KVNamespaceLike } from "./bindings.ts";

/**
 * A `KvStore` on a KV namespace binding. Workers KV has no compare-and-swap, so there is no
 * `replaceIf`: a user record's read-change-write is serialized within one isolate only.
 */
export function createKvNamespaceStore(namespace: KVNamespaceLike): KvStore {
  return {
    get: (key) => namespace.get(key, "text"),
    put: (key, value) => namespace.put(key, value),
    async delete(key) {
      if ((await namespace.get(key, "text")) === null) return false;
      await namespace.delete(key);
      return true;
    },
    async list(prefix) {
      const keys: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await namespace.list({ prefix, cursor });
        keys.push(...page.keys.map((key) => key.name));
        cursor = page.list_complete ? undefined : page.cursor;
      } while (cursor !== undefined);
      return keys.sort();
    },
  };
}
