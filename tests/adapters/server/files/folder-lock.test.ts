/**
 * One process writes a data folder at a time (files/folder-lock.ts): the lock names its holder,
 * refuses another running process, is taken over from one that is gone or dying (a zombie, a
 * pid another process took since, a process killed while it took over a lock), and is held
 * once per process however often the process opens the folder. Runs under Node, Bun and Deno.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
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
    const theirs = `${JSON.stringify({ pid: process.ppid, host: hostname(), command: "serve", since: "2026-11-25T10:00:00.000Z", token: "t" })}\n`;
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
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: endedPid(), host: hostname(), command: "serve", since: "2026-11-25T10:00:00.000Z", token: "t" }));
    const lock = lockDataFolder(dir, "import");
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8"))).toMatchObject({ pid: process.pid, command: "import" });
    lock.release();
  });

  it("refuses a lock of another host (its process cannot be asked), naming the host", () => {
    const dir = folder();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: endedPid(), host: "other-host", command: "serve", since: "2026-11-25T10:00:00.000Z", token: "t" }));
    expect(() => lockDataFolder(dir, "import")).toThrow(/is in use by serve \(pid \d+ on other-host, since/);
  });

  it("a release leaves a lock that is not the one it took (removed by hand and taken by another meanwhile)", () => {
    const dir = folder();
    const lock = lockDataFolder(dir, "serve");
    const other = `${JSON.stringify({ pid: process.ppid, host: hostname(), command: "import", since: "2026-11-25T10:00:00.000Z", token: "other" })}\n`;
    writeFileSync(join(dir, LOCK_FILE), other);
    lock.release();
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(other);
  });
});

const parents: ChildProcess[] = [];
afterEach(() => {
  while (parents.length) parents.pop()!.kill("SIGKILL");
});

/** `/proc/PID/stat` of a process, empty once it is gone. */
const statOf = (pid: number) => (existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "");

/** Waits (bounded) until `holds` says yes of what `read` returns. */
async function until(read: () => string, holds: (text: string) => boolean): Promise<string> {
  for (let look = 0; look < 1000 && !holds(read()); look++) await new Promise((wait) => setTimeout(wait, 10));
  return read();
}

/** A process killed with SIGKILL that its parent (`sleep`, which never reaps) leaves a zombie until the test ends. */
async function zombie(): Promise<number> {
  const parent = spawn("sh", ["-c", "sleep 600 & echo $!; exec sleep 600"], { stdio: ["ignore", "pipe", "inherit"] });
  parents.push(parent);
  let out = "";
  const pid = await new Promise<number>((done) => {
    parent.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) done(Number(out.trim()));
    });
  });
  // Killed once its parent is sleep (a shell would reap it), and once it is sleep itself (the
  // forked shell may not have run its exec yet).
  await until(() => statOf(parent.pid!), (stat) => stat.includes("(sleep)"));
  await until(() => statOf(pid), (stat) => stat.includes("(sleep)"));
  process.kill(pid, "SIGKILL");
  expect(await until(() => statOf(pid), (stat) => / Z /.test(stat))).toMatch(/^\d+ \(sleep\) Z /);
  return pid;
}

describe.runIf(process.platform === "linux")("a lock whose holder is dying or another process (Linux: /proc)", () => {
  it("takes over the lock of a zombie: killed, not yet reaped by its parent (a supervisor restarting at once)", async () => {
    const dir = folder();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: await zombie(), host: hostname(), command: "serve", since: "2026-11-25T10:00:00.000Z", token: "t" }));
    const lock = lockDataFolder(dir, "serve");
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8"))).toMatchObject({ pid: process.pid, command: "serve" });
    lock.release();
  });

  it("takes over a lock whose pid another process took since (its start time differs), and still refuses its own holder", () => {
    const dir = folder();
    const lock = lockDataFolder(dir, "serve");
    const mine = JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8")) as { started?: string };
    expect(mine.started).toMatch(/^\d+$/);
    lock.release();
    const parent = (started: string) => `${JSON.stringify({ pid: process.ppid, host: hostname(), command: "serve", since: "2026-11-25T10:00:00.000Z", token: "t", started })}\n`;
    const ppidStarted = readFileSync(`/proc/${process.ppid}/stat`, "utf8").replace(/^[\s\S]*\) /, "").split(" ")[19]!;
    writeFileSync(join(dir, LOCK_FILE), parent(ppidStarted));
    expect(() => lockDataFolder(dir, "import")).toThrow(`is in use by serve (pid ${process.ppid},`);
    writeFileSync(join(dir, LOCK_FILE), parent(String(Number(ppidStarted) + 1)));
    lockDataFolder(dir, "import").release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a takeover file left by a process killed while it took over a stale lock does not hold back the next start", () => {
    const dir = folder();
    const stale = { host: hostname(), since: "2026-11-25T10:00:00.000Z" };
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ ...stale, pid: endedPid(), command: "serve", token: "t" }));
    writeFileSync(join(dir, `${LOCK_FILE}.takeover`), JSON.stringify({ ...stale, pid: endedPid(), command: "takeover", token: "u" }));
    const lock = lockDataFolder(dir, "serve");
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    lock.release();
  });
});

describe("a stale lock found by several processes at once", () => {
  it("is taken by one of them; the others are refused, naming it", async () => {
    const dir = folder();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: endedPid(), host: hostname(), command: "serve", since: "2026-11-25T10:00:00.000Z", token: "t" }));
    const module = new URL("../../../../dist/src/adapters/server/files/folder-lock.js", import.meta.url).href;
    // Each holds what it took for a while, so the others find it alive.
    const script = `const { lockDataFolder } = await import(${JSON.stringify(module)});
      try { const lock = lockDataFolder(${JSON.stringify(dir)}, "import"); console.log("took"); setTimeout(() => lock.release(), 1500); }
      catch (err) { console.log(/is in use by import/.test(err.message) ? "refused" : "error " + err.message); }`;
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => new Promise<string>((done) => {
      const child = spawn("node", ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      child.on("close", () => done(out.trim()));
    })));
    expect(outcomes.sort()).toEqual(["refused", "refused", "refused", "refused", "refused", "took"]);
  }, 30_000);
});
