/**
 * A process killed between writing a temporary file and renaming it into place leaves the
 * file behind (an image's worth for an upload cut short), and nothing listed or removed it.
 * `serve` removes, once it holds the data folder's lock, the temporary files older than its
 * start, on Node, Bun and Deno; documents, folders and younger files stay.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { removeLeftoverTemporaries } from "../../../../src/adapters/server/files/leftover-temporaries.ts";
import { createFilePorts } from "../../../../src/adapters/server/files/file-ports.ts";
import { type Runtime, spawnServe } from "../../../helpers/spawn-serve.ts";
import { startServer } from "../../../../src/adapters/node/serve.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
async function folder(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `fa-leftover-${name}-`));
  dirs.push(dir);
  return dir;
}

const temporary = (name: string) => `.${name}.${crypto.randomUUID()}.tmp`;
const HOUR_AGO = new Date(Date.now() - 3_600_000);
const IN_A_MINUTE = new Date(Date.now() + 60_000);

/** Writes `path` (its folder too) with a modification time of `when`. */
async function planted(path: string, when: Date, content = "{half"): Promise<string> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, content);
  await utimes(path, when, when);
  return path;
}

describe("removeLeftoverTemporaries", () => {
  it("removes the old temporary files in every folder and nothing else", async () => {
    const dir = await folder("unit");
    const outside = await folder("outside");
    const ports = createFilePorts(dir);
    await ports.data.put("u1/C-1/data.json", new TextEncoder().encode("{}"));
    // A document named like a temporary file, and one in a folder of such a name.
    const lookalike = temporary("x");
    await ports.data.put(`u1/C-1/${lookalike}`, new TextEncoder().encode('{"kept":1}'));
    await ports.data.put(`u1/${lookalike}/data.json`, new TextEncoder().encode('{"kept":2}'));
    await ports.users.put(lookalike, '{"uid":"x"}');
    const old = [
      await planted(join(dir, "data", "u1", "C-1", temporary("data.json")), HOUR_AGO),
      await planted(join(dir, "images", temporary("image-1")), HOUR_AGO, "x".repeat(100_000)),
      await planted(join(dir, "audit", "audit-trails", temporary("u1-2026-11-25.json")), HOUR_AGO),
    ];
    const young = await planted(join(dir, "data", "u1", temporary("doc.json")), IN_A_MINUTE);
    const notOurs = [await planted(join(dir, "data", "u1", ".x.tmp"), HOUR_AGO), await planted(join(outside, temporary("elsewhere")), HOUR_AGO)];
    await symlink(outside, join(dir, "data", "link"));

    expect(await removeLeftoverTemporaries(dir, { olderThan: Date.now(), stopped: () => true })).toEqual({ removed: 0, failed: 0 });
    expect(old.every((path) => existsSync(path))).toBe(true);

    expect(await removeLeftoverTemporaries(dir, { olderThan: Date.now() })).toEqual({ removed: 3, failed: 0 });
    expect(old.filter((path) => existsSync(path))).toEqual([]);
    expect([young, ...notOurs].filter((path) => !existsSync(path))).toEqual([]);
    expect(new TextDecoder().decode((await ports.data.get(`u1/C-1/${lookalike}`))!)).toBe('{"kept":1}');
    expect(new TextDecoder().decode((await ports.data.get(`u1/${lookalike}/data.json`))!)).toBe('{"kept":2}');
    expect(await ports.users.get(lookalike)).toBe('{"uid":"x"}');
    expect(await ports.data.list("u1/")).toEqual([`u1/${lookalike}/data.json`, `u1/C-1/${lookalike}`, "u1/C-1/data.json", "u1/.x.tmp"].sort());
  });

  it("a folder it cannot find is no failure", async () => {
    const dir = await folder("gone");
    expect(await removeLeftoverTemporaries(join(dir, "missing"), { olderThan: Date.now() })).toEqual({ removed: 0, failed: 0 });
  });
});

describe("a second start on a folder this process already holds (an embedder's)", () => {
  it("sweeps nothing: the first holder's writes in flight are not leftovers", async () => {
    const dir = await folder("twice");
    const log: string[] = [];
    const first = await startServer({ port: 0, host: "127.0.0.1", dataDir: dir, env: { R2_KEY_SECRET: "data-key-0123456789" }, log: (line) => log.push(line) });
    try {
      // A temporary file of the first holder, written after its start (its own sweep, which may
      // still be running, keeps it: dated an hour ago, that sweep removed it under load), and old
      // enough by the second start (a second and more before it) to be taken for a leftover there.
      const inFlight = await planted(join(dir, "images", temporary("upload")), new Date());
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const second = await startServer({ port: 0, host: "127.0.0.1", dataDir: dir, env: { R2_KEY_SECRET: "data-key-0123456789" }, log: (line) => log.push(line) });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await second.close();
      expect(existsSync(inFlight)).toBe(true);
      expect(log.filter((line) => line.startsWith("removed"))).toEqual([]);
    } finally {
      await first.close();
    }
    expect(existsSync(join(dir, ".lock"))).toBe(false);
  });
});

describe("STORAGE set to an empty value (as in a .env line `STORAGE=`)", () => {
  it("is the file store for the folder's lock and the sweep too, as it is for the stores", async () => {
    const dir = await folder("empty-storage");
    const left = await planted(join(dir, "data", "u1", "C-1", temporary("data.json")), HOUR_AGO);
    const log: string[] = [];
    const served = await startServer({ port: 0, host: "127.0.0.1", dataDir: dir, env: { STORAGE: "", R2_KEY_SECRET: "data-key-0123456789" }, log: (line) => log.push(line) });
    try {
      const deadline = Date.now() + 10_000;
      while (existsSync(left) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(existsSync(left)).toBe(false);
      expect(log).toContain(`removed 1 temporary file a stopped process left under ${dir}`);
    } finally {
      await served.close();
    }
    expect(existsSync(join(dir, ".lock"))).toBe(false);
  });
});

describe.each(["node", "bun", "deno"] as Runtime[])("serve on %s", (runtime) => {
  it("removes the temporary files a killed process left under --data, once it holds the folder, and serves on", async () => {
    const dir = await folder(runtime);
    const ports = createFilePorts(dir);
    await ports.data.put("u1/C-1/data.json", new TextEncoder().encode('{"caseNumber":"C-1"}'));
    const left = [
      await planted(join(dir, "data", "u1", "C-1", temporary("data.json")), HOUR_AGO),
      await planted(join(dir, "images", temporary("image-1")), HOUR_AGO, "x".repeat(100_000)),
    ];
    const young = await planted(join(dir, "data", "u1", temporary("notes.json")), IN_A_MINUTE);
    const served = await spawnServe({ runtime, dataDir: dir, env: { R2_KEY_SECRET: "data-key-0123456789" } });
    try {
      const deadline = Date.now() + 20_000;
      while (!served.output().includes("removed 2 temporary files") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(served.output()).toContain(`removed 2 temporary files a stopped process left under ${dir}`);
      expect(left.filter((path) => existsSync(path))).toEqual([]);
      expect(existsSync(young)).toBe(true);
      const read = await fetch(`${served.url}/data/u1/C-1/data.json`, { headers: { "X-Custom-Auth-Key": "data-key-0123456789" } });
      expect(await read.json()).toEqual({ caseNumber: "C-1" });
    } finally {
      expect(await served.stop()).toBe(0);
    }
    expect((await readdir(join(dir, "images"))).length).toBe(0);
  }, 60_000);
});
