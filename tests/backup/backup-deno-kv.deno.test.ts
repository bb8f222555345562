/**
 * Moving between backends under Deno: files → Deno KV (STORAGE=deno-kv, the runtime's own store)
 * → files, through the backup and restore commands with Deno's runtime storage.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { Buffer } from "node:buffer";
import { afterAll, expect, it } from "vitest";
import { runBackupCommand } from "../../src/adapters/server/backup-command.ts";
import { createFilePorts } from "../../src/adapters/server/files/file-ports.ts";
import { denoKvStorage } from "../../src/adapters/deno/kv-ports.ts";
import { appendAuditEntry } from "../../src/core/audit/trail.ts";
import { storesOf } from "../../src/core/backup/mod.ts";
import type { ServicePorts } from "../../src/core/service/service.ts";
import type { ValidationAuditEntry } from "../../src/core/schemas/audit.ts";
import { auditEntry } from "../helpers/audit-entry.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "fa-backup-kv-"));
  dirs.push(dir);
  return dir;
};

async function run(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  let err = "";
  const code = await runBackupCommand(args, { runtimeStorage: denoKvStorage, io: { out: (line) => out.push(line), err: { write: (text: string) => (err += text) }, env } });
  return { code, out: out.join("\n"), err };
}

async function everything(ports: ServicePorts): Promise<Record<string, string>> {
  const all: Record<string, string> = {};
  for (const named of storesOf(ports)) {
    for (const key of await named.store.list("")) {
      const value = await named.store.get(key);
      all[`${named.name} ${key}`] = typeof value === "string" ? value : Buffer.from(value!).toString("base64");
    }
  }
  return all;
}

it("files → Deno KV → files: identical reads, every trail verifying on Deno KV", async () => {
  const source = await tempDir();
  const ports = createFilePorts(source, { fsync: "off" });
  await ports.users.put("u1", JSON.stringify({ uid: "u1", cases: [] }));
  await ports.data.put("u1/C-1/data.json", new TextEncoder().encode('{"caseNumber":"C-1"}'));
  await ports.images.put("images/i1", Uint8Array.from({ length: 150_000 }, (_, i) => i % 251));
  for (const day of ["2026-11-20", "2026-11-21"]) {
    for (let i = 0; i < 3; i++) await appendAuditEntry(ports.audit, { now: () => new Date(`${day}T1${i}:00:00Z`) }, "u1", auditEntry() as ValidationAuditEntry);
  }
  const first = join(await tempDir(), "a.fab");
  expect((await run(["backup", "--out", first, "--data", source])).code).toBe(0);
  const kvDir = await tempDir();
  const kvEnv = { STORAGE: "deno-kv", STORAGE_URL: join(kvDir, "kv.sqlite") };
  const intoKv = await run(["restore", first, "--data", kvDir], kvEnv);
  expect(intoKv.code, intoKv.err).toBe(0);
  expect(intoKv.out).toContain("audit trails: 1 of 1 verify on the target");
  const second = join(await tempDir(), "b.fab");
  expect((await run(["backup", "--out", second, "--data", kvDir], kvEnv)).code).toBe(0);
  const back = await tempDir();
  const restored = await run(["restore", second, "--data", back]);
  expect(restored.code, restored.err).toBe(0);
  expect(await everything(createFilePorts(back, { fsync: "off" }))).toEqual(await everything(ports));
});
