/**
 * `passClientIp()` of each runtime's adapter, in a host Hono app served the way that runtime
 * serves one (`@hono/node-server`, `Deno.serve(app.fetch)`, a module worker in workerd; Bun in
 * tests/examples/embed-in-hono.test.ts): per-IP limits count the real client, the admin's
 * audit entries record its address, and an unset key is named in the refusal.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { Hono } from "hono";
import { serve, type ServerType } from "@hono/node-server";
import { createMemoryPorts, createService, parseConfig } from "../../mod.ts";
import { passClientIp } from "../../src/adapters/node/mod.ts";
import { spawnUntilReady, type Served } from "../helpers/spawn-serve.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const ENV = { R2_KEY_SECRET: "k", ADMIN_AUTH: "a", RATE_LIMITS: "audit=2/60s" };
const key = { "X-Custom-Auth-Key": "k" };
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-client-ip-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The host app every runtime serves: its own route, then the service under /forensic. */
function hostAppSource(adapter: string, serveLine: string): string {
  return `
import { Hono } from "hono";
import { createMemoryPorts, createService, parseConfig } from "${join(root, "mod.ts")}";
import { passClientIp } from "${join(root, `src/adapters/${adapter}/mod.ts`)}";
const app = new Hono();
app.use("*", passClientIp());
app.route("/forensic", createService(createMemoryPorts(), parseConfig(${JSON.stringify(ENV)})));
${serveLine}
`;
}

/** Two reads pass, the third from the same client is refused per IP; the admin's entry records the address. */
async function expectClientCounted(send: (path: string, init?: RequestInit) => Promise<Response>, ip: string): Promise<void> {
  const admin = { ...key, "X-Admin-Key": "a" };
  expect((await send("/forensic/data/u1/C-1/data.json", { method: "PUT", headers: admin, body: "{}" })).status).toBe(200);
  const first = await send("/forensic/audit/audit?userId=u1", { headers: key });
  expect(first.status).toBe(200);
  const { entries } = (await first.json()) as { entries: { details: { securityDetails: { clientIp?: string } } }[] };
  expect(entries.map((entry) => entry.details.securityDetails.clientIp)).toEqual([ip]);
  expect((await send("/forensic/audit/audit/?userId=u1", { headers: key })).status).toBe(200);
  const refused = await send("/forensic/audit/audit?userId=u1", { headers: key });
  expect(refused.status).toBe(429);
  expect(((await refused.json()) as { details: { scope: string } }).details.scope).toBe("ip");
  // USER_DB_AUTH is not configured in the host app: the refusal says so, on every runtime.
  const user = await send("/forensic/user/u1/", { headers: key });
  expect(user.status).toBe(401);
  expect(((await user.json()) as { details: unknown }).details).toEqual({ keyConfigured: false, variable: "USER_DB_AUTH" });
}

describe("passClientIp in a host app", () => {
  it("[node] @hono/node-server: the socket's peer", async () => {
    const app = new Hono();
    app.use("*", passClientIp());
    app.route("/forensic", createService(createMemoryPorts(), parseConfig(ENV)));
    const server = await new Promise<ServerType>((resolve) => {
      const started = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(started));
    });
    try {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      await expectClientCounted((path, init) => fetch(`http://127.0.0.1:${port}${path}`, init), "127.0.0.1");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("[deno] Deno.serve(app.fetch): the connection's remote address", async () => {
    const script = join(dir, "deno-host.ts");
    const serveLine = `Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: (a) => console.log("ready http://127.0.0.1:" + a.port) }, app.fetch);`;
    await writeFile(script, hostAppSource("deno", serveLine));
    let served: Served | undefined;
    try {
      served = await spawnUntilReady(join(root, "node_modules/.bin/deno"), ["run", "-A", "--unstable-kv", `--config=${join(root, "deno.json")}`, script], {
        cwd: root,
        timeoutMs: 60_000,
      });
      const url = served.url;
      await expectClientCounted((path, init) => fetch(`${url}${path}`, init), "127.0.0.1");
    } finally {
      await served?.stop();
    }
  }, 90_000);

  it("[workerd] a module worker: CF-Connecting-IP", async () => {
    const entry = join(dir, "worker-host.ts");
    await writeFile(entry, hostAppSource("cloudflare", "export default app;"));
    const outfile = join(dir, "worker", "worker.js");
    await build({
      entryPoints: [entry],
      bundle: true,
      format: "esm",
      platform: "neutral",
      mainFields: ["module", "main"],
      conditions: ["workerd", "worker", "browser"],
      nodePaths: [join(root, "node_modules")],
      outfile,
      logLevel: "error",
    });
    const mf = new Miniflare({ modules: true, scriptPath: outfile, modulesRoot: join(dir, "worker"), compatibilityDate: "2026-04-01" });
    try {
      const send = async (path: string, init: RequestInit = {}) => {
        const headers = { ...(init.headers as Record<string, string> | undefined), "CF-Connecting-IP": "203.0.113.7" };
        // Miniflare's own Response, read the same way.
        return (await mf.dispatchFetch(`http://worker${path}`, { ...init, headers } as never)) as unknown as Response;
      };
      await expectClientCounted(send, "203.0.113.7");
    } finally {
      await mf.dispose();
    }
  }, 90_000);
});
