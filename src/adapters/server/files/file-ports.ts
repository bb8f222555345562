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
import { atomicFileDriver, documentFiles } from "./file-driver.ts";
import { piecesOf } from "../../../core/storage/byte-stream.ts";
import { createFileJsonArrayAppend } from "./file-append.ts";
import { headFiles, isHeadKey } from "./file-head.ts";

/**
 * A blob store of files under `dir`, with in-place appends for JSON arrays and streamed
 * writes (a temporary file renamed into place). With `options.sync`, every write and
 * append (file and folder) is fsynced before it resolves.
 */
export function createFileBlobStore(dir: string, options: { sync?: boolean } = {}): BlobStore {
  const sync = options.sync ?? false;
  const files = documentFiles(dir, sync);
  const store = createBlobStore(createStorage({ driver: atomicFileDriver({ base: dir, sync }) }), {
    appendToJsonArray: createFileJsonArrayAppend(dir, { sync }),
    putStream: (key, size, body) => files.writeStream(key, size, piecesOf(body, size)),
  });
  // Audit heads are rewritten by every append: two slots written in place by turns (file-head.ts).
  const heads = headFiles(files, sync);
  return {
    ...store,
    get: (key) => (isHeadKey(key) ? heads.read(key) : store.get(key)),
    update: (key, change, options) => (isHeadKey(key) ? heads.update(key, change, options) : store.update(key, change)),
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
    data: createFileBlobStore(join(dataDir, "data"), all),
    audit: createFileBlobStore(join(dataDir, "audit"), { sync: fsync !== "off" }),
    users: createKvStore(createStorage({ driver: atomicFileDriver({ base: join(dataDir, "users"), ...all }) })),
    images: createFileBlobStore(join(dataDir, "images"), all),
    outbox: createFileBlobStore(join(dataDir, "outbox"), all),
    clock: systemClock,
  };
}
