#!/usr/bin/env node
// Soak: mixed traffic against a fresh `serve` (built dist, temp --data) for a while, to see
// whether errors appear and memory stays flat. Prints every 10 s: requests done, errors by
// status and network errors, p50/p99 latency and the server's RSS; at the end a verdict on
// memory growth (flat when RSS at the end <= RSS at 20 s + 20 %). Figures only: never a test.
//
//   npm run build && node bench/soak.mjs [--duration 60] [--connections 32] [--interval 10]
// Linux (reads /proc/<pid>/status). See bench/README.md.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { track } from "./children.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist/src/adapters/node/cli.js");

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      duration: { type: "string", default: "60" },
      connections: { type: "string", default: "32" },
      interval: { type: "string", default: "10" },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
if (options.help) {
  console.log("Usage: node bench/soak.mjs [--duration SECONDS] [--connections N] [--interval SECONDS]");
  process.exit(0);
}
const duration = Number(options.duration);
const connections = Number(options.connections);
const interval = Number(options.interval);
for (const [name, value] of [["--duration", duration], ["--connections", connections], ["--interval", interval]]) {
  if (!Number.isFinite(value) || value <= 0 || (name === "--connections" && !Number.isInteger(value))) {
    console.error(`${name} must be a positive number`);
    process.exit(2);
  }
}
if (!existsSync(cli)) {
  console.error(`dist/ is missing (${cli} not found). Build first: npm run build`);
  process.exit(1);
}
if (!existsSync("/proc/self/status")) {
  console.error("soak.mjs reads the server's RSS from /proc/<pid>/status: Linux only");
  process.exit(1);
}

// ---------------------------------------------------------------- server

const KEYS = {
  R2_KEY_SECRET: "soak-data-key",
  USER_DB_AUTH: "soak-user-key",
  IMAGES_API_TOKEN: "soak-images-token",
  HMAC_KEY: "soak-hmac-key",
};
const dir = mkdtempSync(join(os.tmpdir(), "fa-soak-"));
// The server is stopped at exit by track() (bench/children.mjs).
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

// Limits on (their counters are part of what must stay flat), high enough for one client IP.
const RATE_LIMITS = ["user", "data", "audit", "image"].map((worker) => `${worker}=1000000000/60s`).join(",");
// SOAK_SERVER_NODE_ARGS: flags before the script, for V8 flags NODE_OPTIONS refuses (e.g. "--initial-old-space-size=32").
// By default the flags of the command's own first line (`#!/usr/bin/env -S node FLAGS`), as `npx forensic-annotation` runs it.
const shebangFlags = /^#!.*\bnode((?:\s+--\S+)*)\s*$/m.exec(readFileSync(cli, "utf8").split("\n")[0])?.[1] ?? "";
const nodeArgs = (process.env.SOAK_SERVER_NODE_ARGS ?? shebangFlags).split(" ").filter(Boolean);
const server = track(spawn(process.execPath, [...nodeArgs, cli, "serve", "--port", "0", "--data", join(dir, "data")], {
  cwd: dir,
  // SOAK_SERVER_NODE_OPTIONS reaches serve only, e.g. "--max-old-space-size=96" to tell a leak from a lazy heap.
  env: { PATH: process.env.PATH, ...KEYS, RATE_LIMITS, ...(process.env.SOAK_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SOAK_SERVER_NODE_OPTIONS } : {}) },
  stdio: ["ignore", "pipe", "pipe"],
}));
let serverLog = "";
let serverErrorLines = 0;
server.stderr.on("data", (chunk) => {
  serverErrorLines += String(chunk).split("\n").filter((line) => line.trim() !== "").length;
  if (serverLog.length < 4000) serverLog += chunk;
});
const url = await new Promise((resolve, reject) => {
  let out = "";
  server.stdout.on("data", (chunk) => {
    out += chunk;
    const match = /^ready\s+(http:\/\/\S+)/m.exec(out);
    if (match) resolve(match[1].replace(/\/$/, ""));
  });
  server.once("exit", (code) => reject(new Error(`serve exited (${code}) before it was ready:\n${out}${serverLog}`)));
  setTimeout(() => reject(new Error("serve was not ready within 30 s")), 30_000).unref();
});
let serverDied = false;
const onServerExit = (code, signal) => {
  serverDied = true;
  console.error(`serve exited during the soak (${code ?? signal})\n${serverLog}`);
};
server.once("exit", onServerExit);
const rssMiB = () => {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : NaN;
};

// ---------------------------------------------------------------- client

// Node's fetch is undici; its own Agent class is reachable through the global dispatcher once
// fetch has run, so the pool (keep-alive, `connections` sockets) is the bundled undici's.
await fetch("data:,").then((response) => response.arrayBuffer());
const GlobalAgent = globalThis[Symbol.for("undici.globalDispatcher.1")]?.constructor;
if (typeof GlobalAgent !== "function") {
  console.error("Could not reach the Agent of Node's bundled undici");
  process.exit(1);
}
const dispatcher = new GlobalAgent({ connections, keepAliveTimeout: 30_000, pipelining: 1 });

const dataHeaders = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET, "Content-Type": "application/json" };
const userHeaders = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };
const imageHeaders = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };
const png = new Uint8Array(readFileSync(join(root, "tests/fixtures/sample.png")));
const document = JSON.stringify({ caseNumber: "C-1", files: Array.from({ length: 12 }, (_, i) => ({ id: `file-${i}`, originalName: `item-${i}.jpg`, uploadedAt: new Date(0).toISOString() })), notes: "x".repeat(800) });

/** Per-interval figures: latencies (ms), statuses outside 2xx/3xx, network errors. */
let window = { latencies: [], errors: new Map(), done: 0 };
const total = { done: 0, errors: new Map(), byName: new Map() };
const countError = (key) => {
  window.errors.set(key, (window.errors.get(key) ?? 0) + 1);
  total.errors.set(key, (total.errors.get(key) ?? 0) + 1);
};

/** One request; answers the body text of a 2xx/3xx, else null (and counts the error). */
async function call(name, path, init = {}) {
  const started = performance.now();
  total.byName.set(name, (total.byName.get(name) ?? 0) + 1);
  try {
    const response = await fetch(`${url}${path}`, { ...init, dispatcher, redirect: "manual", signal: AbortSignal.timeout(30_000) });
    const body = await response.text();
    window.latencies.push(performance.now() - started);
    window.done++;
    total.done++;
    if (response.status >= 400) {
      countError(`${name} ${response.status}`);
      return null;
    }
    return body;
  } catch (err) {
    window.done++;
    total.done++;
    countError(`${name} network ${err.cause?.code ?? err.name}`);
    return null;
  }
}

// Each connection is a closed loop over its own user, case and images, picking operations by weight.
const OPERATIONS = [
  ["data GET", 25, (s) => call("data GET", `/data/${s.uid}/C-1/data.json`, { headers: dataHeaders })],
  ["data PUT", 12, (s) => call("data PUT", `/data/${s.uid}/C-1/data.json`, { method: "PUT", headers: dataHeaders, body: document })],
  ["audit POST", 20, (s) => call("audit POST", `/data/audit/?userId=${s.uid}`, { method: "POST", headers: dataHeaders, body: auditEntry(s) })],
  ["audit GET", 5, (s) => call("audit GET", `/audit/audit/?userId=${s.uid}`, { headers: dataHeaders })],
  ["user GET", 12, (s) => call("user GET", `/user/${s.uid}`, { headers: userHeaders })],
  ["user PUT", 8, (s) => call("user PUT", `/user/${s.uid}`, { method: "PUT", headers: userHeaders, body: JSON.stringify({ company: `Lab ${s.n++}` }) })],
  ["image upload", 6, uploadImage],
  ["image delivery", 12, deliverImage],
];
const WEIGHT = OPERATIONS.reduce((sum, [, weight]) => sum + weight, 0);

function auditEntry(slot) {
  return JSON.stringify({
    timestamp: new Date().toISOString(),
    userId: slot.uid,
    userEmail: `${slot.uid}@lab.example`,
    action: "annotation-edit",
    result: "success",
    details: { caseNumber: "C-1", validationErrors: [], workflowPhase: "casework", n: slot.n++ },
  });
}

async function uploadImage(slot) {
  const form = new FormData();
  form.set("file", new Blob([png], { type: "image/png" }), "item.png");
  const body = await call("image upload", "/image/", { method: "POST", headers: imageHeaders, body: form });
  if (body === null) return;
  // Keep a few per connection: the client's own memory must not grow with the soak.
  slot.images.push(JSON.parse(body).result.variants[0]);
  if (slot.images.length > 4) slot.images.shift();
}

async function deliverImage(slot) {
  if (slot.images.length === 0) return uploadImage(slot);
  const variant = slot.images[slot.n++ % slot.images.length];
  const signed = await call("image sign", `/image/${variant}`, { headers: imageHeaders });
  if (signed === null) return;
  const { pathname, search } = new URL(signed);
  await call("image delivery", `${pathname}${search}`);
}

const pick = () => {
  let r = Math.random() * WEIGHT;
  for (const [, weight, run] of OPERATIONS) if ((r -= weight) < 0) return run;
  return OPERATIONS[0][2];
};

// ---------------------------------------------------------------- run

const slots = Array.from({ length: connections }, (_, i) => ({ uid: `soak-u${i}`, n: 0, images: [] }));
for (const slot of slots) {
  const created = await call("setup", `/user/${slot.uid}`, { method: "PUT", headers: userHeaders, body: JSON.stringify({ email: `${slot.uid}@lab.example`, firstName: "Soak", lastName: String(slot.uid), company: "Lab", permitted: true }) });
  const stored = await call("setup", `/data/${slot.uid}/C-1/data.json`, { method: "PUT", headers: dataHeaders, body: document });
  if (created === null || stored === null) {
    console.error(`setup failed: ${[...total.errors].join(", ")}\n${serverLog}`);
    process.exit(1);
  }
}
window = { latencies: [], errors: new Map(), done: 0 };
total.done = 0;
total.errors.clear();
total.byName.clear();

const percentile = (sorted, p) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
const fmt = (ms) => (Number.isNaN(ms) ? "-" : ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const errorText = (errors) => (errors.size === 0 ? "none" : [...errors].sort((a, b) => b[1] - a[1]).map(([key, n]) => `${key} x${n}`).join(", "));

console.log(`Soak of serve (Node ${process.version}, ${os.cpus().length} CPUs): ${duration} s of mixed traffic over ${connections} keep-alive connections (undici Agent)`);
console.log("mix: data GET 25%, data PUT 12%, audit POST 20%, audit GET 5%, user GET 12%, user PUT 8%, image upload 6%, image sign+delivery 12%");
console.log("Note: the load generator is Node on the same machine (2 cores here): it takes CPU from the server, so these figures understate the ceiling.");
console.log(`server RSS at start ${rssMiB().toFixed(1)} MiB\n`);
console.log("     t   requests    req/s   p50 ms   p99 ms   RSS MiB   errors");

const start = performance.now();
const deadline = start + duration * 1000;
const rssAt = new Map([[0, rssMiB()]]);
let stop = false;
const report = (elapsed) => {
  const sorted = Float64Array.from(window.latencies).sort();
  const seconds = elapsed - (report.last ?? 0);
  report.last = elapsed;
  const rss = serverDied ? NaN : rssMiB();
  rssAt.set(Math.round(elapsed), rss);
  console.log(
    `${elapsed.toFixed(0).padStart(5)} s ${String(total.done).padStart(10)} ${(window.done / seconds).toFixed(0).padStart(8)} ${fmt(percentile(sorted, 50)).padStart(8)} ${fmt(percentile(sorted, 99)).padStart(8)} ${rss.toFixed(1).padStart(9)}   ${errorText(window.errors)}`,
  );
  window = { latencies: [], errors: new Map(), done: 0 };
};
const ticker = setInterval(() => {
  const elapsed = (performance.now() - start) / 1000;
  if (elapsed < duration - interval / 2) report(elapsed);
}, interval * 1000);
// RSS every second, for the range printed with the verdict.
const rssSamples = [];
const sampler = setInterval(() => serverDied || rssSamples.push(rssMiB()), 1000);
// The 20 s mark is the baseline of the verdict; sampled on its own when the interval misses it.
const at20 = setTimeout(() => rssAt.set(20, rssMiB()), 20_000);

await Promise.all(slots.map(async (slot) => {
  while (!stop && !serverDied && performance.now() < deadline) await pick()(slot);
}));
stop = true;
clearInterval(ticker);
clearTimeout(at20);
clearInterval(sampler);
const elapsed = (performance.now() - start) / 1000;
report(elapsed);

// ---------------------------------------------------------------- verdict

const endRss = rssAt.get(Math.round(elapsed));
const baselineAt = duration >= 20 ? 20 : 0;
const baseline = rssAt.get(baselineAt) ?? rssAt.get(0);
const growth = ((endRss - baseline) / baseline) * 100;
console.log(`\nby route: ${[...total.byName].map(([name, n]) => `${name} ${n}`).join(", ")}`);
console.log(`total: ${total.done} requests in ${elapsed.toFixed(1)} s (${(total.done / elapsed).toFixed(0)} req/s), errors: ${errorText(total.errors)}; server stderr lines: ${serverErrorLines}`);
if (serverDied) {
  console.log("verdict: serve died during the soak");
  process.exit(1);
}
const flat = endRss <= baseline * 1.2;
console.log(
  `verdict: memory ${flat ? "FLAT" : "GROWING"}: RSS ${endRss.toFixed(1)} MiB at the end vs ${baseline.toFixed(1)} MiB at ${baselineAt} s (${growth >= 0 ? "+" : ""}${growth.toFixed(1)} %; flat means <= +20 %)`,
);
console.log(`RSS sampled every second: min ${Math.min(...rssSamples).toFixed(1)} MiB, max ${Math.max(...rssSamples).toFixed(1)} MiB.`);
// The goal (README, Performance) is in MB; /proc reports MiB, so both are printed and the peak is compared in bytes.
const peakMiB = Math.max(endRss, ...rssSamples);
const GOAL_BYTES = 150e6;
console.log(
  `goal: RSS <= 150 MB (${(GOAL_BYTES / 2 ** 20).toFixed(2)} MiB) throughout: peak ${peakMiB.toFixed(1)} MiB = ${(peakMiB * 2 ** 20 / 1e6).toFixed(1)} MB, ${peakMiB * 2 ** 20 <= GOAL_BYTES ? "met" : "NOT met"} in this run (one run; the peak moves by tens of MiB between runs)`,
);
console.log("V8 gives memory back in a sawtooth: when the verdict says GROWING, a longer --duration tells a leak (keeps rising) from garbage not yet collected.");
await dispatcher.close();
server.off("exit", onServerExit);
server.kill("SIGTERM");
await new Promise((resolve) => server.once("exit", resolve));
