#!/usr/bin/env node
// The cost of FSYNC on the embedded default: latency of audit appends (POST /data/audit/)
// and data writes (PUT /data/...) against `serve`, one request at a time (each fsync on its
// own, as a lone examiner sees it) and 16 in flight, with FSYNC=off, audit and all.
// Figures only: it fails only on a real error (a non-2xx answer).
//
//   npm run build && node bench/fsync.mjs          500 requests per phase
//   options: --requests N, --data-root DIR (where --data goes: the disk you mean to measure;
//            default the system's temporary folder; --dir is the same)
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { dataRootOrExit } from "./data-root.mjs";
import { track } from "./children.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist/src/adapters/node/cli.js");
const { values: options } = parseArgs({
  options: { requests: { type: "string", default: "500" }, "data-root": { type: "string" }, dir: { type: "string" }, help: { type: "boolean", short: "h" } },
});
if (options.help) {
  console.log("Usage: node bench/fsync.mjs [--requests N] [--data-root DIR]");
  process.exit(0);
}
const requests = Number(options.requests);
if (!Number.isInteger(requests) || requests <= 0) {
  console.error("--requests must be a positive integer");
  process.exit(2);
}
if (!existsSync(cli)) {
  console.error(`dist/ is missing (${cli} not found). Build first: npm run build`);
  process.exit(1);
}

const KEY = "bench-key";
const headers = { "X-Custom-Auth-Key": KEY, "Content-Type": "application/json" };
const entry = (n) =>
  JSON.stringify({
    timestamp: new Date().toISOString(),
    userId: "bench",
    userEmail: "bench@lab.example",
    action: "case-create",
    result: "success",
    details: { caseNumber: `C-${n}`, validationErrors: [], workflowPhase: "casework" },
  });

/** Starts serve with FSYNC=`fsync` on a fresh --data folder; resolves with its URL and a stop(). */
async function serve(fsync, base) {
  const data = mkdtempSync(join(base, `fa-fsync-${fsync}-`));
  // Removed by stop(), or at exit when the bench ends before it.
  process.once("exit", () => rmSync(data, { recursive: true, force: true }));
  const proc = track(spawn(process.execPath, [cli, "serve", "--port", "0", "--data", data], {
    env: { PATH: process.env.PATH, R2_KEY_SECRET: KEY, RATE_LIMITS: "off", FSYNC: fsync },
    stdio: ["ignore", "pipe", "pipe"],
  }));
  let out = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 30_000);
    const check = (chunk) => {
      out += chunk;
      const match = /^ready\s+(http:\/\/\S+)/m.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    proc.stdout.on("data", check);
    proc.stderr.on("data", check);
    proc.once("exit", (code) => reject(new Error(`serve exited (${code}):\n${out}`)));
  });
  return {
    url,
    stop: async () => {
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      proc.kill("SIGTERM");
      await exited;
      rmSync(data, { recursive: true, force: true });
    },
  };
}

async function timed(send) {
  const start = process.hrtime.bigint();
  const response = await send();
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** Runs `count` requests, `inFlight` at a time; answers p50, p99 (ms) and requests/s. */
async function phase(count, inFlight, send) {
  const times = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) times.push(await timed(() => send(next++)));
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), perSecond: count / seconds };
}

const dataFolder = dataRootOrExit(options["data-root"] ?? options.dir);
const base = dataFolder.dir;
console.log(`FSYNC cost on ${os.cpus().length} cores, --data under ${dataFolder.description}, ${requests} requests per phase`);
console.log("FSYNC  phase                     p50 ms   p99 ms    req/s");
const show = (fsync, name, r) =>
  console.log(`${fsync.padEnd(6)} ${name.padEnd(24)} ${r.p50.toFixed(2).padStart(7)}  ${r.p99.toFixed(2).padStart(7)}  ${r.perSecond.toFixed(0).padStart(7)}`);

for (const fsync of ["off", "audit", "all"]) {
  const server = await serve(fsync, base);
  try {
    const append = (n) => fetch(`${server.url}/data/audit/?userId=bench`, { method: "POST", headers, body: entry(n) });
    const put = (n) => fetch(`${server.url}/data/bench/C-${n % 50}/data.json`, { method: "PUT", headers, body: JSON.stringify({ n }) });
    await phase(50, 1, append); // warm-up: the day's file exists, the JIT is warm
    await phase(50, 1, put);
    show(fsync, "audit append, 1 at once", await phase(requests, 1, append));
    show(fsync, "audit append, 16 at once", await phase(requests, 16, append));
    show(fsync, "data PUT, 1 at once", await phase(requests, 1, put));
  } finally {
    await server.stop();
  }
}
