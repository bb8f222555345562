/**
 * The file store serializes each key within one process only, so a command writing the data
 * folder of a running `serve` lost audit entries (a chain then read as tampered). `serve` on
 * Node, Bun and Deno holds the folder's lock; `export`, `import` and `keys` are refused while
 * it runs (exit 2, naming it), `audit verify` reads beside it, and all run once it stopped.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { hostname } from "node:os";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, type Runtime, RUNTIMES, spawnServe } from "../../helpers/spawn-serve.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const run = (args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "" } });

describe.each(["node", "bun", "deno"] as Runtime[])("the data folder of a running serve on %s", (runtime) => {
  it("refuses export, import and a second serve while it runs; audit verify reads beside it; all run once it stopped", async () => {
    const dir = await mkdtemp(join(tmpdir(), `fa-folder-${runtime}-`));
    dirs.push(dir);
    const served = await spawnServe({ runtime, dataDir: dir });
    const pid = served.proc.pid!;
    const writers = [
      ["export", "--user", "u1", "--case", "C-1", "--data", dir, "--out", join(dir, "C-1.zip")],
      ["import", "--user", "u1", "--data", dir, join(dir, "missing.zip")],
      ["serve", "--port", "0", "--data", dir],
    ];
    try {
      for (const args of writers) {
        const refused = run(args);
        expect(refused.status, `${args[0]}: ${refused.stderr}`).toBe(2);
        expect(refused.stderr).toContain(`is in use by serve (pid ${pid},`);
        expect(refused.stderr).not.toMatch(/\n\s+at /);
      }
      expect(existsSync(join(dir, "C-1.zip"))).toBe(false);
      const verify = run(["audit", "verify", "--user", "u1", "--data", dir]);
      expect(verify.status, verify.stderr).toBe(0);
      expect((await fetch(`${served.url}/health`)).status).toBe(200);
    } finally {
      expect(await served.stop()).toBe(0);
    }
    expect(existsSync(join(dir, ".lock"))).toBe(false);
    const exported = run(writers[0]!);
    expect(exported.stderr).not.toContain("is in use");
    expect(exported.stderr).toContain("C-1");
  }, 90_000);

  it("a folder another running process holds stops serve before it writes anything there (no secrets.json)", async () => {
    const dir = await mkdtemp(join(tmpdir(), `fa-held-${runtime}-`));
    dirs.push(dir);
    writeFileSync(join(dir, ".lock"), JSON.stringify({ pid: process.pid, host: hostname(), command: "import", since: "2026-11-25T10:00:00.000Z", token: "t" }));
    const [command, ...prefix] = RUNTIMES[runtime];
    const refused = spawnSync(command, [...prefix, "--port", "0", "--data", dir], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
    expect(refused.status, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`is in use by import (pid ${process.pid},`);
    expect(readdirSync(dir)).toEqual([".lock"]);
  }, 60_000);

  it("a --data that is a file, or a --host that is no address here, stops serve in one line (exit 2, exit 1), not a stack trace", async () => {
    const dir = await mkdtemp(join(tmpdir(), `fa-start-${runtime}-`));
    dirs.push(dir);
    writeFileSync(join(dir, "a-file"), "");
    const [command, ...prefix] = RUNTIMES[runtime];
    const serve = (args: string[]) =>
      spawnSync(command, [...prefix, "--port", "0", ...args], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
    const cases: [string[], number, string][] = [
      [["--data", join(dir, "a-file")], 2, `--data ${join(dir, "a-file")} is not a folder`],
      [["--data", join(dir, "d"), "--host", "999.1.1.1"], 1, "cannot listen on 999.1.1.1:0: "],
    ];
    for (const [args, status, message] of cases) {
      const stopped = serve(args);
      expect(stopped.status, `${args.join(" ")}: ${stopped.stderr}`).toBe(status);
      expect(stopped.stderr).toContain(message);
      expect(stopped.stderr).not.toMatch(/\n\s+at /);
    }
  }, 60_000);

  it("a port another server holds, or a --host that is no address here, stops serve before it makes --data or writes secrets.json there", async () => {
    const dir = await mkdtemp(join(tmpdir(), `fa-busy-${runtime}-`));
    dirs.push(dir);
    // The server a newcomer left running (`npm start`): serve on the same port wrote a new secrets.json, then failed.
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as AddressInfo).port;
    const [command, ...prefix] = RUNTIMES[runtime];
    try {
      const cases: [string[], string][] = [
        [["--port", String(port), "--data", join(dir, "new")], `127.0.0.1:${port} is already in use: stop what listens there`],
        [["--port", "0", "--data", join(dir, "new"), "--host", "999.1.1.1"], "cannot listen on 999.1.1.1:0: "],
      ];
      for (const [args, message] of cases) {
        const refused = spawnSync(command, [...prefix, ...args], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
        expect(refused.status, `${args.join(" ")}: ${refused.stderr}`).toBe(1);
        expect(refused.stderr).toContain(message);
        expect(existsSync(join(dir, "new")), args.join(" ")).toBe(false);
      }
      // An existing folder is left as it was: no secrets.json, no lock.
      const existing = join(dir, "existing");
      mkdirSync(existing);
      const refused = spawnSync(command, [...prefix, "--port", String(port), "--data", existing], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
      expect(refused.status, refused.stderr).toBe(1);
      expect(readdirSync(existing)).toEqual([]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  }, 60_000);
});

describe("the commands' --data", () => {
  it("a --data that does not exist is an exit 2 naming it, and is not made; an existing empty one has no trail stored", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fa-commands-"));
    dirs.push(dir);
    const missing = join(dir, "typo");
    for (const args of [
      ["export", "--user", "u1", "--case", "C-1", "--data", missing, "--out", join(dir, "C-1.zip")],
      ["import", "--user", "u1", "--data", missing, join(dir, "missing.zip")],
      ["audit", "verify", "--user", "u1", "--data", missing],
    ]) {
      const refused = run(args);
      expect(refused.status, `${args.join(" ")}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr).toContain(`--data ${missing} does not exist`);
      expect(existsSync(missing)).toBe(false);
    }
    const empty = run(["audit", "verify", "--user", "u1", "--data", dir]);
    expect(empty.status).toBe(0);
    // Encrypted, a reader leaves the missing canaries for the next writer (nothing is written beside serve).
    const keys = run(["keys", "generate"]).stdout.trim();
    const encrypted = spawnSync(process.execPath, [CLI, "audit", "verify", "--user", "u1", "--data", dir], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "", DATA_ENCRYPTION_KEYS: keys } });
    expect(encrypted.status, encrypted.stderr).toBe(0);
    expect(readdirSync(dir, { recursive: true }).filter((name) => String(name).includes("canary"))).toEqual([]);
    expect(empty.stdout).toMatch(/^audit trail of u1, [-0-9]+ to [-0-9]+: none stored \(no entries, no head/);
    // Six starts of the built command, one after the other: about 2.4 s each on a 2-core machine with steal.
  }, 60_000);
});
