/**
 * Redis killed and restarted under traffic (issue 13, "Must show"; Node only). `serve` with
 * STORAGE=redis runs against a real redis-server with `--appendonly yes --appendfsync always`
 * (an acknowledged write is on disk before Redis answers). Four loops PUT and GET documents
 * and POST audit entries; redis-server is SIGKILLed: requests fail cleanly (the standard 5xx
 * body, within a bounded time, `serve` stays up); redis-server is started again on the same
 * port over the same data directory (its AOF is reloaded): requests succeed again without
 * restarting `serve`, and every audit entry that answered 200 is readable.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { closedPort } from "../helpers/http-server.ts";
import { spawnServe, type Served } from "../helpers/spawn-serve.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { requireTool } from "../helpers/system-tools.ts";

/** A redis-server that keeps its data in `dir` (AOF, fsync on every write). */
class PersistentRedis {
  proc: ChildProcess | undefined;
  constructor(readonly port: number, readonly dir: string) {}
  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  async start(timeoutMs = 10_000): Promise<void> {
    requireTool("redis-server", "redis-server");
    this.proc = spawn("redis-server", [
      "--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir,
      "--appendonly", "yes", "--appendfsync", "always", "--save", "",
    ], { stdio: "ignore" });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const client = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      client.on("error", () => undefined); // refused until the server is up
      try {
        await client.connect();
        // PING answers while the AOF is still loading; a write proves the data set is live.
        await client.set("fault-test:probe", "1");
        client.disconnect();
        return;
      } catch {
        client.disconnect();
      }
      if (Date.now() > deadline || this.proc.exitCode !== null) {
        this.proc.kill("SIGKILL");
        throw new Error(`redis-server did not accept writes on port ${this.port} within ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Ends the server the way a crash does, and waits until it is gone. */
  async kill(): Promise<void> {
    const proc = this.proc;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    proc.kill("SIGKILL");
    await gone;
  }
}

const SECRET = "redis-fault-data-key-0123";
const HEADERS = { "X-Custom-Auth-Key": SECRET, "Content-Type": "application/json" };
// Per-request bound: a request that takes longer counts as a hang.
const REQUEST_BOUND_MS = 10_000;
// While Redis is down a request must fail within this (the client retries on its own schedule).
const DOWN_ANSWER_MS = 4_000;
const LOOPS = 4;
const DOWN_MS = Number(process.env.FAULT_DOWN_MS ?? 8_000);

interface Outcome {
  what: string;
  /** performance.now() when sent and when answered. */
  sent: number;
  answered: number;
  status: number | "network-error" | "timeout";
  ms: number;
  body: string;
}

let dir: string;
let redis: PersistentRedis;
let served: Served | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-redis-restart-"));
  redis = new PersistentRedis(await closedPort(), dir);
  await redis.start();
}, 20_000);
afterAll(async () => {
  await served?.stop("SIGKILL");
  await redis?.kill();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("Redis killed and restarted under traffic (STORAGE=redis)", () => {
  it("requests fail cleanly while Redis is down and succeed again once it is back, without restarting serve; no acknowledged audit entry is lost", async () => {
    // Limits on (their counts live in Redis too) but high enough for this traffic from one IP.
    served = await spawnServe({
      dataDir: join(dir, "serve"),
      env: { STORAGE: "redis", STORAGE_URL: redis.url, R2_KEY_SECRET: SECRET, RATE_LIMITS: "data=1000000/60s,audit=1000000/60s" },
    });
    const url = served.url;
    let killedAt = Infinity;
    let restartedAt = Infinity;
    let stop = false;
    const outcomes: Outcome[] = [];
    const acknowledged = new Map<number, string[]>(); // loop -> seq of audit entries answered 200
    const lastPut = new Map<number, number>(); // loop -> i of the last PUT answered 200
    const attemptedPut = new Map<number, number>();

    const send = async (what: string, path: string, init: RequestInit = {}): Promise<Outcome> => {
      const started = performance.now();
      let outcome: Outcome;
      try {
        const response = await fetch(`${url}${path}`, { ...init, headers: HEADERS, signal: AbortSignal.timeout(REQUEST_BOUND_MS) });
        const body = await response.text();
        outcome = { what, sent: started, answered: performance.now(), status: response.status, ms: performance.now() - started, body };
      } catch (err) {
        const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
        outcome = { what, sent: started, answered: performance.now(), status: timedOut ? "timeout" : "network-error", ms: performance.now() - started, body: String(err) };
      }
      outcomes.push(outcome);
      return outcome;
    };

    const loop = async (n: number) => {
      for (let i = 0; !stop; i++) {
        attemptedPut.set(n, i);
        const put = await send("data PUT", `/data/u${n}/C-1/data.json`, { method: "PUT", body: JSON.stringify({ n, i }) });
        if (put.status === 200) lastPut.set(n, i);
        await send("data GET", `/data/u${n}/C-1/data.json`);
        const seq = `w${n}-${i}`;
        const entry = auditEntry({ userId: `u${n}`, details: { validationErrors: [], seq } });
        const post = await send("audit POST", `/data/audit/?userId=u${n}`, { method: "POST", body: JSON.stringify(entry) });
        if (post.status === 200) acknowledged.set(n, [...(acknowledged.get(n) ?? []), seq]);
      }
    };
    const loops = Array.from({ length: LOOPS }, (_, n) => loop(n));
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    await sleep(1_500);
    killedAt = performance.now();
    await redis.kill();
    await sleep(DOWN_MS);
    expect(served.proc.exitCode, "serve is still running with Redis down").toBeNull();
    const health = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
    expect(health.status, "serve still answers /health with Redis down").toBe(200);

    // Started again on the same port over the same data directory; serve is not restarted.
    // From here Redis may answer again (serve can reconnect before start() sees it ready).
    restartedAt = performance.now();
    await redis.start();
    // Traffic recovers within a bounded time once Redis is back...
    const deadline = Date.now() + 15_000;
    const sentAfter = (o: Outcome) => o.sent >= restartedAt;
    while (Date.now() < deadline && !outcomes.some((o) => sentAfter(o) && o.status === 200)) await sleep(100);
    const recoveredAt = performance.now();
    // ...and stays healthy.
    await sleep(2_000);
    stop = true;
    await Promise.all(loops);

    const summary = (list: Outcome[]) => {
      const counts: Record<string, number> = {};
      for (const o of list) counts[`${o.what} ${o.status}`] = (counts[`${o.what} ${o.status}`] ?? 0) + 1;
      return counts;
    };
    // Requests in flight at the kill may go either way; the others are judged by when they ran.
    const before = outcomes.filter((o) => o.answered < killedAt);
    const down = outcomes.filter((o) => o.sent > killedAt && o.sent < restartedAt);
    const settled = outcomes.filter((o) => o.sent > recoveredAt);
    for (const o of outcomes) expect(typeof o.status === "number", `${o.what}: ${o.status} ${o.body}`).toBe(true);
    console.log("redis restart:", JSON.stringify({ before: summary(before), down: summary(down), afterRecovery: summary(settled) }),
      `slowest while down ${Math.round(Math.max(...down.map((o) => o.ms)))} ms`);

    // Before the kill, everything worked.
    expect(before.length).toBeGreaterThan(20);
    expect(before.filter((o) => o.status !== 200), "before the kill").toEqual([]);
    // While Redis is down: no hang, no dropped connection, only the standard 5xx body.
    expect(down.length).toBeGreaterThan(LOOPS);
    for (const o of down) {
      if (o.status === 200 && o.answered > restartedAt) continue; // waited in ioredis' queue until Redis was back
      // Fails fast: ioredis' default backoff held requests 5-8 s and longer as the outage went on.
      expect(o.ms, `${o.what} took ${Math.round(o.ms)} ms with Redis down`).toBeLessThan(DOWN_ANSWER_MS);
      expect(o.status as number, `${o.what}: ${o.body}`).toBeGreaterThanOrEqual(500);
      const body = JSON.parse(o.body) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(["code", "details", "error", "message"]);
      expect(body.code).toBe("SERVER_ERROR");
      expect(o.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|ioredis|redis:|at \w|Error:/);
      expect(o.body).not.toContain(SECRET);
    }
    expect(down.filter((o) => o.status !== 200).length, "requests failed while Redis was down").toBeGreaterThanOrEqual(LOOPS);
    // Back again: requests succeed, serve was never restarted.
    expect(outcomes.some((o) => o.sent >= restartedAt && o.status === 200), "a request succeeded within 15 s of Redis being back").toBe(true);
    expect(settled.length).toBeGreaterThan(20);
    expect(settled.filter((o) => o.status !== 200), "after recovery").toEqual([]);
    expect(served.proc.exitCode).toBeNull();

    // Every audit entry that answered 200 survived the crash of Redis, once.
    for (let n = 0; n < LOOPS; n++) {
      const response = await fetch(`${url}/audit/audit/?userId=u${n}`, { headers: HEADERS });
      expect(response.status).toBe(200);
      const { entries } = (await response.json()) as { entries: { details: { seq: string } }[] };
      const stored = entries.map((entry) => entry.details.seq);
      expect(new Set(stored).size, `u${n}: no entry twice`).toBe(stored.length);
      const missing = (acknowledged.get(n) ?? []).filter((seq) => !stored.includes(seq));
      expect(missing, `u${n}: acknowledged entries missing`).toEqual([]);
      expect((acknowledged.get(n) ?? []).length).toBeGreaterThan(2);
      // The document holds the last acknowledged PUT or a later attempt, never an older one.
      const document = (await (await fetch(`${url}/data/u${n}/C-1/data.json`, { headers: HEADERS })).json()) as { i: number };
      expect(document.i).toBeGreaterThanOrEqual(lastPut.get(n)!);
      expect(document.i).toBeLessThanOrEqual(attemptedPut.get(n)!);
    }
  }, 90_000);
});
