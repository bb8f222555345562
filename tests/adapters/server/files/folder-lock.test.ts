/**
 * One process writes a data folder at a time (files/folder-lock.ts): the lock names its holder,
 * refuses another running process, is taken over from one that is gone, and is held once per
 * process however often the process opens the folder. Runs under Node, Bun and Deno.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import process from "node:process";
import { afterEach, describe, expect, it } from "vitest";
import { LOCK_FILE, lockDataFolder } from "../../../../src/adapters/server/files/folder-lock.ts";
import { ConfigError } from "../../../../src/core/config/mod.ts";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), "fa-lock-"));
  dirs.push(dir);
  return dir;
};

/** The id of a process that has ended. */
function endedPid(): number {
  const ended = spawnSync(process.execPath, ["--version"]);
  expect(ended.pid).toBeGreaterThan(0);
  return ended.pid!;
}

describe("the data folder's write lock", () => {
  it("names its holder in the folder, is held once per process, and goes with the last release", () => {
    const dir = folder();
    const first = lockDataFolder(dir, "serve");
    const path = join(dir, LOCK_FILE);
    expect(JSON.parse(readFileSync(path, "utf8"))).toMatchObject({ pid: process.pid, command: "serve" });
    // The same folder named relatively is the same lock.
    const second = lockDataFolder(relative(process.cwd(), dir), "import");
    first.release();
    first.release();
    expect(existsSync(path)).toBe(true);
    second.release();
    expect(existsSync(path)).toBe(false);
  });

  it("refuses a folder another running process holds, naming it, and leaves its lock in place", () => {
    const dir = folder();
    const theirs = `${JSON.stringify({ pid: process.ppid, command: "serve", since: "2026-11-25T10:00:00.000Z" })}\n`;
    writeFileSync(join(dir, LOCK_FILE), theirs);
    let refusal: unknown;
    try {
      lockDataFolder(dir, "keys rotate");
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(ConfigError);
    expect((refusal as Error).message).toContain(`is in use by serve (pid ${process.ppid}, since 2026-11-25T10:00:00.000Z)`);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(theirs);
  });

  it("takes over the lock of a process that is gone (a crash, kill -9)", () => {
    const dir = folder();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: endedPid(), command: "serve", since: "2026-11-25T10:00:00.000Z" }));
    const lock = lockDataFolder(dir, "import");
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8"))).toMatchObject({ pid: process.pid, command: "import" });
    lock.release();
  });
});
