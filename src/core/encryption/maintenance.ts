/**
 * @module
 * The `keys` commands' work, over the stores as they are (unwrapped): `rotate` re-wraps every
 * data key under the keyring's current key without touching a body; `encrypt-all` seals every
 * object still stored as plaintext. Both go key by key in sorted order and skip what is
 * already done, so a run that stopped is resumed by running it again; each change is a
 * compare-and-swap `update` of the store, so a write by a running service is never lost.
 */
import type { BlobStore, Bytes, KvStore } from "../ports.ts";
import type { Keyring } from "./keyring.ts";
import { sameBytes } from "../encoding/same-bytes.ts";
import { CONFLICT, retryOnConflict } from "../storage/conflict-retry.ts";
import { markAllSealed } from "./canary.ts";
import { isSealed, openRecord, openValue, rewrapRecord, rewrapValue, sealRecord, sealValue, SEALED_RECORD_PREFIX } from "./stored-value.ts";

/** The stores a maintenance run goes through. */
export interface MaintainedStores {
  /** Blob stores by name; `appendLog` for the audit store (see `SealOptions`). */
  blobs: readonly { name: string; store: BlobStore; appendLog?: boolean }[];
  /** KV stores by name. */
  kvs: readonly { name: string; store: KvStore }[];
}

/** Where a run is: objects looked at out of the total, and how many were changed. */
export interface MaintenanceProgress {
  /** Objects looked at so far. */
  done: number;
  /** Objects in every store at the start. */
  total: number;
  /** Objects written so far. */
  changed: number;
  /** The store and key just looked at. */
  current: string;
}

/** Thrown inside an `update` to leave the object as it is. */
class Unchanged extends Error {}

/** Replaces a blob's value when `change` has one; false when it was absent or needed nothing. */
async function changeBlob(store: BlobStore, key: string, change: (current: Bytes) => Promise<Uint8Array | null>): Promise<boolean> {
  const current = await store.get(key);
  if (current === null || (await change(current)) === null) return false;
  try {
    await store.update(key, async (latest) => {
      const next = latest === null ? null : await change(latest);
      if (next === null) throw new Unchanged();
      return next;
    });
    return true;
  } catch (err) {
    if (err instanceof Unchanged) return false;
    throw err;
  }
}

/** Compare-and-set attempts on one record before the command gives up (as the stores' updates). */
const MAX_RECORD_ATTEMPTS = 50;

/**
 * Replaces a record's value when `change` has one; false when it was absent or needed nothing.
 * With a compare-and-set (Redis, S3, Deno KV, files, memory), a record `serve` wrote meanwhile
 * is read again and changed; Workers KV has none, so there one written meanwhile is left as
 * written (the second read narrows the gap, it cannot close it).
 */
function changeRecord(store: KvStore, key: string, change: (current: string) => Promise<string | null>): Promise<boolean> {
  return retryOnConflict(key, MAX_RECORD_ATTEMPTS, async () => {
    const current = await store.get(key);
    const next = current === null ? null : await change(current);
    if (next === null) return false;
    if (store.replaceIf === undefined) {
      if ((await store.get(key)) !== current) return false;
      await store.put(key, next);
      return true;
    }
    return (await store.replaceIf(key, current, next)) ? true : CONFLICT;
  });
}

async function run(
  stores: MaintainedStores,
  blob: (key: string, current: Bytes, appendLog: boolean) => Promise<Uint8Array | null>,
  record: (key: string, current: string) => Promise<string | null>,
  progress: (state: MaintenanceProgress) => void,
): Promise<MaintenanceProgress> {
  const blobKeys = await Promise.all(stores.blobs.map(async (entry) => ({ ...entry, keys: await entry.store.list("") })));
  const kvKeys = await Promise.all(stores.kvs.map(async (entry) => ({ ...entry, keys: await entry.store.list("") })));
  const state: MaintenanceProgress = {
    done: 0,
    total: [...blobKeys, ...kvKeys].reduce((sum, entry) => sum + entry.keys.length, 0),
    changed: 0,
    current: "",
  };
  for (const { name, store, keys, appendLog } of blobKeys) {
    for (const key of keys) {
      if (await changeBlob(store, key, (current) => blob(key, current, appendLog ?? false))) state.changed++;
      state.done++;
      state.current = `${name}:${key}`;
      progress(state);
    }
  }
  for (const { name, store, keys } of kvKeys) {
    for (const key of keys) {
      if (await changeRecord(store, key, (current) => record(key, current))) state.changed++;
      state.done++;
      state.current = `${name}:${key}`;
      progress(state);
    }
  }
  return state;
}

/** Re-wraps every data key under `keyring.currentKid`; bodies are not re-encrypted. */
export function rotateKeys(stores: MaintainedStores, keyring: Keyring, progress: (state: MaintenanceProgress) => void = () => {}): Promise<MaintenanceProgress> {
  return run(stores, (key, current) => rewrapValue(keyring, key, current), (key, current) => rewrapRecord(keyring, key, current), progress);
}

/**
 * Seals every object and record still stored as plaintext (partly sealed audit days included),
 * then marks each store as holding only sealed values (canary.ts), so that plaintext written
 * into it afterwards is refused.
 */
export async function encryptAll(stores: MaintainedStores, keyring: Keyring, progress: (state: MaintenanceProgress) => void = () => {}): Promise<MaintenanceProgress> {
  const done = await run(
    stores,
    async (key, current, appendLog) => {
      if (isSealed(current)) return null;
      const sealed = await sealValue(keyring, key, await openValue(keyring, key, current), { appendLog });
      return sameBytes(sealed, current) ? null : sealed;
    },
    async (key, current) => (current.startsWith(SEALED_RECORD_PREFIX) ? null : sealRecord(keyring, key, await openRecord(keyring, key, current))),
    progress,
  );
  await markAllSealed(stores, keyring);
  return done;
}
