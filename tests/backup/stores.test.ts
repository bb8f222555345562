/**
 * Which stores a backup holds (src/core/backup/stores.ts): every store among the ports, by shape,
 * so a store another feature adds is backed up and restored without a change to the backup.
 */
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { createMemoryPorts } from "../../src/core/service/memory-ports.ts";
import { createBlobStore, createKvStore } from "../../src/core/storage/unstorage-stores.ts";
import { createStorage } from "unstorage";
import { checkArchive, restoreArchive, type Sha256Factory, storesOf, writeBackup } from "../../src/core/backup/mod.ts";

const sha256: Sha256Factory = () => {
  const hash = createHash("sha256");
  return { update: (bytes) => void hash.update(bytes), digestHex: () => hash.digest("hex") };
};
const encoder = new TextEncoder();

it("a store added to the ports under a new name is backed up and restored; one store under two names once; other ports are no stores", async () => {
  const holds = createBlobStore(createStorage());
  const ports = { ...createMemoryPorts(), holds, reviewers: createKvStore(createStorage()), alias: holds, rateLimiter: { hit: () => Promise.resolve({}) } };
  await holds.put("u1/C-1/hold.json", encoder.encode('{"held":true}'));
  await ports.reviewers.put("lab-1", '{"role":"reviewer"}');
  await ports.data.put("u1/C-1/data.json", encoder.encode("{}"));
  expect(storesOf(ports).map((named) => `${named.name}:${named.kind}`)).toEqual(["users:kv", "data:blob", "images:blob", "outbox:blob", "holds:blob", "reviewers:kv", "audit:blob"]);
  const chunks: Uint8Array[] = [];
  const manifest = await writeBackup(storesOf(ports), (chunk) => Promise.resolve(void chunks.push(chunk.slice())), { sha256, now: new Date(), sealed: false });
  expect(manifest.counts).toEqual({ "data/cases": 1, "holds/objects": 1, "reviewers/objects": 1 });
  const archive = () => new Blob(chunks as Uint8Array<ArrayBuffer>[]).stream();
  expect((await checkArchive(archive(), { sha256, now: new Date() })).valid).toBe(true);
  const target = { ...createMemoryPorts(), holds: createBlobStore(createStorage()), reviewers: createKvStore(createStorage()) };
  const summary = await restoreArchive(archive, { raw: storesOf(target), service: storesOf(target), encrypted: false }, { sha256, now: new Date() });
  expect(summary.counts).toEqual(manifest.counts);
  expect(new TextDecoder().decode((await target.holds.get("u1/C-1/hold.json"))!)).toBe('{"held":true}');
  expect(await target.reviewers.get("lab-1")).toBe('{"role":"reviewer"}');
  // A target without the archive's store refuses, writing nothing.
  const lacking = createMemoryPorts();
  await expect(restoreArchive(archive, { raw: storesOf(lacking), service: storesOf(lacking), encrypted: false }, { sha256, now: new Date() })).rejects.toThrow(/no holds, reviewers store/);
  expect(await lacking.data.list("")).toEqual([]);
});
