/**
 * Issue 13 item 10: an acknowledged audit append is on the disk (FSYNC=audit, the default),
 * every write with FSYNC=all, none with FSYNC=off. fsync is counted on the FileHandle
 * prototype and the descriptor calls (`descriptors.dataSync`) the stores use; a power cut
 * itself cannot be staged in a test.
 */
import { mkdtemp, open, rm } from "node:fs/promises";
import { existsSync, readlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createFileBlobStore, createFilePorts } from "../../../../src/adapters/server/files/file-ports.ts";
import { descriptors } from "../../../../src/adapters/server/files/file-driver.ts";
import { ConfigError, parseConfig } from "../../../../src/core/config/mod.ts";
import { appendAuditEntry } from "../../../../src/core/audit/trail.ts";
import { FLUSH_AT, MAX_HELD } from "../../../../src/core/audit/chain.ts";
import type { ValidationAuditEntry } from "../../../../src/core/schemas/audit.ts";
import { auditEntry } from "../../../helpers/audit-entry.ts";

let dir: string;
let counts: { sync: number; datasync: number };
// Each descriptor data sync's start and end, in order: one round of flushes is every start before the first end.
let events: string[];
// The file of each descriptor data sync, where the system names an open descriptor's file (Linux).
let syncedFiles: string[];
const PROC_FDS = existsSync("/proc/self/fd");
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-fsync-"));
  const probe = await open(join(dir, "probe"), "w");
  const prototype = Object.getPrototypeOf(probe) as { sync(): Promise<void>; datasync(): Promise<void> };
  await probe.close();
  counts = { sync: 0, datasync: 0 };
  const sync = prototype.sync;
  const datasync = prototype.datasync;
  vi.spyOn(prototype, "sync").mockImplementation(function (this: unknown) {
    counts.sync++;
    return sync.call(this);
  });
  vi.spyOn(prototype, "datasync").mockImplementation(function (this: unknown) {
    counts.datasync++;
    return datasync.call(this);
  });
  const dataSync = descriptors.dataSync;
  events = [];
  syncedFiles = [];
  vi.spyOn(descriptors, "dataSync").mockImplementation(async (fd: number) => {
    counts.datasync++;
    if (PROC_FDS) syncedFiles.push(basename(readlinkSync(`/proc/self/fd/${fd}`)));
    events.push("start");
    await dataSync(fd);
    events.push("end");
  });
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

const fsyncs = () => counts.sync + counts.datasync;
const day = "audit-trails/u1-2026-11-22.json";

describe("fsync of the file stores", () => {
  it("with sync, a new day fsyncs its file and folders, each later append its file; the data read back is whole", async () => {
    const store = createFileBlobStore(join(dir, "audit"), { sync: true, auditHeads: true });
    await store.appendToJsonArray(day, { n: 1 });
    // The temporary file, the folder it was renamed in, and the new folders' parents.
    expect(counts.sync).toBeGreaterThanOrEqual(3);
    const before = fsyncs();
    await store.appendToJsonArray(day, { n: 2 });
    expect(counts.datasync).toBe(1);
    expect(fsyncs()).toBe(before + 1);
    await store.appendToJsonArray(day, { n: 3 });
    expect(counts.datasync).toBe(2);
    expect(JSON.parse(new TextDecoder().decode((await store.get(day))!))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it("with sync, a chained audit append waits for one flush, its head's slot (no temporary file, no folder); its day is flushed once every FLUSH_AT appends or so, apart", async () => {
    const store = createFileBlobStore(join(dir, "audit"), { sync: true, auditHeads: true });
    const clock = { now: () => new Date("2026-11-22T12:00:00Z") };
    const append = (n: number) => appendAuditEntry(store, clock, "u1", auditEntry({ details: { validationErrors: [], n } }) as ValidationAuditEntry);
    for (let n = 1; n <= 2; n++) await append(n);
    // Fewer than FLUSH_AT entries held: no day flush yet, each append flushes its head only.
    for (let n = 3; n < FLUSH_AT; n++) {
      counts = { sync: 0, datasync: 0 };
      events = [];
      await append(n);
      expect(counts).toEqual({ sync: 0, datasync: 1 });
      expect(events).toEqual(["start", "end"]);
    }
    // Over the next 2 * MAX_HELD appends: one head flush each, and a day flush at most once every FLUSH_AT appends (at least one).
    counts = { sync: 0, datasync: 0 };
    const appends = 2 * MAX_HELD;
    for (let n = FLUSH_AT; n < FLUSH_AT + appends; n++) await append(n);
    // At most once, the head outgrows its slots as it holds more entries: a new file renamed into place (it and its folder synced).
    expect([0, 2]).toContain(counts.sync);
    expect(counts.datasync).toBeGreaterThan(appends);
    expect(counts.datasync).toBeLessThanOrEqual(appends + Math.ceil(appends / FLUSH_AT) + 1);
  });

  it.skipIf(!PROC_FDS)("with sync, a user's day flush syncs that user's days only, not the days other users appended to meanwhile", async () => {
    const store = createFileBlobStore(join(dir, "audit"), { sync: true, auditHeads: true });
    const clock = { now: () => new Date("2026-11-22T12:00:00Z") };
    const append = (userId: string, n: number) => appendAuditEntry(store, clock, userId, auditEntry({ details: { validationErrors: [], n } }) as ValidationAuditEntry);
    // Eight other users' days appended to, not flushed yet (fewer than FLUSH_AT entries each).
    for (let user = 2; user <= 9; user++) for (let n = 1; n <= 2; n++) await append(`u${user}`, n);
    syncedFiles = [];
    // u1 appends until its own day was flushed (at MAX_HELD held entries an append waits for it).
    for (let n = 1; n <= MAX_HELD && !syncedFiles.includes("u1-2026-11-22.json"); n++) await append("u1", n);
    expect(syncedFiles).toContain("u1-2026-11-22.json");
    expect(syncedFiles.filter((file) => file.endsWith("-2026-11-22.json") && file !== "u1-2026-11-22.json")).toEqual([]);
  });

  it("with sync, a process finding the entries its head holds already in the day flushes the day before the next head drops them", async () => {
    const clock = { now: () => new Date("2026-11-22T12:00:00Z") };
    const first = createFileBlobStore(join(dir, "audit"), { sync: true, auditHeads: true });
    for (let n = 1; n <= 3; n++) await appendAuditEntry(first, clock, "u1", auditEntry({ details: { validationErrors: [], n } }) as ValidationAuditEntry);
    // A new process on the same folder: the day's last append may still be in the page cache only.
    const next = createFileBlobStore(join(dir, "audit"), { sync: true, auditHeads: true });
    counts = { sync: 0, datasync: 0 };
    events = [];
    await appendAuditEntry(next, clock, "u1", auditEntry({ details: { validationErrors: [], n: 4 } }) as ValidationAuditEntry);
    // The day (entries 2 and 3 found stored), then the new head's slot.
    expect(counts).toEqual({ sync: 0, datasync: 2 });
    expect(events).toEqual(["start", "end", "start", "end"]);
  });

  it("with sync, a failed data sync fails the append and every audit append after it, even when the disk answers again", async () => {
    const clock = { now: () => new Date("2026-11-22T12:00:00Z") };
    const store = createFileBlobStore(join(dir, "audit"), { sync: true, auditHeads: true });
    const append = (userId: string, n: number) =>
      appendAuditEntry(store, clock, userId, auditEntry({ details: { validationErrors: [], n } }) as ValidationAuditEntry);
    for (let n = 1; n <= 2; n++) await append("u1", n);
    const dataSync = descriptors.dataSync;
    let failing = true;
    vi.spyOn(descriptors, "dataSync").mockImplementation((fd: number) =>
      failing ? Promise.reject(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" })) : dataSync(fd)
    );
    await expect(append("u1", 3)).rejects.toThrow("EIO");
    failing = false;
    // After a failed fsync the kernel may call the pages clean: a retry proves nothing, so writes stop.
    await expect(append("u1", 4)).rejects.toThrow("EIO");
    await expect(append("u2", 1)).rejects.toThrow("EIO");
  });

  it("without sync, nothing is fsynced", async () => {
    const store = createFileBlobStore(join(dir, "audit"), { auditHeads: true });
    for (let n = 1; n <= 3; n++) await store.appendToJsonArray(day, { n });
    await store.put("u1/C-1/data.json", new TextEncoder().encode("{}"));
    expect(fsyncs()).toBe(0);
  });

  it("FSYNC=audit (default) fsyncs the audit trail only, all every store, off none", async () => {
    const write = async (fsync?: "audit" | "all" | "off") => {
      const ports = createFilePorts(join(dir, fsync ?? "default"), fsync === undefined ? {} : { fsync });
      counts = { sync: 0, datasync: 0 };
      await ports.data.put("u1/C-1/data.json", new TextEncoder().encode("{}"));
      await ports.users.put("u1", "{}");
      const documents = fsyncs();
      await ports.audit.appendToJsonArray(day, { n: 1 });
      await ports.audit.appendToJsonArray(day, { n: 2 });
      return { documents, audit: fsyncs() - documents };
    };
    const byDefault = await write();
    expect(byDefault.documents).toBe(0);
    expect(byDefault.audit).toBeGreaterThanOrEqual(3);
    expect(await write("audit")).toEqual(byDefault);
    const all = await write("all");
    expect(all.documents).toBeGreaterThanOrEqual(4);
    expect(all.audit).toBeGreaterThanOrEqual(3);
    expect(await write("off")).toEqual({ documents: 0, audit: 0 });
  });

  it("FSYNC is parsed with the configuration: audit by default, an unknown value names the variable", () => {
    expect(parseConfig({}).fsync).toBe("audit");
    expect(parseConfig({ FSYNC: "all" }).fsync).toBe("all");
    expect(parseConfig({ FSYNC: "off" }).fsync).toBe("off");
    expect(() => parseConfig({ FSYNC: "sometimes" })).toThrow(ConfigError);
    expect(() => parseConfig({ FSYNC: "sometimes" })).toThrow(/FSYNC/);
  });
});
