#!/usr/bin/env node
// Throughput and latency of `serve` (data GET/PUT, audit POST) against a bare node:http
// server, and the cost of the Nth append to one user's audit day. Figures only: it never
// fails because a target is missed, only on a real error (a failed request, a bad read-back).
//
//   npm run build && npm run bench            full run (about a minute on 2 cores)
//   node bench/run.mjs --quick                short run (a few seconds per phase)
//   options: --duration S (measured seconds per load phase), --concurrency N (in flight),
//            --appends N (sequential appends to one day, default 10000)
// See bench/README.md.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startServer, stopServer } from "./children.mjs";
import { makeDocument } from "./documents.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist/src/adapters/node/cli.js");

// ---------------------------------------------------------------- options

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      duration: { type: "string" },
      concurrency: { type: "string", default: "32" },
      appends: { type: "string", default: "10000" },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
if (options.help) {
  console.log("Usage: node bench/run.mjs [--quick] [--duration SECONDS] [--concurrency N] [--appends N]");
  process.exit(0);
}
const duration = Number(options.duration ?? (options.quick ? 2 : 10));
const warmup = options.quick ? 0.5 : 2;
const concurrency = Number(options.concurrency);
const appendCount = Number(options.appends);
for (const [name, value] of [["--duration", duration], ["--concurrency", concurrency], ["--appends", appendCount]]) {
  if (!Number.isFinite(value) || value <= 0 || (name !== "--duration" && !Number.isInteger(value))) {
    console.error(`${name} must be a positive ${name === "--duration" ? "number" : "integer"}`);
    process.exit(2);
  }
}

if (!existsSync(cli)) {
  console.error(`dist/ is missing (${cli} not found).\nBuild first:  npm run build   then  npm run bench`);
  process.exit(1);
}

// ---------------------------------------------------------------- cleanup

// Children are stopped at exit by track() (bench/children.mjs); the folders go with them.
const tempDirs = new Set();
process.on("exit", () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
});

// ---------------------------------------------------------------- children

// The bare server: node:http answering the same 2 KB JSON document to every request.
const BARE_SERVER = `
const http = require("node:http");
const doc = Buffer.from(process.env.BENCH_DOC, "utf8");
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json", "content-length": doc.length });
    res.end(doc);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log("ready http://127.0.0.1:" + server.address().port));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
`;

// ---------------------------------------------------------------- HTTP client

/** One request over `agent`; resolves with status and body, the time taken in ms. */
function request(agent, base, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(
      { agent, hostname: base.hostname, port: base.port, method, path, headers },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks), ms: performance.now() - started }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Closed-loop load: `concurrency` loops, each with one request in flight, for `warmup`
 * seconds (discarded) then `seconds` (measured). `make(slot)` returns the request's
 * [method, path, headers, body]; `ok(response)` says whether it succeeded.
 */
async function load(baseUrl, make, ok) {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  const latencies = [];
  let errors = 0;
  let firstError = null;
  const run = async (slot, until, measure) => {
    while (performance.now() < until) {
      const [method, path, headers, body] = make(slot);
      try {
        const response = await request(agent, base, method, path, headers, body);
        if (!ok(response)) throw new Error(`${method} ${path} -> ${response.status} ${response.body.toString("utf8").slice(0, 200)}`);
        if (measure) latencies.push(response.ms);
      } catch (err) {
        errors++;
        firstError ??= err;
      }
    }
  };
  const slots = Array.from({ length: concurrency }, (_, slot) => slot);
  const warmEnd = performance.now() + warmup * 1000;
  await Promise.all(slots.map((slot) => run(slot, warmEnd, false)));
  const started = performance.now();
  const end = started + duration * 1000;
  await Promise.all(slots.map((slot) => run(slot, end, true)));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    count: latencies.length,
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    firstError,
  };
}

// ---------------------------------------------------------------- the documents

const DOC = makeDocument(2048);

function auditEntry(userId, n) {
  return JSON.stringify({
    timestamp: new Date().toISOString(),
    userId,
    userEmail: `${userId}@lab.example`,
    action: "case-create",
    result: "success",
    details: { caseNumber: `C-${n}`, validationErrors: [] },
  });
}
const utcDay = () => new Date().toISOString().slice(0, 10);

// ---------------------------------------------------------------- output

const fmt = (value, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : "-");
function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join("  ");
  console.log(line(headers));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
}

// ---------------------------------------------------------------- main

async function main() {
  const cpus = os.cpus();
  console.log("forensic-annotation service bench");
  console.log(`machine  ${cpus.length} CPU(s), ${cpus[0]?.model?.trim() ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.platform()} ${os.release()}`);
  console.log(`node     ${process.version}`);
  console.log(`dist     built ${statSync(cli).mtime.toISOString()}`);
  console.log(
    `load     ${concurrency} requests in flight (one keep-alive connection each), ${warmup} s warm-up + ${duration} s measured per row;` +
      ` client, serve and the bare server are separate processes`,
  );
  console.log("");

  const scratch = mkdtempSync(join(os.tmpdir(), "fa-bench-"));
  tempDirs.add(scratch);
  const dataDir = join(scratch, "data");
  const secret = "bench-" + Math.random().toString(16).slice(2) + Math.random().toString(16).slice(2);
  const env = { PATH: process.env.PATH ?? "", HOME: scratch, TMPDIR: os.tmpdir(), NODE_ENV: "production" };
  let failed = false;

  // --- bare node:http server
  const bare = startServer("bare server", [process.execPath, "-e", BARE_SERVER], { env: { ...env, BENCH_DOC: DOC }, cwd: scratch });
  const [bareUrl] = await bare.ready;
  const bareGet = await load(bareUrl, () => ["GET", "/doc.json", {}, undefined], (r) => r.status === 200 && r.body.length === DOC.length);
  await stopServer(bare.child);

  // --- serve on a fresh data dir (cwd is the scratch dir so no stray .env is read)
  const serve = startServer("serve", [process.execPath, cli, "serve", "--port", "0", "--data", dataDir], {
    // Rate limits off: the bench is one client IP sending tens of thousands of requests.
    env: { ...env, R2_KEY_SECRET: secret, RATE_LIMITS: "off" },
    cwd: scratch,
  });
  const [serveUrl] = await serve.ready;
  const auth = { "x-custom-auth-key": secret };
  const jsonAuth = { ...auth, "content-type": "application/json" };

  // The document the GET row reads; check it round-trips before loading.
  {
    const agent = new http.Agent({ keepAlive: false });
    const base = new URL(serveUrl);
    const put = await request(agent, base, "PUT", "/data/bench-user/BENCH-GET/data.json", jsonAuth, DOC);
    if (put.status !== 200) throw new Error(`PUT of the GET document failed: ${put.status} ${put.body}`);
    const got = await request(agent, base, "GET", "/data/bench-user/BENCH-GET/data.json", auth);
    if (got.status !== 200 || JSON.stringify(JSON.parse(got.body.toString("utf8"))) !== DOC) {
      throw new Error(`GET of the document did not return it: ${got.status} ${got.body.toString("utf8").slice(0, 200)}`);
    }
  }

  const serveGet = await load(
    serveUrl,
    () => ["GET", "/data/bench-user/BENCH-GET/data.json", auth, undefined],
    (r) => r.status === 200 && r.body.length >= 2000,
  );
  const servePut = await load(
    serveUrl,
    (slot) => ["PUT", `/data/bench-user/BENCH-PUT-${slot}/data.json`, jsonAuth, DOC],
    (r) => r.status === 200,
  );
  let auditSeq = 0;
  const auditPost = await load(
    serveUrl,
    (slot) => ["POST", `/data/audit/?userId=bench-load-${slot}`, jsonAuth, auditEntry(`bench-load-${slot}`, auditSeq++)],
    (r) => r.status === 200,
  );

  const rows = [
    ["bare node:http  GET 2 KB JSON", bareGet],
    ["serve  data GET 2 KB document", serveGet],
    ["serve  data PUT 2 KB document", servePut],
    ["serve  audit POST (1 entry)", auditPost],
  ];
  console.log("1. Throughput and latency (closed loop)");
  table(
    ["request", "requests/s", "p50 ms", "p99 ms", "requests", "errors"],
    rows.map(([label, r]) => [label, fmt(r.rps, 0), fmt(r.p50), fmt(r.p99), r.count, r.errors]),
  );
  console.log(`   PUT: each in-flight slot writes its own case (${concurrency} files); audit POST: each slot appends to its own user's day (${concurrency} users).`);
  for (const [label, r] of rows) {
    if (r.errors > 0) {
      failed = true;
      console.log(`   ERROR in "${label.trim()}": ${r.errors} failed request(s); first: ${r.firstError?.message ?? r.firstError}`);
    }
  }
  console.log("");

  const ratio = serveGet.rps / bareGet.rps;
  console.log("2. serve vs bare node:http, same GET load");
  console.log(`   serve ${fmt(serveGet.rps, 0)} req/s / bare ${fmt(bareGet.rps, 0)} req/s = ${fmt(ratio)}   (target >= 0.20: ${ratio >= 0.2 ? "met" : "missed"})`);
  console.log("");

  // --- sequential appends to one user's day
  const userId = `bench-seq-${Date.now().toString(36)}`;
  const dayAtStart = utcDay();
  const appendLatencies = [];
  {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const base = new URL(serveUrl);
    for (let n = 1; n <= appendCount; n++) {
      const r = await request(agent, base, "POST", `/data/audit/?userId=${userId}`, jsonAuth, auditEntry(userId, n));
      if (r.status !== 200) throw new Error(`append ${n} failed: ${r.status} ${r.body.toString("utf8").slice(0, 200)}`);
      const answer = JSON.parse(r.body.toString("utf8"));
      if (answer.success !== true || (utcDay() === dayAtStart && answer.entryCount !== n)) {
        throw new Error(`append ${n}: unexpected answer ${r.body.toString("utf8").slice(0, 200)}`);
      }
      appendLatencies.push(r.ms);
    }
    agent.destroy();
  }
  const dayAtEnd = utcDay();

  const WINDOW = 10;
  const positions = [1, 1000, 10000].filter((p) => p <= appendCount);
  if (!positions.includes(appendCount) && appendCount > 1) positions.push(appendCount);
  const windowOf = (p) => {
    // Ten appends around p, kept inside 1..appendCount: 1-10, 996-1005, 9991-10000.
    let first = Math.max(1, p - WINDOW / 2 + 1);
    let last = first + WINDOW - 1;
    if (last > appendCount) {
      last = appendCount;
      first = Math.max(1, last - WINDOW + 1);
    }
    return [first, last];
  };
  const appendRows = positions.map((p) => {
    const [first, last] = windowOf(p);
    return { p, first, last, single: appendLatencies[p - 1], windowMedian: median(appendLatencies.slice(first - 1, last)) };
  });
  console.log(`3. Sequential appends to one user's day (${appendCount.toLocaleString("en-US")} appends, one in flight, fresh userId ${userId})`);
  table(
    ["append #", "median of window, ms", "window (appends)", "that append alone, ms"],
    appendRows.map((r) => [r.p.toLocaleString("en-US"), fmt(r.windowMedian, 3), `${r.first}-${r.last}`, fmt(r.single, 3)]),
  );
  const lastRow = appendRows.at(-1);
  const appendRatio = lastRow.windowMedian / appendRows[0].windowMedian;
  console.log(
    `   ratio ${lastRow.p.toLocaleString("en-US")}th / 1st (window medians) = ${fmt(appendRatio)}   (target <= 2: ${appendRatio <= 2 ? "met" : "missed"})`,
  );
  console.log(`   all ${appendCount.toLocaleString("en-US")} appends: median ${fmt(median(appendLatencies), 3)} ms, total ${fmt(appendLatencies.reduce((a, b) => a + b, 0) / 1000)} s`);

  // --- read the day back, over HTTP and on disk
  const days = dayAtStart === dayAtEnd ? [dayAtStart] : [dayAtStart, dayAtEnd];
  const query = days.length === 1 ? "" : `&startDate=${dayAtStart}&endDate=${dayAtEnd}`;
  const agent = new http.Agent({ keepAlive: false });
  const readBack = await request(agent, new URL(serveUrl), "GET", `/data/audit/?userId=${userId}${query}`, auth);
  let httpCount = NaN;
  let httpTotal = NaN;
  if (readBack.status === 200) {
    const body = JSON.parse(readBack.body.toString("utf8"));
    httpCount = Array.isArray(body.entries) ? body.entries.length : NaN;
    httpTotal = body.total;
  }
  let diskCount = 0;
  const diskNotes = [];
  for (const day of days) {
    const file = join(dataDir, "audit", "audit-trails", `${userId}-${day}.json`);
    try {
      const parsed = JSON.parse(readFileSync(file, "utf8"));
      if (!Array.isArray(parsed)) throw new Error("not a JSON array");
      diskCount += parsed.length;
      diskNotes.push(`${file.slice(dataDir.length + 1)}: JSON array of ${parsed.length}`);
    } catch (err) {
      diskCount = NaN;
      diskNotes.push(`${file.slice(dataDir.length + 1)}: ${err.code === "ENOENT" ? "missing" : `does not parse (${err.message})`}`);
    }
  }
  const httpOk = readBack.status === 200 && httpCount === appendCount && httpTotal === appendCount;
  const diskOk = diskCount === appendCount;
  console.log(
    `   read-back GET /data/audit/?userId=${userId}${query}: status ${readBack.status}, ${httpCount} entries, total ${httpTotal}` +
      ` -> ${httpOk ? "OK" : "FAILED"} (expected exactly ${appendCount})`,
  );
  console.log(`   on disk ${diskNotes.join("; ")} -> ${diskOk ? "OK" : "FAILED"}`);
  if (days.length > 1) console.log("   (the UTC day changed during the appends; both days were read)");
  if (!httpOk || !diskOk) failed = true;

  await stopServer(serve.child);
  return failed;
}

try {
  const failed = await main();
  if (failed) {
    console.error("\nbench: some requests failed or the read-back check failed (see above)");
    process.exitCode = 1;
  }
} catch (err) {
  console.error(`\nbench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
