/**
 * @module
 * The canary: one known object each encrypted store holds, checked when the service starts, so
 * a missing or wrong `DATA_ENCRYPTION_KEYS` stops the start with the reason instead of
 * failing request by request. Written on the first start with encryption on.
 */
import type { BlobStore, KvStore } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import { isEnvelope, open, seal } from "./envelope.ts";
import type { Keyring } from "./keyring.ts";
import { BLOB_CANARY_KEY, KV_CANARY_KEY } from "./encrypted-stores.ts";
import { openRecord, SEALED_RECORD_PREFIX, sealRecord } from "./stored-value.ts";

const CANARY_TEXT = "forensic-annotation encryption canary";
/**
 * The canary's text once `keys encrypt-all` has sealed everything its store held: from then on
 * the service writes only sealed values there, so a plaintext one is refused (`Keyring.sealedStores`).
 */
const SEALED_CANARY_TEXT = `${CANARY_TEXT}; every object sealed`;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Why a store cannot be served with the configured keys (thrown by the canary checks). */
export class CanaryError extends Error {
  /** Names the store and the reason. */
  constructor(message: string) {
    super(message);
    this.name = "CanaryError";
  }
}

const reasonOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Options of the canary checks. */
export interface CanaryOptions {
  /** Write a missing canary (the first encrypted start); false for a process that only reads. Default true. */
  writeMissing?: boolean;
}

/** How one kind of store keeps its canary: where, how it is sealed and opened, and how a sealed one looks. */
interface CanaryForm<V> {
  key: string;
  what: "objects" | "records";
  isSealed(stored: V): boolean;
  seal(keyring: Keyring, text: string): Promise<V>;
  open(keyring: Keyring, stored: V): Promise<string>;
}

const BLOB_CANARY: CanaryForm<Uint8Array> = {
  key: BLOB_CANARY_KEY,
  what: "objects",
  isSealed: isEnvelope,
  seal: (keyring, text) => seal(keyring, "object", BLOB_CANARY_KEY, encoder.encode(text)),
  open: async (keyring, stored) => decoder.decode(await open(keyring, "object", BLOB_CANARY_KEY, stored)),
};

const KV_CANARY: CanaryForm<string> = {
  key: KV_CANARY_KEY,
  what: "records",
  isSealed: (stored) => stored.startsWith(SEALED_RECORD_PREFIX),
  seal: (keyring, text) => sealRecord(keyring, KV_CANARY_KEY, text),
  open: (keyring, stored) => {
    if (!stored.startsWith(SEALED_RECORD_PREFIX)) throw ServiceError.integrity("the canary is not sealed");
    return openRecord(keyring, KV_CANARY_KEY, stored);
  },
};

async function checkCanary<V>(
  store: { get(key: string): Promise<V | null>; put(key: string, value: V): Promise<unknown> },
  form: CanaryForm<V>,
  keyring: Keyring | undefined,
  name: string,
  options: CanaryOptions,
): Promise<void> {
  const stored = await store.get(form.key);
  if (keyring === undefined) {
    if (stored !== null && form.isSealed(stored)) {
      throw new CanaryError(`the ${name} store holds encrypted ${form.what} (its canary ${form.key} is sealed), but DATA_ENCRYPTION_KEYS is not set`);
    }
    return;
  }
  if (stored === null) {
    if (options.writeMissing !== false) await store.put(form.key, await form.seal(keyring, CANARY_TEXT));
    return;
  }
  let text: string;
  try {
    text = await form.open(keyring, stored);
  } catch (err) {
    throw new CanaryError(`cannot open the canary of the ${name} store: ${reasonOf(err)}`);
  }
  if (text === SEALED_CANARY_TEXT) keyring.sealedStores.add(name);
  else if (text !== CANARY_TEXT) throw new CanaryError(`the canary of the ${name} store does not hold the canary text`);
}

/**
 * Marks every store of `stores` as holding only sealed values (their canaries rewritten under the
 * current key), once `keys encrypt-all` has sealed all they held: a plaintext value found there
 * afterwards is refused by a service that checks these canaries at start.
 */
export async function markAllSealed(stores: { blobs: readonly { store: BlobStore }[]; kvs: readonly { store: KvStore }[] }, keyring: Keyring): Promise<void> {
  for (const { store } of stores.blobs) await store.put(BLOB_CANARY.key, await BLOB_CANARY.seal(keyring, SEALED_CANARY_TEXT));
  for (const { store } of stores.kvs) await store.put(KV_CANARY.key, await KV_CANARY.seal(keyring, SEALED_CANARY_TEXT));
}

/** Checks (or, on its first encrypted start, writes) the canary of the blob store `name` (the *unwrapped* store). */
export function checkBlobCanary(store: BlobStore, keyring: Keyring | undefined, name: string, options: CanaryOptions = {}): Promise<void> {
  return checkCanary(store, BLOB_CANARY, keyring, name, options);
}

/** Checks (or writes) the canary of a KV store (the *unwrapped* store). */
export function checkKvCanary(store: KvStore, keyring: Keyring | undefined, name: string, options: CanaryOptions = {}): Promise<void> {
  return checkCanary(store, KV_CANARY, keyring, name, options);
}
