/**
 * @module
 * The embedded default: every store is a folder of files under the data directory
 * (CONTRACT "Storage layout"): `data/`, `audit/`, `users/`, `images/`, and the mail `outbox/`.
 */
import { join } from "node:path";
import { createStorage } from "unstorage";
import { createBlobStore, createKvStore } from "../../core/storage/unstorage-stores.ts";
import { systemClock } from "../../core/ports.ts";
import type { BlobStore } from "../../core/ports.ts";
import type { ServicePorts } from "../../core/service.ts";
import { atomicFileDriver } from "./file-driver.ts";
import { createFileJsonArrayAppend } from "./file-append.ts";

/** A blob store of files under `dir`, with in-place appends for JSON arrays. */
export function createFileBlobStore(dir: string): BlobStore {
  return createBlobStore(createStorage({ driver: atomicFileDriver({ base: dir }) }), {
    appendToJsonArray: createFileJsonArrayAppend(dir),
  });
}

/** The ports of the embedded default over `dataDir`. */
export function createFilePorts(dataDir: string): ServicePorts {
  return {
    data: createFileBlobStore(join(dataDir, "data")),
    audit: createFileBlobStore(join(dataDir, "audit")),
    users: createKvStore(createStorage({ driver: atomicFileDriver({ base: join(dataDir, "users") }) })),
    images: createFileBlobStore(join(dataDir, "images")),
    outbox: createFileBlobStore(join(dataDir, "outbox")),
    clock: systemClock,
  };
}
