#!/usr/bin/env node
// PUT throughput of the data worker with record history on and off (DATA_HISTORY), in one run,
// and the bytes a version costs in the store. Two `serve` processes (one per setting, files
// under their own --data) take the same load from wrk, the server pinned to core 0 and wrk to
// core 1 as bench/throughput.mjs does, the two sides alternating run by run so that noise hits
// both; the medians are printed. Figures only: it fails on a failed request, never on a ratio.
// See bench/README.md#historymjs.
//
//   npm run build && node bench/history.mjs              2 KB documents, 100 keys, 3 runs of 5 s
//   node bench/history.mjs --duration 2 --runs 1         a quick look
//   node bench/history.mjs --runtime bun --data-root /mnt/disk
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { dataRootOrExit } from "./data-root.mjs";
import { startServer, stopServer } from "./children.mjs";
import { makeDocument } from "./documents.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
let options;
try {
  ({ values: options } = parseArgs({
    options: {
      runtime: { type: "string", default: "node" },
      duration: { type: "string", default: "5" },
      runs: { type: "string", default: "3" },
      connections: { type: "string", default: "32" },
      keys: { type: "string", default: "100" },
      bytes: { type: "string", default: "2048" },
      "data-root": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
if (options.help) {
  console.log("Usage: node bench/history.mjs [--runtime node|bun|deno] [--duration S] [--runs N] [--connections N] [--keys N] [--bytes N] [--data-root DIR]");
  process.exit(0);
}
const duration = Number(options.duration);
const runs = Number(options.runs);
const connections = Number(options.connections);
const keyCount = Number(options.keys);
const docBytes = Number(options.bytes);
if (![duration, runs, connections, keyCount, docBytes].every((n) => n > 0) || docBytes < 300) {
  console.error("--duration, --runs, --connections, --keys must be positive, --bytes at least 300");
  process.exit(2);
}
const serveCommand = {
  node: () => [process.execPath, join(root, "dist/src/adapters/node/cli.js"), "serve"],
  bun: () => [join(root, "node_modules/.bin/bun"), join(root, "src/adapters/bun/cli.ts"), "serve"],
  deno: () => [join(root, "node_modules/.bin/deno"), "run", "-A", "--unstable-kv", join(root, "src/adapters/deno/cli.ts"), "serve"],
};
if (!(options.runtime in serveCommand)) {
  console.error("--runtime: one of node, bun, deno");
  process.exit(2);
}
if (options.runtime === "node" && !existsSync(join(root, "dist/src/adapters/node/cli.js"))) {
  console.error("dist/ is missing. Build first:  npm run build");
  process.exit(1);
}

const has = (command) => spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
if (!has("wrk")) {
  console.error("wrk is missing: apt-get install -y wrk (bench/throughput.mjs installs it too)");
  process.exit(1);
}
const pinned = has("taskset") && os.cpus().length >= 2;
const onCore = (core, argv) => (pinned ? ["taskset", "-c", String(core), ...argv] : argv);

const dataFolder = dataRootOrExit(options["data-root"]);
const scratch = mkdtempSync(join(dataFolder.dir, "fa-history-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

const KEY = "bench-history-data-key-0123456789";
const DOC = makeDocument(docBytes);

/** Starts `serve` on a free port with its own --data; resolves once it prints its ready line. */
async function start(name, env) {
  const dataDir = join(scratch, name);
  const argv = onCore(0, [...serveCommand[options.runtime](), "--port", "0", "--data", dataDir]);
  const server = startServer(name, argv, { cwd: scratch, env: { PATH: process.env.PATH, HOME: scratch, R2_KEY_SECRET: KEY, RATE_LIMITS: "off", LOG_LEVEL: "off", ...env } });
  const [url] = await server.ready;
  return { name, child: server.child, url, dataDir, log: server.log };
}

const luaString = (text) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
/** wrk's script: PUT the document to `{uid}/BENCH-{n}/data.json`, each request the next of `keys` keys. */
const script = [
  'wrk.method = "PUT"',
  `wrk.headers["X-Custom-Auth-Key"] = ${luaString(KEY)}`,
  'wrk.headers["Content-Type"] = "application/json"',
  `wrk.body = ${luaString(DOC)}`,
  "local n = 0",
  `request = function() n = (n % ${keyCount}) + 1; return wrk.format(nil, "/data/bench-user/BENCH-" .. n .. "/data.json") end`,
].join("\n") + "\n";
const scriptFile = join(scratch, "put.lua");
writeFileSync(scriptFile, script);

/** One wrk run: requests/s, p99 and failures. */
function wrk(url, seconds) {
  const argv = onCore(1, ["wrk", "-t1", `-c${connections}`, `-d${seconds}s`, "--latency", "-s", scriptFile, url]);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (out += chunk));
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`wrk failed (${code}):\n${out}`));
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
      const count = Number(/(\d+) requests in/.exec(out)?.[1]);
      const p99Text = /^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(out);
      const p99 = p99Text ? Number(p99Text[1]) * { us: 0.001, ms: 1, s: 1000, m: 60_000 }[p99Text[2]] : NaN;
      const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
      const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      const failures = non2xx + (socket ? Number(socket[1]) + Number(socket[2]) + Number(socket[3]) : 0);
      resolve({ rps, count, p99, failures, out });
    });
  });
}

const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Bytes of every file under `dir` (the data store's folder) whose name passes `which`. */
function bytesUnder(dir, which = () => true) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && which(entry.name)) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

console.log(`history bench: ${options.runtime}, PUT of a ${docBytes}-byte document to ${keyCount} keys in turn, ${connections} connections, ${runs} x ${duration} s per side${pinned ? ", server on core 0, wrk on core 1" : " (not pinned: taskset missing or one core)"}`);
console.log(`stores under ${dataFolder.description}`);
const servers = { on: await start("on", { DATA_HISTORY: "on" }), off: await start("off", { DATA_HISTORY: "off" }) };
if (!/^history\s+off/m.test(servers.off.log())) throw new Error(`serve with DATA_HISTORY=off did not say so at start:\n${servers.off.log()}`);
const results = { on: [], off: [] };
const puts = { on: 0, off: 0 };
try {
  // A warm-up per side, not counted: the JIT compiles the path and every key is written once.
  for (const side of ["off", "on"]) puts[side] += (await wrk(servers[side].url, Math.min(2, duration))).count;
  for (let run = 0; run < runs; run++) {
    for (const side of run % 2 === 0 ? ["off", "on"] : ["on", "off"]) {
      const result = await wrk(servers[side].url, duration);
      if (result.failures > 0) throw new Error(`${result.failures} failed requests with history ${side}:\n${result.out}`);
      results[side].push(result);
      puts[side] += result.count;
    }
  }
} finally {
  await Promise.all(Object.values(servers).map((server) => stopServer(server.child)));
}
const row = (side) => ({ rps: median(results[side].map((r) => r.rps)), p99: median(results[side].map((r) => r.p99)) });
const on = row("on");
const off = row("off");
console.log("");
console.log("| DATA_HISTORY | PUT req/s (median) | p99 ms | PUTs in all |");
console.log("| --- | --- | --- | --- |");
console.log(`| off | ${off.rps.toFixed(0)} | ${off.p99.toFixed(1)} | ${puts.off} |`);
console.log(`| on | ${on.rps.toFixed(0)} | ${on.p99.toFixed(1)} | ${puts.on} |`);
console.log(`on / off: ${(on.rps / off.rps).toFixed(2)}`);
// What the history adds on disk: the store with history less the store without, per version.
const dataOn = bytesUnder(join(servers.on.dataDir, "data"));
const dataOff = bytesUnder(join(servers.off.dataDir, "data"));
const history = bytesUnder(join(servers.on.dataDir, "data", "#history"));
// One log per key (a data folder is held by one process: no head on disk).
const versions = bytesUnder(join(servers.on.dataDir, "data", "#history"), (name) => name === "log");
console.log(`data store: ${dataOn} bytes with history, ${dataOff} without; histories ${history} bytes, of which ${history - versions} not in the ${keyCount} keys' logs`);
console.log(`${puts.on} versions: ${(versions / puts.on).toFixed(0)} bytes per version of a ${docBytes}-byte document (${(versions / puts.on / docBytes).toFixed(2)}x: its bytes as a JSON string, and its record)`);
const sample = readFileSync(join(servers.on.dataDir, "data", "#history", "bench-user", "BENCH-1", "data.json", "log"), "utf8").split("\n")[1];
console.log(`a version in the log: ${sample.length > 400 ? `${sample.slice(0, 300)}…${sample.slice(-40)}` : sample}`);
