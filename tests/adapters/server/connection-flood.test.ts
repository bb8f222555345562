/**
 * Issue 42, item 6: connections that send part of a request's headers and stop no longer use up
 * the server. Thousands of real half-open connections (from other loopback addresses, 127.0.0.x)
 * against a spawned `serve` with the limits lowered (HEADERS_TIMEOUT_SECONDS,
 * MAX_CONNECTIONS_PER_CLIENT, MAX_CONNECTIONS): a keep-alive client connected before keeps its
 * answers (reading a file, where exhausted descriptors were a 500), a new client is answered, and
 * every slow connection is closed within the headers timeout and a few seconds, and the server
 * never holds more descriptors than the limits and a margin. Deno's and Bun's serve run their
 * node:http and are held to the same bounds as Node (with Deno.serve the 3000 held 3025
 * descriptors). With BUN_SERVER=bun-serve (docs/configuration.md#connections) Bun runs Bun.serve,
 * which closes a connection silent before its first request after its own fixed ~10-12 s (its
 * idleTimeout applies only after a request) and refuses none, so what is checked there is that
 * clients keep their answers and the slow ones are closed within that.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { readdirSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, type Served, spawnServe } from "../../helpers/spawn-serve.ts";

const DATA_KEY = "flood-data-key";
const HEADERS_TIMEOUT_SECONDS = 2;
const PER_CLIENT = 100;
const TOTAL = 600;
// Closed within the headers timeout, the time the server takes to notice it, and the 408's linger.
const CLOSED_WITHIN_MS = (HEADERS_TIMEOUT_SECONDS + 6) * 1000;

interface Slow {
  socket: Socket;
  closedAt: number | undefined;
  received: string;
}

/** Opens `count` connections from `localAddress` that send part of a request's headers and stop. */
async function openSlow(port: number, localAddress: string, count: number): Promise<Slow[]> {
  const opened: Slow[] = [];
  // In batches: the listen backlog holds a few hundred; more at once would wait on SYN retries.
  for (let start = 0; start < count; start += 200) {
    await Promise.all(Array.from({ length: Math.min(200, count - start) }, () =>
      new Promise<void>((resolve) => {
        const slow: Slow = { socket: connect({ host: "127.0.0.1", port, localAddress }), closedAt: undefined, received: "" };
        slow.socket.on("error", () => {});
        slow.socket.on("close", () => (slow.closedAt = Date.now()));
        slow.socket.on("data", (chunk: Buffer) => (slow.received += chunk.toString("latin1")));
        slow.socket.once("connect", () => {
          slow.socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
          resolve();
        });
        // Refused before connecting (the server closed it at accept): counts as closed.
        slow.socket.once("close", () => resolve());
        opened.push(slow);
      })
    ));
  }
  return opened;
}

/** GET over `agent` (one keep-alive connection); the status, or the error's message. */
function get(url: string, path: string, agent?: Agent, headers: Record<string, string> = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(`${url}${path}`, { agent: agent ?? false, headers, timeout: 10_000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy(new Error("no answer in 10 s")));
    req.on("error", (err) => resolve(err.message));
    req.end();
  });
}

/** Descriptors the process holds (Linux). */
const openDescriptors = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

async function allClosed(slow: readonly Slow[], withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs + 5_000;
  while (slow.some((one) => one.closedAt === undefined) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
}

/**
 * What each runtime's server bounds: limits on connections (Node, Deno), a timeout on silent ones
 * (Node, Deno; Bun's own, fixed). `answered503`: of the 2900 over the address's limit, how many at
 * least read the 503; the others came while MAX_CONNECTIONS were open (the refused ones among them,
 * until they close) and were closed at accept. Deno's node:http closes the refused ones more slowly
 * under the flood: 1877 to 2634 read the 503 in 8 runs on a shared 2-core machine (Node above 2000).
 */
const CASES: readonly { name: string; runtime: Runtime; limitsSet: boolean; env?: Record<string, string>; bounds: { refuses: boolean; answered503: number; closedWithinMs: number } }[] = [
  { name: "node", runtime: "node", limitsSet: true, bounds: { refuses: true, answered503: 2000, closedWithinMs: CLOSED_WITHIN_MS } },
  // Bun's default server, its node:http: as Node.
  { name: "bun", runtime: "bun", limitsSet: true, bounds: { refuses: true, answered503: 1500, closedWithinMs: CLOSED_WITHIN_MS } },
  // Bun.serve, asked for: faster, with Bun's own fixed close of silent connections only.
  { name: "bun, BUN_SERVER=bun-serve", runtime: "bun", limitsSet: false, env: { BUN_SERVER: "bun-serve" }, bounds: { refuses: false, answered503: 0, closedWithinMs: 12_000 } },
  { name: "deno", runtime: "deno", limitsSet: true, bounds: { refuses: true, answered503: 1500, closedWithinMs: CLOSED_WITHIN_MS } },
];

for (const { name, runtime, limitsSet, env, bounds } of CASES) {
  describe.runIf(process.platform === "linux")(`[${name}] half-open connections`, () => {
    let dir: string;
    let served: Served;
    let port: number;
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    const dataHeaders = { "X-Custom-Auth-Key": DATA_KEY };
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `fa-flood-${runtime}-${limitsSet ? "limits" : "defaults"}-`));
      served = await spawnServe({
        runtime,
        dataDir: join(dir, "data"),
        env: {
          R2_KEY_SECRET: DATA_KEY,
          RATE_LIMITS: "off",
          ...(limitsSet ? { HEADERS_TIMEOUT_SECONDS: String(HEADERS_TIMEOUT_SECONDS), MAX_CONNECTIONS_PER_CLIENT: String(PER_CLIENT), MAX_CONNECTIONS: String(TOTAL) } : {}),
          ...env,
        },
        timeoutMs: 60_000,
      });
      port = Number(new URL(served.url).port);
    }, 90_000);
    afterAll(async () => {
      keepAlive.destroy();
      await served?.stop("SIGTERM");
      await rm(dir, { recursive: true, force: true });
    }, 30_000);

    // A file read: `[]` (200) for a case never written; a 500 when the server has no descriptor left.
    const readFile = () => get(served.url, "/data/flood-user/case-1/data.json", keepAlive, dataHeaders);

    it(`[${name}] 3000 half-open connections from one address: established and new clients answered, the slow ones closed within the headers timeout`, async () => {
      expect(await readFile()).toBe(200);
      const started = Date.now();
      const slow = await openSlow(port, "127.0.0.2", 3000);
      const during = [await readFile(), await readFile(), await get(served.url, "/health"), await get(`http://127.0.0.1:${port}`, "/health")];
      expect(during).toEqual([200, 200, 200, 200]);
      if (bounds.refuses) expect(openDescriptors(served.proc.pid!), "descriptors held by the server").toBeLessThan(PER_CLIENT + 200);
      await allClosed(slow, bounds.closedWithinMs);
      const late = slow.filter((one) => one.closedAt === undefined || one.closedAt - started > bounds.closedWithinMs + 10_000);
      expect(late.length, "slow connections still open or closed late").toBe(0);
      expect(Math.max(...slow.map((one) => one.closedAt! - started)), "ms until the last slow connection was closed").toBeLessThan(bounds.closedWithinMs + 4_000);
      if (bounds.refuses) {
        // Those over the address's limit were told why, with when to come back.
        const refused = slow.filter((one) => one.received.startsWith("HTTP/1.1 503 "));
        expect(refused.length, "connections answered 503").toBeGreaterThan(bounds.answered503);
        for (const one of refused) expect(one.received).toMatch(/\r\nRetry-After: \d+\r\n[\s\S]*"code":"SERVER_ERROR"/);
      }
      expect(await readFile()).toBe(200);
    }, 120_000);

    it(`[${name}] 2000 half-open connections from 20 addresses: the established client keeps its answers, a new one is answered once the slow ones are closed`, async () => {
      expect(await readFile()).toBe(200);
      const started = Date.now();
      const slow = (await Promise.all(Array.from({ length: 20 }, (_, n) => openSlow(port, `127.0.0.${10 + n}`, PER_CLIENT)))).flat();
      const during = [await readFile(), await readFile(), await readFile()];
      expect(during).toEqual([200, 200, 200]);
      if (bounds.refuses) expect(openDescriptors(served.proc.pid!), "descriptors held by the server").toBeLessThan(TOTAL + 100);
      await allClosed(slow, bounds.closedWithinMs);
      expect(slow.filter((one) => one.closedAt === undefined).length, "slow connections still open").toBe(0);
      expect(Math.max(...slow.map((one) => one.closedAt! - started)), "ms until the last slow connection was closed").toBeLessThan(bounds.closedWithinMs + 4_000);
      expect(await get(served.url, "/health")).toBe(200);
      expect(await readFile()).toBe(200);
    }, 120_000);
  });
}
