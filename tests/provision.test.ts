/**
 * A fresh machine: `npm run provision` (scripts/provision.sh, which `npm test` and .ci/run run
 * first) installs the suites' system tools with apt-get as root, or says what to run; a suite
 * whose tool is missing fails naming that command instead of skipping. apt-get, id and the
 * tools are stand-ins on a PATH of their own here: the real ones would change this machine.
 */
import { spawnSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis } from "./helpers/redis-server.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-provision-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A PATH with only `env` and the given stand-ins (name → shell body). */
async function pathWith(name: string, commands: Record<string, string>): Promise<string> {
  const bin = join(dir, name);
  await rm(bin, { recursive: true, force: true });
  await mkdir(bin);
  await symlink("/usr/bin/env", join(bin, "env"));
  for (const [command, body] of Object.entries(commands)) {
    await writeFile(join(bin, command), `#!/bin/sh\n${body}\n`);
    await chmod(join(bin, command), 0o755);
  }
  return bin;
}

function provision(path: string) {
  return spawnSync("/bin/sh", [join(root, "scripts/provision.sh")], { env: { PATH: path }, encoding: "utf8" });
}

describe("npm run provision", () => {
  it("as root, installs exactly the missing packages with apt-get", async () => {
    const log = join(dir, "apt-root.log");
    const path = await pathWith("root", { id: "echo 0", "apt-get": `echo "$@" >> ${log}` });
    const result = provision(path);
    expect(result.status, result.stderr).toBe(0);
    expect((await readFile(log, "utf8")).trim().split("\n")).toEqual([
      "update",
      "install -y --no-install-recommends redis-server poppler-utils libreoffice-calc-nogui curl chromium",
    ]);
  });

  it("not root and without sudo, fails naming the command to run and the packages", async () => {
    const log = join(dir, "apt-user.log");
    const path = await pathWith("user", { id: "echo 1000", "apt-get": `echo "$@" >> ${log}`, pdftotext: "true", pdfinfo: "true", pdftoppm: "true", curl: "true" });
    const result = provision(path);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("apt-get update && apt-get install -y --no-install-recommends redis-server libreoffice-calc-nogui");
    expect(result.stderr).toContain("npm run provision");
    await expect(readFile(log, "utf8")).rejects.toThrow(); // apt-get never ran
  });

  it("does nothing when every tool is there", async () => {
    const log = join(dir, "apt-none.log");
    const tools = Object.fromEntries(["redis-server", "pdftotext", "pdfinfo", "pdftoppm", "soffice", "curl", "chromium"].map((tool) => [tool, "true"]));
    const result = provision(await pathWith("all", { id: "echo 1000", "apt-get": `echo "$@" >> ${log}`, ...tools }));
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("are installed");
    await expect(readFile(log, "utf8")).rejects.toThrow();
  });
});

describe("a suite whose tool is missing", () => {
  it("fails with the command that installs it (redis-server)", async () => {
    const saved = process.env.PATH;
    process.env.PATH = await pathWith("empty", {});
    try {
      await expect(startRedis()).rejects.toThrow(/redis-server is not installed \(Debian package redis-server\); run `npm run provision`/);
    } finally {
      process.env.PATH = saved;
    }
  });
});
