/**
 * The command line a newcomer meets first: top-level help, --version, clear words for an
 * unknown flag and a busy port, and invalid variables that stop `serve` naming them.
 */
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, RUNTIMES } from "../../helpers/spawn-serve.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-cli-"));
});
afterAll(async () => await rm(dir, { recursive: true, force: true }));

const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 20_000, env: { PATH: process.env.PATH ?? "", ...env } });

describe("forensic-annotation command line", () => {
  it("--version prints the package version; --help lists serve, export and import", async () => {
    const manifest = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string };
    const version = run(["--version"]);
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(manifest.version);
    const help = run(["--help"]);
    expect(help.status).toBe(0);
    for (const command of ["serve", "export", "import"]) expect(help.stdout).toMatch(new RegExp(`^\\s+${command}\\s`, "m"));
  });

  it("an unknown command is named with the list of commands (not serve's options), exit 2, on Node, Bun and Deno", () => {
    for (const runtime of ["node", "bun", "deno"] as const) {
      // RUNTIMES starts `serve`: its last word is the command, here replaced.
      const [command, ...prefix] = RUNTIMES[runtime].slice(0, -1);
      const result = spawnSync(command!, [...prefix, "frobnicate"], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
      expect(result.status, `${runtime}: ${result.stderr}`).toBe(2);
      expect(result.stderr, runtime).toMatch(/^Unknown command: frobnicate\n/);
      for (const name of ["serve", "export", "import", "audit", "keys"]) expect(result.stderr, `${runtime} ${name}`).toMatch(new RegExp(`^\\s+${name}\\s`, "m"));
      expect(result.stderr, runtime).not.toContain("Usage: forensic-annotation serve");
    }
  }, 60_000);

  it("an unknown flag is named with a pointer to the help, exit 2", () => {
    const result = run(["serve", "--bogus"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("unknown option --bogus (forensic-annotation serve --help lists the options)");
  });

  it("a busy port is said in one line, no stack trace, exit 1", async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const result = run(["serve", "--port", String(port), "--data", join(dir, "busy")]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`127.0.0.1:${port} is already in use`);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it("invalid variables stop serve naming them, exit 2", () => {
    const cases: [Record<string, string>, string][] = [
      [{ ALLOWED_ORIGIN: "lab.example" }, "ALLOWED_ORIGIN"],
      [{ ALLOWED_ORIGIN: "https://lab.example/app" }, "ALLOWED_ORIGIN"],
      [{ EXPORT_SIGNING_KEY: "notjson" }, "EXPORT_SIGNING_KEY"],
      [{ IMAGE_HOST: "cloudflare" }, "CF_ACCOUNT_ID, CF_IMAGES_TOKEN, ACCOUNT_HASH: required when IMAGE_HOST=cloudflare"],
    ];
    for (const [env, named] of cases) {
      const result = run(["serve", "--port", "0", "--data", join(dir, "bad")], env);
      expect(result.status, JSON.stringify(env)).toBe(2);
      expect(result.stderr, JSON.stringify(env)).toContain(named);
    }
  });
});
