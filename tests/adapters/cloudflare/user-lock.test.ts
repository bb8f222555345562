/**
 * The per-user lock in real workerd (Miniflare). workerd cancels a request whose client resets
 * its connection (wrk does at the end of a run) wherever the request is waiting. The old lock
 * chained each waiter onto the promise of the request before it, so one cancelled request,
 * holding the lock or waiting for it, left every later write of that user waiting for good.
 * Here a user's record is written while its KV put waits on a gate the test opens, so the
 * lock is held for as long as the test needs.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { build } from "esbuild";
import type { Miniflare, Response as MiniflareResponse } from "miniflare";
import { connect, type Socket } from "node:net";
import { SERVICE_STORES, useWorkerd } from "../../helpers/workerd-service.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const KEY = "user-db-key-0123456789";
const headers = { "X-Custom-Auth-Key": KEY, "Content-Type": "application/json" };

/** The whole-service worker with a `USER_DB` whose puts first ask the `GATE` service binding. */
const ENTRY = `
import { createCloudflareWorker, serviceOnBindings } from "${join(root, "src/adapters/cloudflare/worker.ts")}";
const worker = createCloudflareWorker(serviceOnBindings);
const gated = new WeakMap();
function gatedEnv(env) {
  let wrapped = gated.get(env);
  if (wrapped === undefined) {
    const kv = env.USER_DB;
    const USER_DB = {
      get: (key, type) => kv.get(key, type),
      put: async (key, value) => {
        await (await env.GATE.fetch("http://gate/put")).arrayBuffer();
        return kv.put(key, value);
      },
      delete: (key) => kv.delete(key),
      list: (options) => kv.list(options),
    };
    wrapped = { ...env, USER_DB };
    gated.set(env, wrapped);
  }
  return wrapped;
}
// EMBEDDED: as a host app that calls the worker without its ExecutionContext (no waitUntil).
export default { fetch: (request, env, ctx) => worker.fetch(request, gatedEnv(env), env.EMBEDDED === "1" ? undefined : ctx) };
`;

/** A gate the worker's KV puts pass: open, or closed until {@link Gate.open}, telling when a put waits at it. */
interface Gate {
  handler: () => Promise<Response>;
  close(): Promise<void>;
  open(): void;
}

function gate(): Gate {
  let closed: Promise<void> | undefined;
  let opened = () => {};
  let arrived = () => {};
  let arrival = Promise.resolve();
  return {
    handler: async () => {
      arrived();
      if (closed !== undefined) await closed;
      return new Response("ok");
    },
    close() {
      closed = new Promise((resolve) => (opened = resolve));
      arrival = new Promise((resolve) => (arrived = resolve));
      return arrival;
    },
    open() {
      closed = undefined;
      opened();
    },
  };
}

const workerd = useWorkerd("fa-user-lock-");

async function start(kvGate: Gate, embedded = false): Promise<Miniflare> {
  await writeFile(join(workerd.dir(), "entry.js"), ENTRY);
  const scriptPath = join(workerd.dir(), "worker.js");
  await build({
    entryPoints: [join(workerd.dir(), "entry.js")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "browser"],
    outfile: scriptPath,
    logLevel: "error",
  });
  return await workerd.start({
    scriptPath,
    ...SERVICE_STORES,
    bindings: { USER_DB_AUTH: KEY, RATE_LIMITS: "off", EMBEDDED: embedded ? "1" : "0" },
    serviceBindings: { GATE: kvGate.handler },
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
  });
}

/** The answer, or a failure naming the request when none comes within 20 s (the old lock never answered). */
async function answered(label: string, response: Promise<MiniflareResponse>): Promise<MiniflareResponse> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const none = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${label}: no answer in 20 s`)), 20_000)));
  try {
    return await Promise.race([response, none]);
  } finally {
    clearTimeout(timer);
  }
}

const put = (mf: Miniflare, body: Record<string, unknown>) =>
  answered(`PUT ${JSON.stringify(body)}`, mf.dispatchFetch("http://w/user/u1", { method: "PUT", headers, body: JSON.stringify(body) }));
/** A user PUT sent over a socket of its own, which the caller resets (as wrk does at the end of a run). */
async function rawPut(direct: URL, body: Record<string, unknown>): Promise<Socket> {
  const text = JSON.stringify(body);
  const socket = connect(Number(direct.port), "127.0.0.1");
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write(`PUT /user/u1 HTTP/1.1\r\nHost: w\r\nX-Custom-Auth-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${text.length}\r\n\r\n${text}`);
  return socket;
}

const account = { email: "u1@lab.example", permitted: true, firstName: "Ada", lastName: "Lovelace", company: "First Lab" };

describe("the per-user lock in workerd", () => {
  it("[workerd] a write queued behind a slow write of the same user is answered, and so is every later one", async () => {
    const kvGate = gate();
    const mf = await start(kvGate);
    expect((await put(mf, account)).status).toBe(201);

    const held = kvGate.close();
    const first = put(mf, { company: "Second Lab" });
    await held;
    // The first write holds the user's lock, waiting at the gate; the second queues behind it.
    const second = put(mf, { company: "Third Lab" });
    // Reads take no lock: answered while both writes wait (workerd's thread idles in between).
    for (let i = 0; i < 3; i++) expect((await mf.dispatchFetch("http://w/user/u1", { headers })).status).toBe(200);
    kvGate.open();

    const answers = await Promise.all([first, second]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(((await answers[1]!.json()) as { company: string }).company).toBe("Third Lab");
    const later = await put(mf, { lastName: "Byron" });
    expect(later.status).toBe(200);
    const stored = await mf.dispatchFetch("http://w/user/u1", { headers });
    expect(await stored.json()).toMatchObject({ company: "Third Lab", lastName: "Byron", firstName: "Ada" });
  }, 60_000);

  /** The user reads 200 while the gone writer waits, its connection is reset, and the user still reads 200. */
  async function resetWhileReadable(mf: Miniflare, gone: Socket): Promise<void> {
    for (let i = 0; i < 2; i++) expect((await mf.dispatchFetch("http://w/user/u1", { headers })).status).toBe(200);
    gone.resetAndDestroy();
    for (let i = 0; i < 2; i++) expect((await mf.dispatchFetch("http://w/user/u1", { headers })).status).toBe(200);
  }

  it("[workerd] a write whose client disconnects while it holds the lock still releases it", async () => {
    const kvGate = gate();
    const mf = await start(kvGate);
    const direct = await mf.unsafeGetDirectURL();
    expect((await put(mf, account)).status).toBe(201);

    const held = kvGate.close();
    const gone = await rawPut(direct, { company: "Gone Lab" });
    await held;
    const second = put(mf, { company: "Third Lab" });
    await resetWhileReadable(mf, gone);
    kvGate.open();
    expect((await second).status).toBe(200);
    const later = await put(mf, { lastName: "Byron" });
    expect(later.status).toBe(200);
    expect(await later.json()).toMatchObject({ lastName: "Byron", firstName: "Ada", company: "Third Lab" });
  }, 60_000);

  it("[workerd] a write whose client disconnects while it waits for the lock leaves the user writable, without waitUntil too", async () => {
    const kvGate = gate();
    // Embedded: nothing keeps the cancelled waiter going; the lock must not depend on it.
    const mf = await start(kvGate, true);
    const direct = await mf.unsafeGetDirectURL();
    expect((await put(mf, account)).status).toBe(201);

    const held = kvGate.close();
    const first = put(mf, { company: "Second Lab" });
    await held;
    const gone = await rawPut(direct, { company: "Gone Lab" });
    await resetWhileReadable(mf, gone);
    kvGate.open();
    expect((await first).status).toBe(200);
    const later = await put(mf, { lastName: "Byron" });
    expect(later.status).toBe(200);
    expect(await later.json()).toMatchObject({ lastName: "Byron", firstName: "Ada" });
  }, 60_000);
});
