/**
 * SIGKILL during concurrent audit appends (issue 13, "Must show"; Node). Beyond
 * tests/adapters/server/files/crash.test.ts (which checks parseable files and counts): eight writers
 * append to one user's one day, `serve` is killed mid-storm three times and restarted on the
 * same --data, and every append that answered 200 is found exactly once by its own id, through
 * the API (GET answers 200 with the whole day).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { spawnServe, type Served } from "../helpers/spawn-serve.ts";
import { auditEntry } from "../helpers/audit-entry.ts";

const HEADERS = { "X-Custom-Auth-Key": "sigkill-data-key-0123", "Content-Type": "application/json" };
const ENV = { R2_KEY_SECRET: HEADERS["X-Custom-Auth-Key"], RATE_LIMITS: "off" };
const WRITERS = 8;
const ROUNDS = 3;

let dir: string | undefined;
let served: Served | undefined;
afterAll(async () => {
  await served?.stop("SIGKILL");
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Day {
  status: number;
  entries: { userId: string; details: { seq?: string } }[];
}

// The test may run across UTC midnight: read from the day it started.
const STARTED = new Date().toISOString().slice(0, 10);

async function readDay(url: string): Promise<Day> {
  const today = new Date().toISOString().slice(0, 10);
  const response = await fetch(`${url}/audit/audit/?userId=u1&startDate=${STARTED}&endDate=${today}`, { headers: HEADERS, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  return { status: response.status, entries: response.status === 200 ? (JSON.parse(text) as { entries: Day["entries"] }).entries : [] };
}

describe("SIGKILL during concurrent audit appends (embedded default, files)", () => {
  it("every append that answered 200 before the kill is there exactly once after a restart, over three kills", async () => {
    dir = await mkdtemp(join(tmpdir(), "fa-sigkill-"));
    const dataDir = join(dir, "data");
    const acknowledged = new Set<string>();
    const attempted = new Set<string>();
    let filename: string | undefined;

    for (let round = 0; round < ROUNDS; round++) {
      served = await spawnServe({ dataDir, env: ENV });
      const { url } = served;
      let stop = false;
      const writer = async (n: number) => {
        for (let i = 0; !stop; i++) {
          const seq = `r${round}-w${n}-${i}`;
          attempted.add(seq);
          try {
            const response = await fetch(`${url}/data/audit/?userId=u1`, {
              method: "POST",
              headers: HEADERS,
              body: JSON.stringify(auditEntry({ userId: "u1", details: { validationErrors: [], seq } })),
              signal: AbortSignal.timeout(10_000),
            });
            if (response.status === 200) {
              filename = ((await response.json()) as { filename: string }).filename;
              acknowledged.add(seq);
            }
          } catch {
            // The server was killed under this request: it was never acknowledged.
          }
        }
      };
      const ackedBefore = acknowledged.size;
      const writers = Array.from({ length: WRITERS }, (_, n) => writer(n));
      // Kill mid-storm: once a good number of appends of this round were acknowledged.
      const deadline = Date.now() + 20_000;
      while (acknowledged.size - ackedBefore < 60 + round * 25 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      served.proc.kill("SIGKILL");
      expect(await served.exited).toBe("SIGKILL");
      stop = true;
      await Promise.all(writers);
      served = undefined;
      expect(acknowledged.size - ackedBefore, `round ${round} appended before the kill`).toBeGreaterThanOrEqual(60);
    }

    served = await spawnServe({ dataDir, env: ENV });
    const day = await readDay(served.url);
    expect(day.status, "the day is readable after the kills").toBe(200);
    const seqs = day.entries.map((entry) => entry.details.seq);
    // Nothing unreadable, nothing foreign.
    expect(seqs.filter((seq) => seq === undefined || !attempted.has(seq)), "entries that no writer sent").toEqual([]);
    const seen = new Map<string, number>();
    for (const seq of seqs as string[]) seen.set(seq, (seen.get(seq) ?? 0) + 1);
    expect([...seen].filter(([, count]) => count > 1), "entries stored twice").toEqual([]);
    expect([...acknowledged].filter((seq) => !seen.has(seq)), "acknowledged entries lost").toEqual([]);
    console.log(`sigkill appends: ${acknowledged.size} acknowledged, ${seqs.length} stored (${seqs.length - acknowledged.size} answered by no 200), in ${filename}`);

    // The day goes on where it was: the next append counts every stored entry.
    const next = await fetch(`${served.url}/audit/audit/?userId=u1`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify(auditEntry({ userId: "u1", details: { validationErrors: [], seq: "after" } })),
    });
    expect(next.status).toBe(200);
    if (new Date().toISOString().slice(0, 10) === STARTED) {
      expect(((await next.json()) as { entryCount: number }).entryCount).toBe(seqs.length + 1);
    }
  }, 120_000);
});
