/**
 * A data key's history in a backup is taken as of its head, read first, where a store several
 * processes share keeps one, and as of its log's last version where one process holds the store
 * (src/core/backup/history-snapshot.ts): a write that lands between the reads is left out, so
 * the restored history verifies and the next write after the restore is its own version.
 * Deterministic: the store writes while handing out a part.
 */
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { restoreArchive, type Sha256Factory, storesOf, writeBackup } from "../../src/core/backup/mod.ts";
import { createService } from "../../src/core/service/service.ts";
import { createMemoryPorts as memoryPorts } from "../../src/core/service/memory-ports.ts";
import { parseConfig } from "../../src/core/config/mod.ts";
import type { BlobStore } from "../../src/core/ports.ts";
import { KEYS, memoryPorts as sharedMemoryPorts } from "../helpers/service.ts";

const sha256: Sha256Factory = () => {
  const hash = createHash("sha256");
  return { update: (bytes) => void hash.update(bytes), digestHex: () => hash.digest("hex") };
};
const KEY = "u1/C-1/data.json";
const headers = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET, "Content-Type": "application/json" };

it.each([
  ["log", "a shared store: between the head's read and the log's", "shared"],
  ["u1/C-1/data.json", "a shared store: between the log's read and the value's", "shared"],
  ["log", "one process holds the store: around the value's read", "sole"],
  ["u1/C-1/data.json", "one process holds the store: between the log's reads", "sole"],
] as const)("writes landing on every read of %s (%s) are left out: the restored history verifies and the next write is the next version", async (part, _, held) => {
  const config = parseConfig({ ...KEYS, RATE_LIMITS: "off" });
  const source = held === "sole" ? memoryPorts() : sharedMemoryPorts();
  const app = createService(source, config);
  const put = (service: typeof app, body: unknown) => service.request(`/data/${KEY}`, { method: "PUT", headers, body: JSON.stringify(body) });
  for (const n of [1, 2, 3]) expect((await put(app, { n })).status).toBe(200);
  // A writer that never pauses: every read of the part lands one more write just before it.
  let writes = 0;
  const data: BlobStore = {
    ...source.data,
    get: async (key) => {
      if (key === `#history/${KEY}/${part}` || key === part) {
        writes++;
        expect((await put(app, { n: 3 + writes })).status).toBe(200);
      }
      return await source.data.get(key);
    },
  };
  const chunks: Uint8Array[] = [];
  const manifest = await writeBackup(storesOf({ ...source, data }), (chunk) => Promise.resolve(void chunks.push(chunk.slice())), { sha256, now: new Date(), sealed: false });
  expect(writes).toBeGreaterThan(0);
  // Counted apart from the documents: the history's head (on a shared store) and its log.
  expect(manifest.counts).toMatchObject({ "data/cases": 1, "data/history": held === "sole" ? 1 : 2 });

  const target = memoryPorts();
  const stores = storesOf(target);
  await restoreArchive(() => new Blob(chunks as Uint8Array<ArrayBuffer>[]).stream(), { raw: stores, service: stores, encrypted: false }, { sha256, now: new Date() });
  const restored = createService(target, config);
  const history = async () => await (await restored.request(`/data/${KEY}?history&verify=true`, { headers })).json() as { versions: unknown[]; current: number; valid: boolean };
  // As of one head: its versions, whole, and the value that head names.
  const { current, versions, valid } = await history();
  expect(valid).toBe(true);
  expect(versions).toHaveLength(current);
  expect(current).toBeGreaterThanOrEqual(3);
  expect(await (await restored.request(`/data/${KEY}`, { headers })).json()).toEqual({ n: current });
  // The next write after the restore is the next version, whole, and the chain still verifies.
  expect((await put(restored, { n: 100 })).status).toBe(200);
  expect(await history()).toMatchObject({ current: current + 1, valid: true });
  expect(await (await restored.request(`/data/${KEY}?version=${current + 1}`, { headers })).json()).toEqual({ n: 100 });
  expect(await (await restored.request(`/data/${KEY}?version=${current}`, { headers })).json()).toEqual({ n: current });
});
