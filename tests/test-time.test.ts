/**
 * `npm test`'s own time (docs/performance.md#test-time): its independent parts run side by side
 * (scripts/side-by-side.mjs: the Bun and Deno suites, check:package's steps), and nothing in it
 * builds dist/ a second time (`npm pack` runs `prepare`, a whole tsc build, unless told not to),
 * which also rewrote dist/ under the suites reading it.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../", import.meta.url));
const script = join(root, "scripts/side-by-side.mjs");
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-side-by-side-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs scripts/side-by-side.mjs with `args`; resolves with its exit code and output. */
function sideBySide(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}

describe("scripts/side-by-side.mjs", () => {
  it("runs the commands at the same time: two that each wait for the other both finish", async () => {
    // Each writes into a pipe the other reads: run one after the other, the first never ends (bounded by timeout).
    const made = spawnSync("mkfifo", ["a", "b"], { cwd: dir });
    expect(made.status).toBe(0);
    const first = "echo from-first > a; read line < b; echo first got $line";
    const second = "read line < a; echo from-second > b; echo second got $line";
    const result = await sideBySide(["--jobs", "2", `timeout 15 sh -c '${first}'`, `timeout 15 sh -c '${second}'`]);
    expect(result.output).toContain("first got from-second");
    expect(result.output).toContain("second got from-first");
    expect(result.code).toBe(0);
  });

  it("fails when one command fails, after running every other to its end, its output printed whole", async () => {
    const result = await sideBySide(["--jobs", "1", "echo one; exit 3", "echo two-a; echo two-b"]);
    expect(result.code).toBe(1);
    expect(result.output).toContain("FAILED (exit 3): echo one; exit 3");
    expect(result.output).toMatch(/=== echo two-a; echo two-b \(exit 0, [\d.]+ s\)\ntwo-a\ntwo-b\n/);
  });
});

describe("npm test", () => {
  it("runs the Bun and Deno suites side by side (Deno, the longer, on two workers), and check:package's steps", async () => {
    const { scripts } = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(scripts.test).toContain("node scripts/side-by-side.mjs 'TEST_WORKERS=1 npm run test:bun' 'TEST_WORKERS=2 npm run test:deno'");
    expect(scripts["check:package"]).toMatch(/^node scripts\/side-by-side\.mjs /);
  });

  it("builds dist/ once: every `npm pack` of its scripts and suites skips `prepare`", async () => {
    const { scripts } = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
    const packs = Object.values(scripts).flatMap((line) => line.split(/&&|'/)).filter((step) => /npm pack|attw --pack/.test(step));
    expect(packs.length).toBeGreaterThan(0);
    for (const step of packs) expect(step, step).toMatch(/--ignore-scripts|npm_config_ignore_scripts=true/);
    const consumer = await readFile(join(root, "tests/consumer-types.test.ts"), "utf8");
    expect(consumer).toMatch(/\["pack", "--json", "--ignore-scripts"/);
  });
});
