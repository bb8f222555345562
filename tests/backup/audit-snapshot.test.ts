/**
 * The audit trail in a backup is cut at the head read first (src/core/backup/audit-snapshot.ts):
 * appends that land between the head's read and its days' are left out, so the trail verifies.
 * Deterministic: the audit store appends right after handing out a head.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { createHash } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import { createFilePorts } from "../../src/adapters/server/files/file-ports.ts";
import { appendAuditEntry } from "../../src/core/audit/trail.ts";
import { checkArchive, type Sha256Factory, storesOf, writeBackup } from "../../src/core/backup/mod.ts";
import type { BlobStore } from "../../src/core/ports.ts";
import type { ValidationAuditEntry } from "../../src/core/schemas/audit.ts";
import { auditEntry } from "../helpers/audit-entry.ts";

const sha256: Sha256Factory = () => {
  const hash = createHash("sha256");
  return { update: (bytes) => void hash.update(bytes), digestHex: () => hash.digest("hex") };
};
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

it.each([
  ["after the head's read, on its day: left out", "get", ["2026-11-21T10:00:00Z", "2026-11-21T11:00:00Z"], 2],
  ["after the listing, before the head's read, on a new day: kept (the head's day is read though not listed)", "list", ["2026-11-22T10:00:00Z", "2026-11-22T11:00:00Z"], 3],
])("entries appended while the backup reads the trail (%s); the archived trail verifies", async (_, when, later, days) => {
  const dir = await mkdtemp(join(tmpdir(), "fa-snapshot-"));
  dirs.push(dir);
  const ports = createFilePorts(dir, { fsync: "off" });
  const append = (at: string) => appendAuditEntry(ports.audit, { now: () => new Date(at) }, "u1", auditEntry() as ValidationAuditEntry);
  for (const at of ["2026-11-20T10:00:00Z", "2026-11-21T09:00:00Z", "2026-11-21T09:30:00Z"]) await append(at);
  let interfered = false;
  const audit: BlobStore = {
    ...ports.audit,
    get: async (key) => {
      const value = await ports.audit.get(key);
      if (when === "get" && key.startsWith("audit-heads/") && !interfered) {
        interfered = true;
        for (const at of later) await append(at);
      }
      return value;
    },
    list: async (prefix) => {
      const keys = await ports.audit.list(prefix);
      if (when === "list" && !interfered) {
        interfered = true;
        for (const at of later) await append(at);
      }
      return keys;
    },
  };
  const chunks: Uint8Array[] = [];
  const manifest = await writeBackup(storesOf({ ...ports, audit }), (chunk) => Promise.resolve(void chunks.push(chunk.slice())), { sha256, now: new Date("2026-11-22T12:00:00Z"), sealed: false });
  expect(interfered).toBe(true);
  expect(manifest.counts["audit/days"]).toBe(days);
  const verdict = await checkArchive(new Blob(chunks as Uint8Array<ArrayBuffer>[]).stream(), { sha256, now: new Date("2026-11-22T12:00:00Z") });
  expect(verdict.problem).toBeUndefined();
  expect(verdict.trails.map(({ userId, valid, entries }) => ({ userId, valid, entries }))).toEqual([{ userId: "u1", valid: true, entries: when === "get" ? 3 : 5 }]);
});
