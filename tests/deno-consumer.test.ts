/**
 * A Deno program using every entry point type-checks as a JSR consumer's does: `deno check` in
 * tests/fixtures/deno-consumer, whose configuration is the package's import map alone. Inside
 * this repository @types/node (package.json) merges its WebCrypto types into Deno's, so
 * `deno check mod.ts` passed while a consumer saw TS2353 on `tagLength` (cipher-suite.ts).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../", import.meta.url));

it("[deno] deno check of a consumer program importing mod.ts and every subpath entry finds no error", async () => {
  const consumer = "tests/fixtures/deno-consumer";
  const checked = await run(`${root}node_modules/.bin/deno`, ["check", "--config", `${consumer}/deno.json`, `${consumer}/main.ts`], {
    cwd: root,
    env: { ...process.env, NO_COLOR: "1" },
    maxBuffer: 16 * 1024 * 1024,
  }).catch((err: { stderr: string; code: number }) => err);
  expect("code" in checked ? `exit ${checked.code}: ${checked.stderr}` : "ok").toBe("ok");
}, 240_000);
