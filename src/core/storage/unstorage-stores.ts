/**
 * @module
 * `BlobStore` and `KvStore` over any unstorage `Storage`. Drivers do raw reads and writes
 * only; this layer owns keys (`/` outside, `:` inside unstorage), per-key serialization and
 * the lossless JSON-array append. A backend with a faster or cross-process append (files
 * in place, Redis transactions, R2 conditional writes) passes its own `appendToJsonArray`.
 */
import type { BlobStore, Bytes, KvStore } from "../ports.ts";
import { KeyedMutex } from "./keyed-mutex.ts";
import { markedWrite, SoleWriterLocks } from "./sole-writer-locks.ts";
import { encodeJsonArray, parseJsonArray } from "./json-array.ts";
import { GrowingJsonArray } from "./growing-array.ts";
import { joinStream } from "./byte-stream.ts";

/**
 * What these stores use of unstorage's `Storage` (from `createStorage()`, any driver). Our
 * own declaration, so that the published types do not pull in unstorage's, whose driver
 * declarations need packages a consumer does not have (type errors without `skipLibCheck`).
 * @ignore
 */
interface Storage {
  /** The value as the driver keeps it: bytes, a string, or what its JSON layer made of them. */
  getItemRaw(key: string): Promise<unknown>;
  /** Stores the bytes under the key. */
  setItemRaw(key: string, value: Uint8Array): Promise<void>;
  /** True when the key holds a value. */
  hasItem(key: string): Promise<boolean>;
  /** Removes the key. */
  removeItem(key: string): Promise<void>;
  /** Every key under the base (unstorage's `:`-separated keys). */
  getKeys(base?: string): Promise<string[]>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** unstorage separates with `:`; our segments never contain one, so the mapping is exact. */
const toStorageKey = (key: string): string => key.replaceAll("/", ":");
const fromStorageKey = (key: string): string => key.replaceAll(":", "/");

/** Normalizes whatever a driver returns for a raw read into bytes. */
export function toBytes(value: unknown): Bytes | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array) {
    return value.buffer instanceof ArrayBuffer
      ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
      : new Uint8Array(value);
  }
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typeof value === "string") return encoder.encode(value);
  // A driver without raw support hands back what its JSON layer made of the bytes.
  return encoder.encode(JSON.stringify(value));
}

/** Options of {@link createBlobStore}. */
export interface BlobStoreOptions {
  /**
   * A backend's own append, called under this process's per-key lock. Returns the item
   * count after the append. Without it, append is read-modify-write under that lock,
   * lossless within one process; on a driver that keeps the very bytes it is given
   * (unstorage's memory driver, found out on the first append) it grows the array in place
   * instead, so an append costs the same however long the array is.
   */
  appendToJsonArray?: BlobStore["appendToJsonArray"];
  /**
   * A backend's own streaming write (files: a temporary file renamed into place), called
   * under the per-key lock. Without it, `putStream` joins the stream and writes it whole.
   */
  putStream?: (key: string, size: number, body: ReadableStream<Uint8Array>) => Promise<void>;
  /** One process holds the storage (memory, a data folder under its lock): the store gets its {@link BlobStore.soleWriter} locks. */
  soleWriter?: boolean;
}

// Arrays this process grows in place, per store; past this many keys the oldest is dropped (and reread once).
const MAX_GROWING = 10_000;

/** A `BlobStore` over an unstorage `Storage`. */
export function createBlobStore(storage: Storage, options: BlobStoreOptions = {}): BlobStore {
  const mutex = new KeyedMutex();
  // Whether the driver hands back the very bytes it was given: unknown until the first append.
  let keepsBytes: boolean | undefined;
  const growing = new Map<string, GrowingJsonArray>();

  const raw = (key: string): Promise<unknown> => storage.getItemRaw(toStorageKey(key));
  const get = async (key: string): Promise<Bytes | null> => {
    const value = await raw(key);
    // An array grown in place is overwritten at its tail by the next append: readers get a copy.
    if (value !== null && value === growing.get(key)?.view) return (value as Bytes).slice();
    return toBytes(value);
  };
  const put = async (key: string, value: Uint8Array): Promise<void> => {
    growing.delete(key);
    await storage.setItemRaw(toStorageKey(key), value);
  };
  const has = (key: string): Promise<boolean> => storage.hasItem(toStorageKey(key));

  /** The append without a backend's own: in place where the driver keeps our bytes, else read-modify-write. */
  async function appendHere(key: string, item: unknown, atIndex: number | undefined, skipped?: () => void): Promise<number> {
    const current = await raw(key);
    let array = growing.get(key);
    if (array === undefined || current !== array.view) {
      growing.delete(key);
      const bytes = toBytes(current);
      const items = bytes === null ? [] : parseJsonArray(bytes).items;
      if (atIndex !== undefined && items.length > atIndex) {
        skipped?.();
        return items.length;
      }
      items.push(item);
      if (keepsBytes === false) {
        await storage.setItemRaw(toStorageKey(key), encodeJsonArray(items));
        return items.length;
      }
      array = new GrowingJsonArray(items);
      await storage.setItemRaw(toStorageKey(key), array.view);
      keepsBytes ??= (await raw(key)) === array.view;
      if (keepsBytes) remember(key, array);
      return array.count;
    }
    // Appended before (by this writer or another one finishing its work): nothing to write.
    if (atIndex !== undefined && array.count > atIndex) {
      skipped?.();
      return array.count;
    }
    await storage.setItemRaw(toStorageKey(key), array.append(item));
    remember(key, array);
    return array.count;
  }

  function remember(key: string, array: GrowingJsonArray): void {
    growing.delete(key);
    growing.set(key, array);
    if (growing.size > MAX_GROWING) growing.delete(growing.keys().next().value ?? key);
  }

  const soleWriter = options.soleWriter === true ? new SoleWriterLocks() : undefined;
  // Each write that replaces or deletes a value marked on the sole-writer locks (a history checks its head was not written since).
  const write = <T>(key: string, task: () => Promise<T>): Promise<T> => mutex.run(key, () => markedWrite(soleWriter, key, task));
  const store: BlobStore = {
    ...(soleWriter === undefined ? {} : { soleWriter }),
    get,
    put: (key, value) => write(key, () => put(key, value)),
    putStream: (key, size, body) =>
      write(key, async () => (options.putStream ? options.putStream(key, size, body) : put(key, await joinStream(body, size)))),
    has,
    delete: (key) =>
      write(key, async () => {
        growing.delete(key);
        if (!(await has(key))) return false;
        await storage.removeItem(toStorageKey(key));
        return true;
      }),
    async list(prefix) {
      const keys = await storage.getKeys(toStorageKey(prefix.replace(/\/$/, "")));
      return keys.map(fromStorageKey).filter((key) => key.startsWith(prefix)).sort();
    },
    update: (key, change) =>
      write(key, async () => {
        const next = await change(await get(key));
        await put(key, next);
        return next;
      }),
    appendToJsonArray: (key, item, atIndex, appendOptions) =>
      mutex.run(key, () => options.appendToJsonArray ? options.appendToJsonArray(key, item, atIndex, appendOptions) : appendHere(key, item, atIndex, appendOptions?.skipped)),
  };
  return store;
}

/** A `KvStore` over an unstorage `Storage` (values are UTF-8 strings). */
export function createKvStore(storage: Storage): KvStore {
  const mutex = new KeyedMutex();
  const get = async (key: string): Promise<string | null> => {
    const bytes = toBytes(await storage.getItemRaw(toStorageKey(key)));
    return bytes === null ? null : decoder.decode(bytes);
  };
  return {
    get,
    put: (key, value) => mutex.run(key, () => storage.setItemRaw(toStorageKey(key), encoder.encode(value))),
    // unstorage has no compare-and-swap: compared and written under the key's lock, atomic
    // within this process, which is all memory and files need (one process holds a data folder).
    replaceIf: (key, expected, value) =>
      mutex.run(key, async () => {
        if ((await get(key)) !== expected) return false;
        await storage.setItemRaw(toStorageKey(key), encoder.encode(value));
        return true;
      }),
    delete: (key) =>
      mutex.run(key, async () => {
        if (!(await storage.hasItem(toStorageKey(key)))) return false;
        await storage.removeItem(toStorageKey(key));
        return true;
      }),
    async list(prefix) {
      const keys = await storage.getKeys();
      return keys.map(fromStorageKey).filter((key) => key.startsWith(prefix)).sort();
    },
  };
}
