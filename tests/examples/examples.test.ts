import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { spawnUntilReady, type Served } from "../helpers/spawn-serve.ts";
import { sendRaw } from "../helpers/raw-request.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const bin = (name: string) => join(root, "node_modules/.bin", name);
let dir: string;
const running: Served[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-examples-"));
});
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()));
  await rm(dir, { recursive: true, force: true });
});

async function expectServes(served: Served): Promise<void> {
  running.push(served);
  expect(await (await fetch(`${served.url}/health`)).json()).toEqual({ ok: true });
  const put = await fetch(`${served.url}/data/u1/C-1/data.json`, { method: "PUT", headers: { "X-Custom-Auth-Key": "example-key" }, body: "{}" });
  expect(put.status).toBe(200);
}

describe("examples run as written", () => {
  it("examples/node", async () => {
    const env = { PORT: "0", DATA_DIR: join(dir, "node"), R2_KEY_SECRET: "example-key" };
    await expectServes(await spawnUntilReady(process.execPath, ["examples/node/server.mjs"], { cwd: root, env }));
  }, 60_000);

  it("examples/bun", async () => {
    const env = { PORT: "0", DATA_DIR: join(dir, "bun"), R2_KEY_SECRET: "example-key" };
    await expectServes(await spawnUntilReady(bin("bun"), ["examples/bun/server.ts"], { cwd: root, env }));
  }, 60_000);

  it("examples/deno-deploy (deno task start)", async () => {
    // Deno trusts its own root list unless told otherwise; the system store also holds a proxy's CA.
    const env = { PORT: "0", R2_KEY_SECRET: "example-key", KV_PATH: join(dir, "deploy-kv.sqlite3"), DENO_TLS_CA_STORE: process.env.DENO_TLS_CA_STORE ?? "system" };
    // As its README says: npx finds the Deno of the repository's node_modules.
    const served = await spawnUntilReady("npx", ["deno", "task", "start"], {
      cwd: join(root, "examples/deno-deploy"),
      env,
      readyPattern: /Listening on (http:\/\/\S+)/,
      timeoutMs: 60_000,
    });
    await expectServes(served);
    // No keys are generated here: an unset one is named at start and in the refusal.
    expect(served.output()).toMatch(/^KEYS_AUTH is not set: every request that needs X-Custom-Auth-Key is refused with 403/m);
    const refused = await fetch(`${served.url}/keys/ACCOUNT_HASH`, { headers: { "X-Custom-Auth-Key": "a guess" } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toContain("this server has no KEYS_AUTH configured");
    // A dot segment resolves as under `serve` (Deno.serve hands the path over as sent).
    const headers = { "X-Custom-Auth-Key": "example-key" };
    expect((await fetch(`${served.url}/data/u2/C-1/data.json`, { method: "PUT", headers, body: "[2]" })).status).toBe(200);
    expect(await sendRaw(served.url, { method: "GET", path: "/data/u1/%2e%2e/u2/C-1/data.json", headers })).toEqual({ status: 200, body: "[2]" });
  }, 90_000);

  it("examples/embed-in-hono keeps its own middleware and routes", async () => {
    process.env.R2_KEY_SECRET = "example-key";
    const { app } = await import("../../examples/embed-in-hono/app.ts");
    expect(await (await app.request("/")).text()).toBe("the lab's own app");
    const health = await app.request("/forensic/health");
    expect(await health.json()).toEqual({ ok: true });
    expect(health.headers.get("x-content-type-options")).toBe("nosniff"); // the host app's secureHeaders
    const headers = { "X-Custom-Auth-Key": "example-key" };
    expect((await app.request("/api/data/u1/C-1/data.json", { method: "PUT", headers, body: '{"a":1}' })).status).toBe(200);
    // Both mounts share the ports: the document is visible under /forensic/data too.
    expect(await (await app.request("/forensic/data/u1/C-1/data.json", { headers })).json()).toEqual({ a: 1 });
    expect((await app.request("/api/data/u1/C-1/data.json")).status).toBe(403);
  });

  it("examples/cloudflare: every wrangler file's worker runs in workerd with the bindings it declares", async () => {
    const files = (await readdir(join(root, "examples/cloudflare"))).filter((name) => /^wrangler\..+\.jsonc$/.test(name));
    expect(files.sort()).toEqual(["wrangler.all.jsonc", "wrangler.audit.jsonc", "wrangler.captcha.jsonc", "wrangler.data.jsonc", "wrangler.exchange.jsonc", "wrangler.image.jsonc", "wrangler.keys.jsonc", "wrangler.pdf.jsonc", "wrangler.review.jsonc", "wrangler.user.jsonc"]);
    for (const file of files) {
      const text = await readFile(join(root, "examples/cloudflare", file), "utf8");
      const config = JSON.parse(text.replace(/^\s*\/\/.*$/gm, "")) as {
        main: string;
        vars?: Record<string, string>;
        kv_namespaces?: { binding: string }[];
        r2_buckets?: { binding: string }[];
      };
      const outdir = join(dir, file);
      await build({
        entryPoints: [join(root, "examples/cloudflare", config.main)],
        bundle: true,
        format: "esm",
        platform: "neutral",
        mainFields: ["module", "main"],
        conditions: ["workerd", "worker", "browser"],
        alias: { "@forensic-annotation/service/cloudflare": join(root, "src/adapters/cloudflare/mod.ts") },
        outfile: join(outdir, "worker.js"),
        logLevel: "error",
      });
      const mf = new Miniflare({
        modules: true,
        scriptPath: join(outdir, "worker.js"),
        modulesRoot: outdir,
        compatibilityDate: "2026-04-01",
        kvNamespaces: (config.kv_namespaces ?? []).map((kv) => kv.binding),
        r2Buckets: (config.r2_buckets ?? []).map((r2) => r2.binding),
        bindings: { ...config.vars, R2_KEY_SECRET: "k", KEYS_AUTH: "kk", ACCOUNT_HASH: "h", IMAGES_API_TOKEN: "it", HMAC_KEY: "hk", USER_DB_AUTH: "uk", MAIL_HTTP_TOKEN: "mt", CF_IMAGES_TOKEN: "ct" },
      });
      try {
        const kind = file.split(".")[1];
        const key = (value: string) => ({ "X-Custom-Auth-Key": value });
        const request = {
          all: ["/data/u1/C-1/data.json", key("k")],
          data: ["/u1/C-1/data.json", key("k")],
          // Every case of an unknown user: 404 from its own KV, after the credential.
          exchange: ["/u1/cases", key("k")],
          audit: ["/audit/?userId=u1", key("k")],
          keys: ["/ACCOUNT_HASH", key("kk")],
          captcha: ["/", {}],
          pdf: ["/", {}],
          // Signing an imagedelivery.net URL of the account needs no upstream call.
          image: ["/https://imagedelivery.net/h/img-1/public", { Authorization: "Bearer it" }],
          // An unknown user: 404 from the user worker's own KV, no other worker called.
          user: ["/u1", key("uk")],
          // The published signature keys (none configured here): open, 200.
          review: ["/keys", {}],
        }[kind!] as [string, Record<string, string>];
        const response = await mf.dispatchFetch(`http://worker${request[0]}`, { headers: request[1] });
        expect(response.status, file).toBe(kind === "captcha" || kind === "pdf" ? 405 : kind === "user" || kind === "exchange" ? 404 : 200);
      } finally {
        await mf.dispose();
      }
    }
  }, 120_000);
});
