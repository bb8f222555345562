import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { spawnServe, type Served } from "../../../helpers/spawn-serve.ts";
import { auditEntry } from "../../../helpers/audit-entry.ts";
import { headText } from "../../../helpers/head-file.ts";

let dir: string | undefined;
let served: Served | undefined;
afterEach(async () => {
  await served?.stop("SIGKILL");
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function jsonFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith(".json")).map((e) => join(e.parentPath, e.name));
}

describe("crash safety of the embedded default", () => {
  it("SIGKILL during a write storm leaves every stored JSON file parseable, and appends carry on", async () => {
    dir = await mkdtemp(join(tmpdir(), "fa-crash-"));
    const dataDir = join(dir, "data");
    served = await spawnServe({ dataDir, env: { R2_KEY_SECRET: "k" } });
    const url = served.url;
    const headers = { "X-Custom-Auth-Key": "k", "Content-Type": "application/json" };
    const big = "x".repeat(256 * 1024);
    let stop = false;
    const acknowledged = new Map<string, number>();

    const writer = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const task = i % 3 === 0
          ? fetch(`${url}/data/u${n % 4}/C-${i % 5}/data.json`, { method: "PUT", headers, body: JSON.stringify({ n, i, big }) })
          : fetch(`${url}/data/audit/?userId=u${n % 4}`, { method: "POST", headers, body: JSON.stringify(auditEntry({ userId: `u${n % 4}`, details: { validationErrors: [], n, i } })) })
            .then(async (r) => {
              if (r.ok) {
                const { filename, entryCount } = (await r.json()) as { filename: string; entryCount: number };
                acknowledged.set(filename, Math.max(acknowledged.get(filename) ?? 0, entryCount));
              }
              return r;
            });
        await task.catch(() => undefined);
      }
    };
    const writers = Array.from({ length: 16 }, (_, n) => writer(n));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    served.proc.kill("SIGKILL");
    await served.exited;
    stop = true;
    await Promise.all(writers);
    served = undefined;

    const files = await jsonFiles(dataDir);
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      // An audit head is two slots holding JSON (docs/storage.md#audit-heads-on-disk): its current one parses.
      const text = headText(new Uint8Array(await readFile(file)));
      expect(() => JSON.parse(text), file).not.toThrow();
    }
    // No acknowledged audit entry was lost.
    expect(acknowledged.size).toBeGreaterThan(0);
    for (const [filename, count] of acknowledged) {
      const entries = JSON.parse(await readFile(join(dataDir, "audit", filename), "utf8")) as unknown[];
      expect(entries.length, filename).toBeGreaterThanOrEqual(count);
    }

    // A restarted server continues every day's count.
    served = await spawnServe({ dataDir, env: { R2_KEY_SECRET: "k" } });
    const [filename, count] = [...acknowledged][0]!;
    const onDisk = (JSON.parse(await readFile(join(dataDir, "audit", filename), "utf8")) as unknown[]).length;
    expect(onDisk).toBeGreaterThanOrEqual(count);
    const userId = /audit-trails\/(.+)-\d{4}-\d{2}-\d{2}\.json/.exec(filename)![1]!;
    // A head naming an entry its writer was killed before storing: the restarted server stores that entry first, so the chain stays whole.
    const head = JSON.parse(headText(new Uint8Array(await readFile(join(dataDir, "audit", "audit-heads", `${userId}.json`))))) as { day: string; index: number };
    const pending = filename.endsWith(`-${head.day}.json`) && head.index >= onDisk ? 1 : 0;
    const response = await fetch(`${served.url}/data/audit/?userId=${userId}`, { method: "POST", headers, body: JSON.stringify(auditEntry({ userId })) });
    expect(((await response.json()) as { entryCount: number }).entryCount).toBe(onDisk + pending + 1);
    const verdict = await fetch(`${served.url}/data/audit/verify?userId=${userId}`, { headers });
    expect(await verdict.json()).toMatchObject({ valid: true, userId });
  }, 60_000);
});
