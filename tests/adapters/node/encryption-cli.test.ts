/**
 * Encryption at rest from the command line: `serve` with DATA_ENCRYPTION_KEYS keeps no
 * plaintext under --data, a wrong or missing key stops it at start with the reason, and
 * `keys generate`, `keys rotate` and `keys encrypt-all` carry a data directory through a key
 * rotation and the migration of plaintext written before, with everything readable after.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, RUNTIMES, spawnServe } from "../../helpers/spawn-serve.ts";
import { containsBytes, dataKey, keySetText } from "../../helpers/encryption.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-enc-cli-"));
});
afterAll(async () => await rm(dir, { recursive: true, force: true }));

const SECRET = "data-secret-0123456789";
const MARKER = "MARKER-cli-51d2-EVIDENCE";
const CASE = JSON.stringify({ caseNumber: "C-1", notes: MARKER });
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60_000, env: { PATH: process.env.PATH ?? "", R2_KEY_SECRET: SECRET, ...env } });

/** Starts serve on `data` with `env`, runs `act` against it, stops it. */
async function withServe(data: string, env: Record<string, string>, act: (url: string) => Promise<void>, runtime: "node" | "bun" | "deno" = "node"): Promise<void> {
  const served = await spawnServe({ runtime, dataDir: data, env: { R2_KEY_SECRET: SECRET, ...env } });
  try {
    await act(served.url);
  } finally {
    await served.stop();
  }
}

const headers = { "X-Custom-Auth-Key": SECRET };
async function putCase(url: string): Promise<void> {
  expect((await fetch(`${url}/data/u1/C-1/data.json`, { method: "PUT", headers, body: CASE })).status).toBe(200);
  const entry = { timestamp: "2026-11-22T12:00:00.000Z", userId: "u1", userEmail: "a@lab.example", action: "case-create", result: "success", details: { validationErrors: [], note: MARKER } };
  expect((await fetch(`${url}/data/audit/?userId=u1`, { method: "POST", headers, body: JSON.stringify(entry) })).status).toBe(200);
}
async function expectCase(url: string): Promise<void> {
  const response = await fetch(`${url}/data/u1/C-1/data.json`, { headers });
  expect(response.status).toBe(200);
  expect(await response.text()).toBe(CASE);
  const audit = (await (await fetch(`${url}/data/audit/?userId=u1`, { headers })).json()) as { entries: { details: { note?: string } }[] };
  expect(audit.entries.map((entry) => entry.details.note)).toEqual([MARKER]);
}

/** Whether any file under `data` holds the marker. */
async function markerOnDisk(data: string): Promise<boolean> {
  const entries = await readdir(data, { withFileTypes: true, recursive: true });
  const marker = new TextEncoder().encode(MARKER);
  for (const entry of entries) {
    if (entry.isFile() && containsBytes(new Uint8Array(await readFile(join(entry.parentPath, entry.name))), marker)) return true;
  }
  return false;
}

describe("encryption at rest from the command line", () => {
  it("serve keeps no plaintext under --data; a wrong or missing key stops it at start with the reason; keys rotate re-wraps", async () => {
    const data = join(dir, "rotate");
    const k1 = dataKey("k1");
    await withServe(data, { DATA_ENCRYPTION_KEYS: keySetText(k1) }, async (url) => {
      await putCase(url);
      await expectCase(url);
    });
    expect(await markerOnDisk(data)).toBe(false);

    const wrong = run(["serve", "--port", "0", "--data", data], { DATA_ENCRYPTION_KEYS: keySetText(dataKey("k1")) });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('DATA_ENCRYPTION_KEYS: cannot open the canary of the data store: Stored object encryption-canary cannot be decrypted: key "k1" of DATA_ENCRYPTION_KEYS is not the key it was encrypted with');
    const missing = run(["serve", "--port", "0", "--data", data]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("the data store holds encrypted objects");
    const unknown = run(["serve", "--port", "0", "--data", data], { DATA_ENCRYPTION_KEYS: keySetText(dataKey("k9")) });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('encrypted under key "k1", which DATA_ENCRYPTION_KEYS does not hold');
    const malformed = run(["serve", "--port", "0", "--data", data], { DATA_ENCRYPTION_KEYS: '{"keys":[{"kty":"oct","kid":"a","k":"short"}]}' });
    expect(malformed.status).toBe(2);
    expect(malformed.stderr).toContain("DATA_ENCRYPTION_KEYS: not a usable key set (at keys.0.k): k must be 32 bytes");

    // A new key first: generate prints it before the keys already set.
    const generated = run(["keys", "generate", "--kid", "k2"], { DATA_ENCRYPTION_KEYS: keySetText(k1) });
    expect(generated.status, generated.stderr).toBe(0);
    const set = JSON.parse(generated.stdout) as { keys: { kid: string }[] };
    expect(set.keys.map((key) => key.kid)).toEqual(["k2", "k1"]);
    const both = { DATA_ENCRYPTION_KEYS: generated.stdout.trim() };
    await withServe(data, both, expectCase);
    const rotated = run(["keys", "rotate", "--data", data], both);
    expect(rotated.status, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/re-wrapped [1-9]\d* of \d+ objects under key "k2"/);
    expect(run(["keys", "rotate", "--data", data], both).stdout).toMatch(/re-wrapped 0 of/);
    const onlyNew = { DATA_ENCRYPTION_KEYS: JSON.stringify({ keys: [set.keys[0]] }) };
    await withServe(data, onlyNew, expectCase);
    expect(await markerOnDisk(data)).toBe(false);
  }, 120_000);

  it("keys encrypt-all seals what serve stored before encryption was turned on", async () => {
    const data = join(dir, "migrate");
    await withServe(data, {}, putCase);
    expect(await markerOnDisk(data)).toBe(true);
    const keys = { DATA_ENCRYPTION_KEYS: keySetText(dataKey("k1")) };
    expect(run(["keys", "encrypt-all", "--data", data]).stderr).toContain("DATA_ENCRYPTION_KEYS: required by keys encrypt-all");
    const converted = run(["keys", "encrypt-all", "--data", data], keys);
    expect(converted.status, converted.stderr).toBe(0);
    expect(converted.stdout).toMatch(/encrypted [1-9]\d* of \d+ objects under key "k1"/);
    expect(await markerOnDisk(data)).toBe(false);
    await withServe(data, keys, expectCase);
  }, 120_000);

  it("what serve sealed on Node, serve on Bun and Deno opens and seals back; a wrong key stops them at start too", async () => {
    const data = join(dir, "runtimes");
    const keys = { DATA_ENCRYPTION_KEYS: keySetText(dataKey("k1")) };
    await withServe(data, keys, putCase);
    for (const runtime of ["bun", "deno"] as const) {
      await withServe(data, keys, async (url) => {
        await expectCase(url);
        // Sealed again by this runtime's node:crypto, read back below by the next one.
        expect((await fetch(`${url}/data/u1/C-1/data.json`, { method: "PUT", headers, body: CASE })).status).toBe(200);
      }, runtime);
      const [command, ...prefix] = RUNTIMES[runtime];
      const wrong = spawnSync(command, [...prefix, "--port", "0", "--data", data], {
        encoding: "utf8",
        timeout: 60_000,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", R2_KEY_SECRET: SECRET, DATA_ENCRYPTION_KEYS: keySetText(dataKey("k1")) },
      });
      expect(wrong.status, wrong.stdout + wrong.stderr).toBe(2);
      expect(wrong.stderr).toContain("DATA_ENCRYPTION_KEYS: cannot open the canary of the data store");
    }
    await withServe(data, keys, expectCase);
    expect(await markerOnDisk(data)).toBe(false);
  }, 180_000);
});
