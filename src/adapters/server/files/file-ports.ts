/**
 * @module
 * The embedded default: every store is a folder of files under the data directory
 * (docs/storage.md): `data/`, `audit/`, `users/`, `images/`, and the mail `outbox/`.
 */
import { join } from "node:path";
import { createStorage } from "unstorage";
import { createBlobStore, createKvStore } from "../../../core/storage/unstorage-stores.ts";
import { systemClock } from "../../../core/ports.ts";
import type { BlobStore } from "../../../core/ports.ts";
import type { ServicePorts } from "../../../core/service/service.ts";
import type { ServiceConfig } from "../../../core/config/mod.ts";
import { atomicFileDriver, documentFiles, type FileDriver } from "./file-driver.ts";
import { piecesInto } from "../../../core/storage/byte-stream.ts";
import { markedWrite } from "../../../core/storage/sole-writer-locks.ts";
import { createDeferringJsonArrayAppend, createFileJsonArraySync } from "./file-append.ts";
import { headFiles, isHeadKey } from "./file-head.ts";
import { HISTORY_ROOT } from "../../../core/history/mod.ts";
import { DeferredSyncs } from "./deferred-syncs.ts";

/** What the stores call of an unstorage `Storage`. */
type Storage = ReturnType<typeof createStorage>;

/**
 * A key unstorage's `normalizeKey` leaves as it is: no empty segment, no `?`, no `/` or `\`.
 * Any other key takes unstorage's way, so it is normalised exactly as before.
 */
const PLAIN_KEY = /^[^:?/\\]+(?::[^:?/\\]+)*$/;
/** A blob store key (`/`-separated) that becomes a {@link PLAIN_KEY} (and has no `:` of its own). */
const PLAIN_PATH = /^[^:?/\\]+(?:\/[^:?/\\]+)*$/;

/**
 * `storage` with reads and writes of plain keys sent straight to its one driver, as unstorage
 * would send them (same key, root mount, no watcher), without its key normalisation and mount
 * lookup on every request. Everything else goes through unstorage.
 */
function direct(storage: Storage, driver: FileDriver): Storage {
  return Object.assign(Object.create(storage) as Storage, {
    // Both return a promise and never throw: the read's own promise is passed on as it is.
    getItemRaw: (key: string, options?: object) => (PLAIN_KEY.test(key) ? driver.getItemRaw(key) : storage.getItemRaw(key, options)),
    setItemRaw: async (key: string, value: Uint8Array, options?: object) =>
      await (PLAIN_KEY.test(key) ? driver.setItemRaw(key, value) : storage.setItemRaw(key, value, options)),
  });
}

/** An unstorage `Storage` over the atomic file driver, reads and writes of plain keys direct. */
function fileStorage(base: string, sync: boolean): Storage {
  const driver = atomicFileDriver({ base, sync });
  return direct(createStorage({ driver }), driver);
}

/** Options of {@link createFileBlobStore}. */
export interface FileBlobStoreOptions {
  /** Every write and append (file and folder) is fsynced before it resolves. Default false. */
  sync?: boolean;
  /**
   * Keys under `audit-heads/` are kept as slotted head files (file-head.ts): for the audit
   * store only, which rewrites its heads on every append. Default false: those keys are plain files.
   */
  auditHeads?: boolean;
  /**
   * The heads of record histories (`#history/{key}/head`, rewritten by every write of the key)
   * are kept as slotted head files too: for the data store. Default false.
   */
  historyHeads?: boolean;
}

/** Whether a key is a record history's head (src/core/history/history-keys.ts). */
const isHistoryHead = (key: string): boolean => key.startsWith(`${HISTORY_ROOT}/`) && key.endsWith("/head");

/** The buffer a streamed write reads a byte stream into, reused for every piece. */
const STREAM_BUFFER_BYTES = 64 * 1024;

/** {@link BlobStore.readInto} over a whole value read: for the keys not read from their file directly. */
async function copiedRange(value: Promise<Uint8Array | null>, offset: number, into: Uint8Array): Promise<number | null> {
  const bytes = await value;
  if (bytes === null) return null;
  const range = bytes.subarray(Math.min(offset, bytes.length), Math.min(bytes.length, offset + into.length));
  into.set(range);
  return range.length;
}

/**
 * A blob store of files under `dir`, with in-place appends for JSON arrays and streamed
 * writes (a temporary file renamed into place). With `options.sync`, every write and
 * append (file and folder) is fsynced before it resolves; with `options.auditHeads`, it
 * keeps the audit heads as slotted files (the audit store of {@link createFilePorts}).
 */
export function createFileBlobStore(dir: string, options: FileBlobStoreOptions = {}): BlobStore {
  const sync = options.sync ?? false;
  const files = documentFiles(dir, sync);
  // With sync, the audit store's chained day appends may be flushed later, their entries held by the head.
  const deferred = sync && options.auditHeads === true ? new DeferredSyncs() : undefined;
  const append = createDeferringJsonArrayAppend(dir, { sync, ...(deferred === undefined ? {} : { deferred }) });
  const unstored = createBlobStore(fileStorage(dir, sync), {
    appendToJsonArray: append,
    // Each piece is written before the next is read: a byte stream's pieces all land in one buffer.
    putStream: (key, size, body) => files.writeStream(key, size, piecesInto(body, size, STREAM_BUFFER_BYTES)),
    // A data folder is one process's: serve and the commands hold its lock (folder-lock.ts).
    soleWriter: true,
  });
  // A plain key is read straight from its file (the key unstorage would pass on, `/` for `:`),
  // without the unstorage layer's key rewrite and async step.
  const get = (key: string) => (PLAIN_PATH.test(key) ? files.readBytes(key) : unstored.get(key));
  const readInto = (key: string, offset: number, into: Uint8Array) => (PLAIN_PATH.test(key) ? files.readInto(key, offset, into) : copiedRange(unstored.get(key), offset, into));
  const store: BlobStore = { ...unstored, get, readInto };
  if (options.auditHeads !== true && options.historyHeads !== true) return store;
  // Audit heads are rewritten by every append, history heads by every write of their key: two
  // slots written in place by turns (file-head.ts).
  const slotted = options.auditHeads === true ? isHeadKey : isHistoryHead;
  const heads = headFiles(files, sync, deferred);
  return {
    ...store,
    ...(deferred === undefined ? {} : { syncJsonArray: createFileJsonArraySync(files, deferred) }),
    get: (key) => (slotted(key) ? heads.read(key) : get(key)),
    readInto: (key, offset, into) => (slotted(key) ? copiedRange(heads.read(key), offset, into) : readInto(key, offset, into)),
    update: (key, change, options) => (slotted(key) ? markedWrite(store.soleWriter, key, () => heads.update(key, change, options)) : store.update(key, change)),
  };
}

/**
 * The ports of the embedded default over `dataDir`. `options.fsync` (`FSYNC`): `audit`
 * (default) fsyncs the audit trail before an append resolves, `all` every write, `off` none.
 */
export function createFilePorts(dataDir: string, options: { fsync?: ServiceConfig["fsync"] } = {}): ServicePorts {
  const fsync = options.fsync ?? "audit";
  const all = { sync: fsync === "all" };
  return {
    data: createFileBlobStore(join(dataDir, "data"), { ...all, historyHeads: true }),
    audit: createFileBlobStore(join(dataDir, "audit"), { sync: fsync !== "off", auditHeads: true }),
    users: createKvStore(fileStorage(join(dataDir, "users"), all.sync)),
    images: createFileBlobStore(join(dataDir, "images"), all),
    outbox: createFileBlobStore(join(dataDir, "outbox"), all),
    clock: systemClock,
  };
}
