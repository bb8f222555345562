import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll } from "vitest";
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { createBlobStore, createKvStore } from "../../src/core/storage/unstorage-stores.ts";
import { createFileBlobStore } from "../../src/adapters/server/files/file-ports.ts";
import { atomicFileDriver } from "../../src/adapters/server/files/file-driver.ts";
import { blobStoreSuite, kvStoreSuite } from "./suite.ts";

const dirs: string[] = [];
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "fa-suite-"));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

blobStoreSuite("memory", () => createBlobStore(createStorage({ driver: memoryDriver() })));
kvStoreSuite("memory", () => createKvStore(createStorage({ driver: memoryDriver() })), { compareAndSet: true });
// As the data store of `serve` (createFilePorts): history heads slotted.
blobStoreSuite("files", async () => createFileBlobStore(await freshDir(), { historyHeads: true }));
kvStoreSuite("files", async () => createKvStore(createStorage({ driver: atomicFileDriver({ base: await freshDir() }) })), { compareAndSet: true });
