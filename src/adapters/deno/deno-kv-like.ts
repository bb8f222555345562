/**
 * @module
 * The parts of `Deno.Kv` the Deno KV stores use, typed here so that the stores type-check
 * without Deno's own types.
 */

/** The parts of `Deno.Kv` the stores use (so they type-check without Deno's types). */
export interface DenoKvLike {
  /** The entry at a key with its versionstamp (both null when absent). */
  get<T = unknown>(key: KvKey): Promise<{ value: T | null; versionstamp: string | null }>;
  /** Writes an entry. */
  set(key: KvKey, value: unknown): Promise<unknown>;
  /** Removes an entry. */
  delete(key: KvKey): Promise<void>;
  /** The entries under a key prefix. */
  list<T = unknown>(selector: { prefix: KvKey }): AsyncIterable<{ key: KvKey; value: T }>;
  /** An atomic operation: versionstamp checks, then sets and deletes committed together. */
  atomic(): {
    check(...checks: { key: KvKey; versionstamp: string | null }[]): ReturnType<DenoKvLike["atomic"]>;
    set(key: KvKey, value: unknown): ReturnType<DenoKvLike["atomic"]>;
    delete(key: KvKey): ReturnType<DenoKvLike["atomic"]>;
    commit(): Promise<{ ok: boolean }>;
  };
}

/** A Deno KV key. */
export type KvKey = readonly (string | number | bigint | boolean | Uint8Array)[];
