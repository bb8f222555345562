/**
 * The request log's reader going away (`serve | head`, a log shipper restarting) ends the log,
 * never the service: requests after the pipe broke are still answered, on every server runtime.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, spawnServe } from "../../helpers/spawn-serve.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-log-pipe-"));
});
afterAll(async () => await rm(dir, { recursive: true, force: true }));

describe.each(["node", "bun", "deno"] as Runtime[])("the request log on %s", (runtime) => {
  it("a closed standard output stops the log, not the server", async () => {
    const served = await spawnServe({ runtime, dataDir: join(dir, runtime), env: { R2_KEY_SECRET: "k", LOG_FORMAT: "json" }, timeoutMs: 60_000 });
    try {
      // The reading end of the pipe goes: every later write to it fails with EPIPE.
      served.proc.stdout!.destroy();
      for (let i = 0; i < 20; i++) {
        const response = await fetch(`${served.url}/data/u1/C-1/data.json`, { headers: { "X-Custom-Auth-Key": "k" } });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
      expect(served.proc.exitCode).toBe(null);
    } finally {
      await served.stop();
    }
  }, 90_000);
});
