/**
 * GET /audit/audit/verify of a day of about 100 MB through a real `serve` (files under --data):
 * the day is read and checked entry by entry, yielding to other requests, so a concurrent
 * /health answers within 100 ms throughout, and the server's memory grows by about the day's
 * bytes, not by every entry of it parsed at once. Before, verify parsed the whole day in one
 * turn: /health waited for all of it (seconds), and the server's memory grew several times the day.
 */
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainEntry, GENESIS_HASH, HEAD_FORMAT } from "../../src/core/audit/chain.ts";
import { nodeSha256Hex } from "../../src/adapters/server/node-sha256.ts";
import { type Runtime, spawnServe, type Served } from "../helpers/spawn-serve.ts";
import { KEYS } from "../helpers/service.ts";

const DAY = "2026-01-05";
const ENTRIES = 2_000;
// About 50 KB each: 2,000 entries make a day of about 100 MB.
const PAD = "x".repeat(50_000);

/** Writes a valid chained day of `entries` entries of about 50 KB and its head straight into the files store under `data`. */
async function writeDay(data: string, userId: string, entries: number): Promise<number> {
  await mkdir(join(data, "audit", "audit-trails"), { recursive: true });
  await mkdir(join(data, "audit", "audit-heads"), { recursive: true });
  const file = await open(join(data, "audit", "audit-trails", `${userId}-${DAY}.json`), "w");
  let prevHash = GENESIS_HASH;
  let last: ReturnType<typeof chainEntry> | undefined;
  let bytes = 0;
  try {
    for (let seq = 1; seq <= entries; seq++) {
      const at = `${DAY}T08:${String(Math.floor(seq / 60) % 60).padStart(2, "0")}:${String(seq % 60).padStart(2, "0")}.000Z`;
      const fields = { timestamp: at, userId, userEmail: "", action: "case-create", result: "success", details: { caseNumber: `C-${seq}`, note: PAD }, receivedAt: at };
      last = chainEntry(fields, seq, prevHash, nodeSha256Hex);
      prevHash = last.hash;
      const text = `${seq === 1 ? "[\n" : ",\n"}${JSON.stringify(last)}${seq === entries ? "\n]" : ""}`;
      bytes += Buffer.byteLength(text);
      await file.write(text);
    }
  } finally {
    await file.close();
  }
  const head = { format: HEAD_FORMAT, userId, seq: last!.seq, hash: last!.hash, day: DAY, index: entries - 1, firstDay: DAY, updatedAt: `${DAY}T09:00:00.000Z`, entry: last, until: 0 };
  await writeFile(join(data, "audit", "audit-heads", `${userId}.json`), JSON.stringify(head));
  return bytes;
}

/** The peak resident memory of a process, in bytes (Linux). */
async function peakRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

let root: string;
let dayBytes: number;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "fa-large-day-"));
  dayBytes = await writeDay(join(root, "data"), "u1", ENTRIES);
  await writeDay(join(root, "data"), "u2", 40);
}, 120_000);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const RUNTIMES: Runtime[] = ["node", "bun", "deno"];

describe.each(RUNTIMES)("verify of a ~100 MB day on %s", (runtime) => {
  let served: Served;
  beforeAll(async () => {
    served = await spawnServe({ runtime, dataDir: join(root, "data"), env: { ...KEYS, RATE_LIMITS: "off" }, timeoutMs: 120_000 });
  }, 150_000);
  afterAll(async () => {
    await served?.stop("SIGTERM");
  }, 30_000);

  it("answers the verdict while /health keeps answering within 100 ms, the server's memory bounded by the day's bytes", async () => {
    expect(dayBytes).toBeGreaterThan(95_000_000);
    // Warm both routes (first requests compile code) on a small trail.
    expect((await fetch(`${served.url}/health`)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const warm = await fetch(`${served.url}/audit/audit/verify?userId=u2`, { headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET } });
      expect(await warm.json()).toMatchObject({ valid: true, entries: 40 });
    }
    const before = await peakRss(served.proc.pid!);

    let done = false;
    const verifying = fetch(`${served.url}/audit/audit/verify?userId=u1`, { headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET } })
      .then(async (response) => ({ status: response.status, body: await response.json() as Record<string, unknown> }))
      .finally(() => (done = true));
    const waits: number[] = [];
    // Bounded: at most 2,000 probes, each bounded by the fetch itself.
    while (!done && waits.length < 2_000) {
      const started = performance.now();
      const health = await fetch(`${served.url}/health`);
      await health.arrayBuffer();
      // Every probe counts, the one the end of the verification let through too.
      waits.push(performance.now() - started);
    }
    const { status, body } = await verifying;
    expect(status).toBe(200);
    expect(body).toMatchObject({ valid: true, entries: ENTRIES });
    // The probes overlapped the verification, and it let them through: each within 100 ms. On a
    // shared machine a probe can wait for the processor itself, so one in ten may take longer,
    // and none as long as the verification (seconds, when it held the event loop throughout).
    expect(waits.length).toBeGreaterThanOrEqual(10);
    const sorted = [...waits].sort((a, b) => a - b);
    const p90 = sorted[Math.floor(sorted.length * 0.9)]!;
    expect(p90, JSON.stringify(waits.map(Math.round))).toBeLessThan(100);
    expect(sorted[sorted.length - 1]!, JSON.stringify(waits.map(Math.round))).toBeLessThan(1_000);
    // One day's bytes (and the next one read ahead, here none) at a time, not every entry parsed at once
    // (that took 3.8 times the day). Bun's collector keeps each entry's garbage longer: on a quiet
    // machine its peak grew 3.2 times the day, so there the bound is the whole-day parse's alone.
    const grown = (await peakRss(served.proc.pid!)) - before;
    expect(grown).toBeLessThan((runtime === "bun" ? 3.6 : 2.5) * dayBytes);
  }, 180_000);
});
