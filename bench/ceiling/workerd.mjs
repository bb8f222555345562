// The service and its ceiling in one workerd (Miniflare): the whole-service module worker
// (bundled as wrangler bundles it, local KV and R2 under --data) and a no-op worker that
// answers each scenario's body, each on a socket of its own so neither routes through the
// other. Prints `ready <service URL> <no-op URL> <floor URL> <service URL, LOG_LEVEL=off> <floor URL, with a log line>`. Run it under taskset: workerd inherits it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { bundleWorker, passRuntimeOutput, serviceWorkerOptions } from "../../scripts/start-workerd.mjs";

const [dataDir] = process.argv.slice(2);
const bodies = readFileSync(process.env.BENCH_BODIES, "utf8");
const scriptPath = await bundleWorker("all", join(dataDir, ".workerd", "worker.js"), true);
const noop = `
const table = ${bodies};
const bodies = Object.fromEntries(Object.entries(table).map(([path, { type, base64 }]) => [path, { type, bytes: Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)) }]));
export default {
  async fetch(request) {
    if (request.body !== null) await request.arrayBuffer();
    const pathname = new URL(request.url).pathname;
    const end = pathname.indexOf("/", 1);
    const body = bodies[end === -1 ? pathname.slice(1) : pathname.slice(1, end)] ?? bodies.default;
    return new Response(body.bytes, { headers: { "content-type": body.type } });
  },
};`;
// One request log line of the service's shape, written as the service writes it (one string to
// console.log): the floor plus what OPERATIONS.md asks of every request, on Miniflare's console.
const LOG_LINE = `console.log(JSON.stringify({ time: new Date().toISOString(), level: "info", requestId: crypto.randomUUID(), method: request.method, route: "/user/{userId}", status: response.status, durationMs: Math.round((performance.now() - startedAt) * 1000) / 1000, bytes: Number(response.headers.get("content-length") ?? 0), worker: "user" }));`;
// The floor: only the store operation a route cannot do without (R2 get or put of the key,
// KV get, KV get then put of the record), answered as it comes, with no checks at all. The
// service's figure over this one is what our code costs; the rest is Miniflare's local
// R2/KV simulation, which any worker on these bindings pays.
const floorScript = (logLine) => `
async function answer(request, env) {
  const path = new URL(request.url).pathname;
  const type = { "content-type": "application/json" };
  if (path.startsWith("/data/")) {
    const key = decodeURIComponent(path.slice(6));
    if (request.method === "PUT") {
      await env.STRIAE_DATA.put(key, await request.arrayBuffer());
      return new Response('{"success":true}', { headers: type });
    }
    const object = await env.STRIAE_DATA.get(key);
    return new Response(object === null ? "[]" : object.body, { headers: type });
  }
  if (path.startsWith("/user/")) {
    const key = decodeURIComponent(path.slice(6));
    const stored = await env.USER_DB.get(key, "text");
    if (request.method === "PUT") {
      const record = { ...JSON.parse(stored ?? "{}"), ...(await request.json()) };
      const text = JSON.stringify(record);
      await env.USER_DB.put(key, text);
      return new Response(text, { headers: type });
    }
    return new Response(stored, { headers: type });
  }
  return new Response("not found", { status: 404 });
}
export default {
  async fetch(request, env) {
    const startedAt = performance.now();
    const response = await answer(request, env);
    ${logLine ? LOG_LINE : ""}
    return response;
  },
};`;
const floor = floorScript(false);
const secrets = JSON.parse(process.env.BENCH_SECRETS);
/** The whole-service bundle as start:workerd runs it, as a worker named `name` with `bindings`. */
const service = (name, bindings) => ({ name, ...serviceWorkerOptions(scriptPath, dataDir, bindings), unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] });
const mf = new Miniflare({
  host: "127.0.0.1",
  port: 0,
  handleRuntimeStdio: passRuntimeOutput,
  // Shared options: the stores persist under --data, so a restart keeps what was stored.
  kvPersist: join(dataDir, "kv"),
  r2Persist: join(dataDir, "r2"),
  workers: [
    service("service", secrets),
    // The same service with its request log off: what the log line costs on Miniflare.
    service("quiet", { ...secrets, LOG_LEVEL: "off" }),
    {
      name: "noop",
      modules: true,
      script: noop,
      compatibilityDate: "2026-04-01",
      unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    },
    {
      name: "floor",
      modules: true,
      script: floor,
      compatibilityDate: "2026-04-01",
      kvNamespaces: ["USER_DB"],
      r2Buckets: ["STRIAE_DATA"],
      unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    },
    {
      name: "floor-log",
      modules: true,
      script: floorScript(true),
      compatibilityDate: "2026-04-01",
      kvNamespaces: ["USER_DB"],
      r2Buckets: ["STRIAE_DATA"],
      unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    },
  ],
});
await mf.ready;
const urls = await Promise.all(["service", "noop", "floor", "quiet", "floor-log"].map((name) => mf.unsafeGetDirectURL(name)));
console.log(`ready ${urls.map((url) => url.origin).join(" ")}`);
process.on("SIGTERM", () => mf.dispose().finally(() => process.exit(0)));
