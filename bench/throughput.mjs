#!/usr/bin/env node
// Throughput of the service against the bare server of the same runtime answering the same
// bytes, measured with wrk (the load generator is never the limit), the server pinned to
// core 0 and wrk to core 1, the median of 3 runs per side, the two sides alternating in one
// run so that noise hits both. Figures only: it fails on a real error (a failed request, a
// server that does not start), never because a ratio is low. See bench/README.md.
//
//   npm run build && npm run bench                       every runtime, 5 s per wrk run
//   node bench/throughput.mjs --runtime node --duration 10
//   node bench/throughput.mjs --quick                    2 s per wrk run
//   node bench/throughput.mjs --data-root /mnt/disk      the stores' files on that filesystem
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { encode as encodePng } from "fast-png";
import { auditPostBody } from "./audit-entries.mjs";
import { dataRootOrExit } from "./data-root.mjs";
import { startServer, stopServer } from "./children.mjs";
import { makeDocument } from "./documents.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const RUNTIMES = ["node", "bun", "deno", "workerd"];

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      runtime: { type: "string", multiple: true },
      duration: { type: "string" },
      runs: { type: "string", default: "3" },
      connections: { type: "string", default: "32" },
      scenario: { type: "string", multiple: true },
      quick: { type: "boolean", default: false },
      "data-root": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
if (options.help) {
  console.log("Usage: node bench/throughput.mjs [--runtime node|bun|deno|workerd]... [--scenario NAME]... [--duration S] [--runs N] [--connections N] [--quick] [--data-root DIR]");
  process.exit(0);
}
const duration = Number(options.duration ?? (options.quick ? 2 : 5));
const runs = Number(options.runs);
const connections = Number(options.connections);
const runtimes = options.runtime ?? RUNTIMES;
for (const runtime of runtimes) {
  if (!RUNTIMES.includes(runtime)) {
    console.error(`--runtime: one of ${RUNTIMES.join(", ")}`);
    process.exit(2);
  }
}
if (!(duration > 0) || !(runs >= 1) || !(connections >= 1)) {
  console.error("--duration, --runs and --connections must be positive");
  process.exit(2);
}
if (!existsSync(join(root, "dist/src/adapters/node/cli.js"))) {
  console.error("dist/ is missing. Build first:  npm run build   then  npm run bench");
  process.exit(1);
}

// ---------------------------------------------------------------- wrk and the cores

const has = (command) => spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
if (!has("wrk")) {
  console.log("wrk is missing: installing it from Debian (apt-get install -y wrk)");
  const sudo = process.getuid?.() === 0 ? [] : ["sudo"];
  const install = spawnSync(sudo[0] ?? "apt-get", [...sudo.slice(1), ...(sudo.length ? ["apt-get"] : []), "install", "-y", "wrk"], { stdio: "inherit" });
  if (install.status !== 0 || !has("wrk")) {
    console.error("Could not install wrk (apt-get install -y wrk); install it and run again.");
    process.exit(1);
  }
}
const cpuCount = os.cpus().length;
const pinned = has("taskset") && cpuCount >= 2;
/** The command line with the CPU pinning: the server on core 0, wrk on core 1. */
const onCore = (core, argv) => (pinned ? ["taskset", "-c", String(core), ...argv] : argv);

// ---------------------------------------------------------------- cleanup

// The stores' files (and the scripts and ceilings' bodies) under --data-root: the filesystem is printed with the figures.
const dataFolder = dataRootOrExit(options["data-root"]);
const scratch = mkdtempSync(join(dataFolder.dir, "fa-throughput-"));
// Children are stopped at exit by track() (bench/children.mjs).
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

/** Spawns a server in the scratch folder with only `env` (and PATH); see startServer. */
const start = (name, argv, env) => startServer(name, argv, { cwd: scratch, env: { PATH: process.env.PATH, HOME: scratch, ...env } });
const stop = stopServer;

/** CPU seconds a process and its children have used so far (Linux), for CPU per request. */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return ticks / 100;
  } catch {
    return NaN;
  }
}

/** Every pid in the process tree of `pid` (workerd runs as Miniflare's child). */
function treeOf(pid) {
  try {
    const out = execFileSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" });
    const pairs = out.trim().split("\n").map((line) => line.trim().split(/\s+/).map(Number));
    const tree = [pid];
    for (let i = 0; i < tree.length; i++) for (const [child, parent] of pairs) if (parent === tree[i]) tree.push(child);
    return tree;
  } catch {
    return [pid];
  }
}
const treeCpu = (pids) => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);

// ---------------------------------------------------------------- the scenarios' data

const KEYS = {
  R2_KEY_SECRET: "bench-data-key-0123456789",
  USER_DB_AUTH: "bench-user-key-0123456789",
  KEYS_AUTH: "bench-keys-key-0123456789",
  IMAGES_API_TOKEN: "bench-images-token-0123456789",
  ACCOUNT_HASH: "bench-account-hash",
  HMAC_KEY: "bench-hmac-key-0123456789",
};

const DOC = makeDocument(2048);

/** A PNG of about 200 KB: noise does not compress. */
function makeImage() {
  const width = 260;
  const height = 260;
  const data = new Uint8Array(width * height * 3);
  let seed = 42;
  for (let i = 0; i < data.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    data[i] = seed >>> 24;
  }
  return encodePng({ width, height, data, channels: 3, depth: 8 });
}
const IMAGE = makeImage();

/** An audit entry for the trail of `bench-audit-{n}` (`@@N@@` is filled in per request). */
const auditEntry = auditPostBody;
const userUpdate = JSON.stringify({ company: "Bench Lab", firstName: "Bench", lastName: "User" });

const luaString = (text) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;

/**
 * The scenarios: what wrk sends to the service (path, or a Lua script), what the ceiling
 * answers to it (the same bytes the service answers), and what a successful answer is.
 * `prefix` is the ceiling's path for the scenario; the service's path is built per runtime.
 */
function scenarios(image) {
  const data = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
  const user = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
  return [
    { name: "health", label: "/health", path: "/health", headers: {}, answer: ['{"ok":true}', "application/json"] },
    { name: "data-get", label: "data GET 2 KB", floor: "R2 get", path: "/data/bench-user/BENCH-GET/data.json", headers: data, answer: [DOC, "application/json; charset=utf-8"] },
    { name: "data-missing", label: "data GET missing", floor: "R2 get", path: "/data/bench-user/BENCH-NONE/data.json", headers: data, answer: ["[]", "application/json; charset=utf-8"] },
    {
      name: "data-put",
      label: "data PUT 2 KB, 1,000 keys",
      floor: "R2 put",
      method: "PUT",
      // Each request a case of 1,000 in turn: `{uid}/BENCH-PUT-{n}/data.json`.
      paths: (n) => `/data/bench-user/BENCH-PUT-${n}/data.json`,
      keys: 1000,
      body: DOC,
      headers: { ...data, "Content-Type": "application/json" },
      answer: ['{"success":true}', "application/json"],
    },
    { name: "user-get", label: "user GET", floor: "KV get", path: "/user/bench-user", headers: user, answer: [null, "application/json"] },
    {
      name: "user-put",
      label: "user PUT",
      floor: "KV get + put",
      method: "PUT",
      path: "/user/bench-user",
      body: userUpdate,
      headers: { ...user, "Content-Type": "application/json" },
      answer: [null, "application/json"],
    },
    {
      name: "audit-post",
      label: "audit POST (1 entry), 1,000 users",
      method: "POST",
      paths: (n) => `/data/audit/?userId=bench-audit-${n}`,
      keys: 1000,
      body: auditEntry("@@N@@"),
      headers: { ...data, "Content-Type": "application/json" },
      answer: [null, "application/json"],
    },
    { name: "image", label: "image delivery 200 KB", path: image, headers: {}, answer: [IMAGE, "image/png"] },
  ];
}

/** The wrk Lua script of a scenario against `base` (the ceiling prefixes the scenario's name). */
function luaFor(scenario, ceiling) {
  const lines = [];
  lines.push(`wrk.method = ${luaString(scenario.method ?? "GET")}`);
  for (const [name, value] of Object.entries(scenario.headers)) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  if (scenario.body !== undefined && !scenario.body.includes("@@N@@")) lines.push(`wrk.body = ${luaString(scenario.body)}`);
  const pathOf = (expression) => (ceiling ? `"/${scenario.name}" .. ${expression}` : expression);
  // A template's `@@N@@` becomes the request's number, 1 to `keys` in turn.
  const filled = (template) => template.split("@@N@@").map(luaString).join(" .. n .. ");
  if (scenario.paths) {
    const body = scenario.body?.includes("@@N@@") ? filled(scenario.body) : "nil";
    lines.push("local n = 0");
    lines.push(`request = function() n = (n % ${scenario.keys}) + 1; return wrk.format(nil, ${pathOf(filled(scenario.paths("@@N@@")))}, nil, ${body}) end`);
  } else {
    lines.push(`local path = ${pathOf(luaString(scenario.path))}`);
    lines.push("request = function() return wrk.format(nil, path) end");
  }
  // Answers outside 2xx/3xx are counted by wrk itself ("Non-2xx or 3xx responses").
  return lines.join("\n") + "\n";
}

// ---------------------------------------------------------------- wrk

const UNIT_MS = { us: 0.001, ms: 1, s: 1000 };
const toMs = (text) => {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text ?? "");
  return match ? Number(match[1]) * UNIT_MS[match[2]] : NaN;
};

/** One wrk run; resolves with requests/s, p99 ms, request count and failures. */
function wrk(base, script, seconds = duration) {
  const file = join(scratch, `wrk-${Math.random().toString(16).slice(2)}.lua`);
  writeFileSync(file, script);
  const argv = onCore(1, ["wrk", "-t1", `-c${connections}`, `-d${seconds}s`, "--latency", "-s", file, base]);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (out += chunk));
    child.once("error", reject);
    child.once("exit", (code) => {
      rmSync(file, { force: true });
      if (code !== 0) return reject(new Error(`wrk failed (${code}):\n${out}`));
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
      const count = Number(/(\d+) requests in/.exec(out)?.[1]);
      const p99 = toMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1]);
      const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
      const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      const socketErrors = socket ? Number(socket[1]) + Number(socket[2]) + Number(socket[3]) : 0;
      resolve({ rps, count, p99, failures: non2xx + socketErrors, out });
    });
  });
}

const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * `runs` alternating wrk runs against the ceiling and the service; medians of each side.
 * `prefixed`: whether the ceiling's paths carry the scenario's name (the no-op servers); the
 * floor worker answers the service's own paths.
 */
async function measure(scenario, service, ceiling, prefixed = true) {
  const sides = { service: [], ceiling: [] };
  // A warm-up run per side, not counted: the JIT compiles the path first.
  await wrk(ceiling.url, luaFor(scenario, prefixed), Math.min(2, duration));
  await wrk(service.url, luaFor(scenario, false), Math.min(2, duration));
  for (let run = 0; run < runs; run++) {
    for (const side of run % 2 === 0 ? ["ceiling", "service"] : ["service", "ceiling"]) {
      const target = side === "service" ? service : ceiling;
      const before = treeCpu(target.pids);
      const result = await wrk(target.url, luaFor(scenario, prefixed && side === "ceiling"));
      result.cpuUs = ((treeCpu(target.pids) - before) / result.count) * 1e6;
      sides[side].push(result);
    }
  }
  const sum = (side) => ({
    rps: median(sides[side].map((r) => r.rps)),
    p99: median(sides[side].map((r) => r.p99)),
    cpuUs: median(sides[side].map((r) => r.cpuUs)),
    failures: sides[side].reduce((total, r) => total + r.failures, 0),
    sample: sides[side].find((r) => r.failures > 0)?.out,
  });
  return { service: sum("service"), ceiling: sum("ceiling") };
}

// ---------------------------------------------------------------- runtimes

const serveCommand = {
  // With the V8 flags of the command's first line (`#!/usr/bin/env -S node FLAGS`), as `npx forensic-annotation` runs it.
  node: () => [process.execPath, ...nodeFlags(join(root, "dist/src/adapters/node/cli.js")), join(root, "dist/src/adapters/node/cli.js"), "serve"],
  bun: () => [join(root, "node_modules/.bin/bun"), join(root, "src/adapters/bun/cli.ts"), "serve"],
  deno: () => [join(root, "node_modules/.bin/deno"), "run", "-A", "--unstable-kv", join(root, "src/adapters/deno/cli.ts"), "serve"],
};
/** The node flags on the first line of a script (`#!/usr/bin/env -S node --flag`). */
function nodeFlags(script) {
  const first = readFileSync(script, "utf8").split("\n")[0];
  return (/^#!.*\bnode((?:\s+--\S+)*)\s*$/.exec(first)?.[1] ?? "").split(" ").filter(Boolean);
}
const ceilingCommand = {
  node: () => [process.execPath, join(root, "bench/ceiling/node.mjs")],
  bun: () => [join(root, "node_modules/.bin/bun"), join(root, "bench/ceiling/bun.mjs")],
  deno: () => [join(root, "node_modules/.bin/deno"), "run", "-A", join(root, "bench/ceiling/deno.mjs")],
};
const CEILING_NAME = { node: "node:http", bun: "Bun.serve", deno: "Deno.serve", workerd: "no-op worker" };

/** Fetch with a few retries: a fresh server may still be warming its first request. */
async function call(url, init = {}) {
  const response = await fetch(url, init);
  const body = new Uint8Array(await response.arrayBuffer());
  if (response.status >= 400) throw new Error(`${init.method ?? "GET"} ${url} -> ${response.status} ${new TextDecoder().decode(body).slice(0, 300)}`);
  return { response, body };
}

/** Stores what the read scenarios read; returns the signed image path and the stored answers. */
async function prepare(url) {
  const data = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET, "Content-Type": "application/json" };
  const user = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };
  await call(`${url}/data/bench-user/BENCH-GET/data.json`, { method: "PUT", headers: data, body: DOC });
  const got = await call(`${url}/data/bench-user/BENCH-GET/data.json`, { headers: data });
  if (new TextDecoder().decode(got.body) !== DOC) throw new Error("data GET did not answer the stored document byte for byte");
  const account = { email: "bench-user@lab.example", permitted: true, firstName: "Bench", lastName: "User", company: "Bench Lab" };
  await call(`${url}/user/bench-user`, { method: "PUT", headers: user, body: JSON.stringify(account) });
  const userAnswer = (await call(`${url}/user/bench-user`, { headers: user })).body;
  const putAnswer = (await call(`${url}/user/bench-user`, { method: "PUT", headers: user, body: userUpdate })).body;
  const auditAnswer = (await call(`${url}/data/audit/?userId=bench-audit-0`, { method: "POST", headers: data, body: auditEntry(0) })).body;
  const form = new FormData();
  form.set("file", new Blob([IMAGE], { type: "image/png" }), "bench.png");
  const uploaded = JSON.parse(new TextDecoder().decode((await call(`${url}/image/`, { method: "POST", headers: { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` }, body: form })).body));
  const variant = uploaded.result.variants[0];
  const signed = new TextDecoder().decode((await call(`${url}/image/${variant}`, { headers: { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` } })).body);
  const { pathname, search } = new URL(signed);
  const delivered = (await call(`${url}${pathname}${search}`)).body;
  if (delivered.byteLength !== IMAGE.byteLength) throw new Error(`image delivery answered ${delivered.byteLength} bytes, not ${IMAGE.byteLength}`);
  return { image: `${pathname}${search}`, answers: { "user-get": userAnswer, "user-put": putAnswer, "audit-post": auditAnswer } };
}

/** The bodies file of the ceilings: each scenario's answer, as the service answers it. */
function writeBodies(list, answers) {
  const table = {};
  for (const scenario of list) {
    const [fixed, type] = scenario.answer;
    const bytes = fixed === null ? answers[scenario.name] : typeof fixed === "string" ? new TextEncoder().encode(fixed) : fixed;
    table[scenario.name] = { type, base64: Buffer.from(bytes).toString("base64") };
  }
  table.default = table.health;
  const file = join(scratch, "bodies.json");
  writeFileSync(file, JSON.stringify(table));
  return file;
}

const fmt = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : "-");
/** A measured pair's cells: req/s of each side, their ratio, p99 of each, CPU us a request of each. */
function ratioCells(result) {
  const { service, ceiling } = result;
  return [fmt(service.rps), fmt(ceiling.rps), fmt(service.rps / ceiling.rps, 2), fmt(service.p99, 2), fmt(ceiling.p99, 2), fmt(service.cpuUs), fmt(ceiling.cpuUs)];
}

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join("  ");
  console.log(line(headers));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
}

async function bench(runtime) {
  const dir = mkdtempSync(join(scratch, `${runtime}-`));
  const env = { ...KEYS, RATE_LIMITS: "off", NODE_ENV: "production" };
  let service;
  let ceiling;
  let servers = [];
  const version = {
    node: () => process.version,
    bun: () => execFileSync(join(root, "node_modules/.bin/bun"), ["--version"], { encoding: "utf8" }).trim(),
    deno: () => execFileSync(join(root, "node_modules/.bin/deno"), ["--version"], { encoding: "utf8" }).split("\n")[0],
    workerd: () => `miniflare ${JSON.parse(readFileSync(join(root, "node_modules/miniflare/package.json"), "utf8")).version}`,
  }[runtime]();
  try {
    if (runtime === "workerd") {
      // The bodies need the stored answers: prepare on a first start, then restart with them.
      const bodiesStub = join(scratch, "bodies-stub.json");
      writeFileSync(bodiesStub, JSON.stringify({ default: { type: "text/plain", base64: "" } }));
      const both = (bodies) => start("workerd", onCore(0, [process.execPath, join(root, "bench/ceiling/workerd.mjs"), dir]), { BENCH_BODIES: bodies, BENCH_SECRETS: JSON.stringify(env) });
      let host = both(bodiesStub);
      let [serviceUrl] = await host.ready;
      const prepared = await prepare(serviceUrl);
      await stop(host.child);
      const list = scenarios(prepared.image);
      host = both(writeBodies(list, prepared.answers));
      servers = [host.child];
      const [url, noop, storeOnly, quiet, storeOnlyLogged] = await host.ready;
      const kept = await call(`${url}/data/bench-user/BENCH-GET/data.json`, { headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET } });
      if (new TextDecoder().decode(kept.body) !== DOC) throw new Error("workerd lost the stored document across its restart");
      // The floor must answer the user read the same bytes, or its ratio compares different work.
      const userRead = { headers: { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH } };
      const [ours, floors] = await Promise.all([call(`${url}/user/bench-user`, userRead), call(`${storeOnly}/user/bench-user`, userRead)]);
      if (Buffer.compare(ours.body, floors.body) !== 0) throw new Error("the floor worker's user read answers other bytes than the service's");
      const pids = treeOf(host.child.pid);
      service = { url, pids };
      ceiling = { url: noop, pids };
      return await report(runtime, version, list, service, ceiling, { url: storeOnly, pids }, { url: quiet, pids }, { url: storeOnlyLogged, pids });
    }
    const serve = start(`${runtime} serve`, onCore(0, [...serveCommand[runtime](), "--port", "0", "--data", join(dir, "data")]), env);
    servers.push(serve.child);
    const [url] = await serve.ready;
    const prepared = await prepare(url);
    const list = scenarios(prepared.image);
    const bare = start(`${runtime} ceiling`, onCore(0, ceilingCommand[runtime]()), { BENCH_BODIES: writeBodies(list, prepared.answers) });
    servers.push(bare.child);
    const [bareUrl] = await bare.ready;
    service = { url, pids: treeOf(serve.child.pid) };
    ceiling = { url: bareUrl, pids: treeOf(bare.child.pid) };
    return await report(runtime, version, list, service, ceiling);
  } finally {
    for (const child of servers) await stop(child);
  }
}

/**
 * `floor` (workerd): a worker that only does the scenario's store operation on the same local
 * R2/KV; its rows say how much of the gap to the no-op worker is Miniflare's store simulation.
 */
async function report(runtime, version, list, service, ceiling, floor, quiet, loggedFloor) {
  const chosen = options.scenario ? list.filter((s) => options.scenario.includes(s.name)) : list;
  const rows = [];
  let failed = false;
  console.log(`${runtime} (${version}); ceiling: ${CEILING_NAME[runtime]} answering the same bytes`);
  for (const scenario of chosen) {
    const result = await measure(scenario, service, ceiling);
    const ratio = result.service.rps / result.ceiling.rps;
    rows.push([
      scenario.label,
      fmt(result.service.rps),
      fmt(result.ceiling.rps),
      fmt(ratio, 2),
      fmt(result.service.p99, 2),
      fmt(result.ceiling.p99, 2),
      fmt(result.service.cpuUs),
      fmt(result.ceiling.cpuUs),
    ]);
    for (const side of ["service", "ceiling"]) {
      if (result[side].failures > 0) {
        failed = true;
        console.log(`  ERROR: ${scenario.label} (${side}): ${result[side].failures} failed request(s)\n${result[side].sample ?? ""}`);
      }
    }
  }
  if (floor !== undefined) {
    for (const scenario of chosen.filter((s) => s.floor !== undefined)) {
      const result = await measure(scenario, floor, ceiling);
      rows.push([`  floor: ${scenario.floor} only (${scenario.name})`, ...ratioCells(result)]);
      if (result.service.failures > 0) {
        failed = true;
        console.log(`  ERROR: floor ${scenario.label}: ${result.service.failures} failed request(s)\n${result.service.sample ?? ""}`);
      }
    }
  }
  table(["scenario", "service req/s", "ceiling req/s", "ratio", "service p99 ms", "ceiling p99 ms", "service CPU us/req", "ceiling CPU us/req"], rows);
  console.log("");
  if (floor !== undefined) {
    // The user routes against the worker that only does their KV operation, alternating with it
    // in the same run: the ratio is what our code leaves of the floor (goal >= 0.9x for reads).
    const floorRows = [];
    // Each route twice: as deployed (its request log on), then with LOG_LEVEL=off, the log line's cost on Miniflare apart.
    // And as deployed against the floor that also writes one log line of the same shape: like against like.
    const sides = [["", service, floor, " only"], [", LOG_LEVEL=off", quiet, floor, " only"], ["", service, loggedFloor, " + one log line"]].filter(([, target, against]) => target !== undefined && against !== undefined);
    for (const scenario of chosen.filter((s) => s.name.startsWith("user-"))) {
      for (const [variant, target, against, floorLabel] of sides) {
        const result = await measure(scenario, target, against, false);
        floorRows.push([`${scenario.label}${variant} vs ${scenario.floor}${floorLabel}`, ...ratioCells(result), fmt(result.ceiling.cpuUs / result.service.cpuUs, 2)]);
        for (const side of ["service", "ceiling"]) {
          if (result[side].failures > 0) {
            failed = true;
            console.log(`  ERROR: ${scenario.label}${variant} against the floor (${side}): ${result[side].failures} failed request(s)\n${result[side].sample ?? ""}`);
          }
        }
      }
    }
    if (floorRows.length > 0) {
      console.log(`${runtime}: the user routes against the floor worker (the same Miniflare KV, its operation only)`);
      table(["scenario", "service req/s", "floor req/s", "ratio", "service p99 ms", "floor p99 ms", "service CPU us/req", "floor CPU us/req", "CPU ratio"], floorRows);
      console.log("");
    }
  }
  return failed;
}

async function main() {
  const cpus = os.cpus();
  console.log("forensic-annotation service throughput (wrk)");
  console.log(`date     ${new Date().toISOString()}`);
  console.log(`data     ${dataFolder.description}`);
  console.log(`machine  ${cpuCount} CPU(s), ${cpus[0]?.model?.trim() ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.platform()} ${os.release()}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  console.log(
    `load     wrk -t1 -c${connections}, ${duration} s per run, median of ${runs} runs per side, service and ceiling alternating; ` +
      (pinned ? "server on core 0, wrk on core 1 (taskset)" : "NOT pinned (needs taskset and 2 cores): figures are less comparable"),
  );
  console.log("         ratio = service req/s / ceiling req/s; CPU us/req = the server's CPU time per request (less sensitive to other load)");
  console.log("");
  let failed = false;
  for (const runtime of runtimes) {
    try {
      if (await bench(runtime)) failed = true;
    } catch (err) {
      failed = true;
      console.log(`${runtime}: ERROR ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
  }
  console.log(`load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  return failed;
}

const failed = await main();
if (failed) {
  console.error("throughput: some requests failed or a server did not start (see above)");
  process.exitCode = 1;
}
