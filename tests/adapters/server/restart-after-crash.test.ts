/**
 * Restarting `serve` after a crash (issue 42, item 5), on Node, Bun and Deno, with real files
 * and real processes. On a full disk (a small tmpfs, filled) a restart after kill -9 died with
 * an ENOSPC stack trace and left `.lock.takeover` behind, so that a restart within 10 s of
 * freeing space was refused; a first start there left an empty `.lock` that refused every
 * later start. A restart while the killed process was not yet reaped (a supervisor restarting
 * at once) was refused as "in use by serve". Now: one line and exit 1, nothing left behind,
 * and a start as soon as space is freed; a killed holder never keeps the lock.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, writeSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Runtime, RUNTIMES, type Served, spawnServe, spawnUntilReady } from "../../helpers/spawn-serve.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A tmpfs of `size` mounted on a new folder (root only, as here and in CI); `unmount` after. */
function smallDisk(size: string): { dir: string; unmount: () => void } {
  const dir = join(tmpdir(), `fa-full-${process.pid}-${crypto.randomUUID()}`);
  mkdirSync(dir);
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { encoding: "utf8" });
  if (mounted.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`this test mounts a small tmpfs to fill it and needs root (mount -t tmpfs): ${mounted.error?.message ?? mounted.stderr.trim()}`);
  }
  return {
    dir,
    unmount: () => {
      const unmounted = spawnSync("umount", [dir], { encoding: "utf8" });
      if (unmounted.status !== 0) throw new Error(`umount ${dir}: ${unmounted.stderr.trim()}`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes `file` until the disk is full (ENOSPC); removing it frees the space. */
function fill(file: string): void {
  const fd = openSync(file, "w");
  const block = new Uint8Array(4096);
  try {
    for (;;) writeSync(fd, block);
  } catch (err) {
    expect((err as { code?: string }).code).toBe("ENOSPC");
  } finally {
    closeSync(fd);
  }
}

/** Runs `serve` under `runtime` until it exits (a start that fails). */
function serveOnce(runtime: Runtime, dataDir: string) {
  const [command, ...prefix] = RUNTIMES[runtime];
  return spawnSync(command, [...prefix, "--port", "0", "--data", dataDir], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
}

/** The pid the data folder's lock names. */
const lockPid = (dataDir: string): number => (JSON.parse(readFileSync(join(dataDir, ".lock"), "utf8")) as { pid: number }).pid;

/** `/proc/PID/stat` of a process, empty once it is gone. */
const statOf = (pid: number) => (existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "");

/** Waits (bounded) until `holds` says yes of what `read` returns. */
async function until(read: () => string, holds: (text: string) => boolean): Promise<string> {
  for (let look = 0; look < 1000 && !holds(read()); look++) await new Promise((wait) => setTimeout(wait, 10));
  return read();
}

describe.each(["node", "bun", "deno"] as Runtime[])("restarting serve on %s after a crash", (runtime) => {
  it("on a full disk: one line naming it, exit 1, nothing left behind; once space is freed it starts at once", async () => {
    const disk = smallDisk("1m");
    let served: Served | undefined;
    try {
      const data = join(disk.dir, "data");
      served = await spawnServe({ runtime, dataDir: data });
      fill(join(disk.dir, "filler"));
      served.proc.kill("SIGKILL");
      await served.exited;
      const refused = serveOnce(runtime, data);
      expect(refused.status, refused.stderr).toBe(1);
      expect(refused.stderr.trim()).toBe(`cannot start: --data ${data}: no space left on the disk (ENOSPC), so its lock ${join(data, ".lock")} cannot be written: free space and start again`);
      // The killed process's lock stays (the next start takes it over); no takeover file, no temporary.
      expect(readdirSync(data).sort()).toEqual([".lock", "secrets.json"]);
      unlinkSync(join(disk.dir, "filler"));
      served = await spawnServe({ runtime, dataDir: data });
      expect((await fetch(`${served.url}/health`)).status).toBe(200);
      expect(await served.stop()).toBe(0);
      expect(readdirSync(data).sort()).toEqual(["secrets.json"]);

      // A first start on a full disk leaves no empty lock that would refuse every later start.
      fill(join(disk.dir, "filler"));
      const fresh = join(disk.dir, "fresh");
      const first = serveOnce(runtime, fresh);
      expect(first.status, first.stderr).toBe(1);
      expect(first.stderr.trim()).toMatch(/^cannot start: .*no space left on the disk \(ENOSPC\)[^\n]*$/);
      expect(readdirSync(fresh)).toEqual([]);
      unlinkSync(join(disk.dir, "filler"));
      served = await spawnServe({ runtime, dataDir: fresh });
      expect(await served.stop()).toBe(0);
      served = undefined;

      // Room for the lock only: the next write (secrets.json) fails in one line too, and the lock goes.
      fill(join(disk.dir, "filler"));
      const pages = Math.floor(statSync(join(disk.dir, "filler")).size / 4096);
      truncateSync(join(disk.dir, "filler"), (pages - 1) * 4096);
      const roomy = join(disk.dir, "roomy");
      const locked = serveOnce(runtime, roomy);
      expect(locked.status, locked.stderr).toBe(1);
      const lines = locked.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^cannot start: the disk of --data .* is full \(.+\): free space and start again$/);
      expect(lines[0]).toContain(`--data ${roomy} is full (`);
      expect(readdirSync(roomy).filter((name) => name.includes("lock"))).toEqual([]);
    } finally {
      await served?.stop("SIGKILL");
      disk.unmount();
    }
  }, 120_000);

  // Linux: the lock reads a zombie's state from /proc (docs/storage.md); elsewhere it waits for the reaping.
  it.runIf(process.platform === "linux")("killed and restarted at once, before its parent reaped it (a supervisor): the new serve starts", async () => {
    const data = await mkdtemp(join(tmpdir(), `fa-restart-${runtime}-`));
    dirs.push(data);
    const [command, ...args] = [...RUNTIMES[runtime], "--port", "0", "--data", data];
    // serve's parent becomes sleep, which never reaps it: killed, it stays a zombie holding the lock.
    const quoted = [command, ...args].map((word) => `'${word}'`).join(" ");
    const parent = await spawnUntilReady("sh", ["-c", `${quoted} & exec sleep 600`], { env: { HOME: process.env.HOME ?? "" } });
    let restarted: Served | undefined;
    try {
      const pid = lockPid(data);
      process.kill(pid, "SIGKILL");
      expect(await until(() => statOf(pid), (stat) => / Z /.test(stat))).toMatch(/\) Z /);
      restarted = await spawnServe({ runtime, dataDir: data });
      expect(lockPid(data)).toBe(restarted.proc.pid);
      expect((await fetch(`${restarted.url}/health`)).status).toBe(200);
      // A live holder is still refused.
      const second = serveOnce(runtime, data);
      expect(second.status, second.stderr).toBe(2);
      expect(second.stderr).toContain(`is in use by serve (pid ${restarted.proc.pid},`);
    } finally {
      await restarted?.stop();
      await parent.stop("SIGKILL");
    }
  }, 120_000);
});
