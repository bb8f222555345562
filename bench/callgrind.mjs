#!/usr/bin/env node
// Instructions per request, counted by valgrind's callgrind while wrk loads the server: a
// figure that does not move with other load on the machine, for comparing two builds of the
// request path. `serve` (built dist/, files under a temp --data, rate limits off) and the bare
// `node:http` server of bench/ceiling/node.mjs answering the same bytes, each under callgrind
// in turn. Per scenario: an uninstrumented warm-up (the JIT settles), the counters
// zeroed, one measured wrk run, 2 s for the work it left behind, a dump; instructions of all
// threads / requests wrk completed.
//
//   npm run build && node bench/callgrind.mjs [--scenario health|data-get|data-get-cold|data-missing|data-put|user-get|audit-post]... [--seconds 10] [--warmup 20] [--no-ceiling] [--encrypted] [--dist DIR]
//     [--requests N --warmup-requests M] [--cold-documents N]
// (--dist: another build's dist/, e.g. of the commit before, to compare the two. --encrypted:
// `serve` with DATA_ENCRYPTION_KEYS set, so every stored object is an envelope. --requests:
// a fixed number of warm-up and counted requests from a Node client in this process, instead
// of wrk for a fixed time: on a loaded machine a timed warm-up does less work and leaves JIT
// compilation and collections in the counted window. data-get-cold: --cold-documents distinct
// 2 KB documents, PUT first, read in turn: more than an encrypted server keeps opened or
// unwrapped, so every read opens an envelope, as bench/encryption.mjs's cold row.)
// Needs valgrind (callgrind_control), wrk and Linux. See bench/README.md.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { auditPostBody } from "./audit-entries.mjs";
import { track } from "./children.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values: options } = parseArgs({
  options: {
    scenario: { type: "string", multiple: true },
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "20" },
    connections: { type: "string", default: "8" },
    "no-ceiling": { type: "boolean", default: false },
    encrypted: { type: "boolean", default: false },
    "node-options": { type: "string" },
    dist: { type: "string" },
    requests: { type: "string" },
    "warmup-requests": { type: "string", default: "30000" },
    "cold-documents": { type: "string", default: "5000" },
  },
});
for (const tool of ["valgrind", "callgrind_control", "wrk"]) {
  if (spawnSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" }).status !== 0) {
    console.error(`${tool} is missing (Debian: apt-get install -y valgrind wrk)`);
    process.exit(1);
  }
}
const pinned = spawnSync("sh", ["-c", "command -v taskset"], { stdio: "ignore" }).status === 0 && os.cpus().length >= 2;
const onCore = (core, argv) => (pinned ? ["taskset", "-c", String(core), ...argv] : argv);

const KEYS = { R2_KEY_SECRET: "bench-data-key-0123456789", USER_DB_AUTH: "bench-user-key-0123456789" };
// A fresh key-encryption key per run: only the envelopes' cost is measured, not the key.
const ENCRYPTION = options.encrypted ? { DATA_ENCRYPTION_KEYS: JSON.stringify({ keys: [{ kty: "oct", kid: "bench", k: randomBytes(32).toString("base64url") }] }) } : {};
const doc = { caseNumber: "BENCH-0001", annotations: [], pad: "" };
for (let i = 0; JSON.stringify(doc).length < 1848; i++) doc.annotations.push({ id: `box-${i}`, x: 12.5, y: 40.25, width: 8, height: 6.5 });
doc.pad = "x".repeat(2048 - JSON.stringify(doc).length);
const DOC = JSON.stringify(doc);
const data = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
/** The audit entry of bench/throughput.mjs for the trail of `bench-audit-{n}`. */
const auditEntry = auditPostBody;
const user = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
const SCENARIOS = {
  health: { path: "/health", headers: {} },
  "data-get": { path: "/data/bench-user/BENCH-GET/data.json", headers: data },
  "data-get-cold": { path: "", paths: (n) => `/data/bench-user/BENCH-COLD-${n}/data.json`, count: Number(options["cold-documents"]), headers: data },
  "data-missing": { path: "/data/bench-user/BENCH-NONE/data.json", headers: data },
  "data-put": { method: "PUT", paths: (n) => `/data/bench-user/BENCH-PUT-${n}/data.json`, body: DOC, headers: { ...data, "Content-Type": "application/json" } },
  "user-get": { path: "/user/bench-user", headers: user },
  // One entry to each of 1,000 users' days in turn (as bench/throughput.mjs), FSYNC default (audit).
  "audit-post": {
    method: "POST",
    paths: (n) => `/data/audit/?userId=bench-audit-${n}`,
    body: (n) => auditEntry(n),
    headers: { ...data, "Content-Type": "application/json" },
  },
};
const chosen = options.scenario ?? ["health", "data-get", "data-put"];
for (const name of chosen) if (!(name in SCENARIOS)) throw new Error(`--scenario: one of ${Object.keys(SCENARIOS).join(", ")}`);

const scratch = mkdtempSync(join(os.tmpdir(), "fa-callgrind-"));
// Children are stopped at exit by track() (bench/children.mjs).
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

const lua = (text) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
function script(scenario, prefix) {
  const lines = [`wrk.method = "${scenario.method ?? "GET"}"`];
  for (const [name, value] of Object.entries(scenario.headers)) lines.push(`wrk.headers[${lua(name)}] = ${lua(value)}`);
  if (typeof scenario.body === "string") lines.push(`wrk.body = ${lua(scenario.body)}`);
  // A body that names the request's number: `@` in its template becomes n.
  const body = typeof scenario.body === "function" ? scenario.body("@").split("@").map(lua).join(" .. n .. ") : "nil";
  if (scenario.paths) {
    lines.push("local n = 0", `request = function() n = (n % ${scenario.count ?? 1000}) + 1; return wrk.format(nil, ${lua(prefix)} .. ${lua(scenario.paths("@").split("@")[0])} .. n .. ${lua(scenario.paths("@").split("@")[1])}, nil, ${body}) end`);
  } else lines.push(`request = function() return wrk.format(nil, ${lua(prefix + scenario.path)}) end`);
  const file = join(scratch, `s-${Math.random().toString(16).slice(2)}.lua`);
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}
function wrk(url, file, seconds) {
  const out = execFileSync(onCore(1, ["wrk"])[0], [...onCore(1, ["wrk"]).slice(1), "-t1", `-c${options.connections}`, `-d${seconds}s`, "-s", file, url], { encoding: "utf8" });
  const failed = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  if (failed > 0) throw new Error(`wrk: ${failed} failed request(s)\n${out}`);
  return Number(/(\d+) requests in/.exec(out)?.[1]);
}

function start(name, argv, env) {
  const out = join(scratch, `${name}.cg`);
  const command = onCore(0, ["valgrind", "--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${out}`, process.execPath, ...(options["node-options"]?.split(" ") ?? []), ...argv]);
  const child = track(spawn(command[0], command.slice(1), { cwd: scratch, env: { PATH: process.env.PATH, HOME: scratch, ...env }, stdio: ["ignore", "pipe", "pipe"] }));
  let log = "";
  child.stderr.on("data", (chunk) => (log = (log + chunk).slice(-4000)));
  const ready = new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      log += chunk;
      const match = /^ready\s+(http:\/\/\S+)/m.exec(log);
      if (match) resolve(match[1].replace(/\/$/, ""));
    });
    child.once("exit", (code) => reject(new Error(`${name} exited (${code})\n${log}`)));
  });
  return { child, ready, out };
}

/** Total instructions (Ir) in the dumps of `out` written after `since`, then removes them. */
function dumpedInstructions(pid, out, since) {
  execFileSync("callgrind_control", ["--dump", String(pid)], { stdio: "ignore" });
  let total = 0;
  for (const file of readdirSync(scratch)) {
    const path = join(scratch, file);
    if (!path.startsWith(out) || since.has(file)) continue;
    const summary = /^(?:summary|totals):\s+(\d+)/m.exec(readFileSync(path, "utf8"));
    total += Number(summary?.[1] ?? 0);
    since.add(file);
  }
  return total;
}

/** The raw HTTP/1.1 text of request `n` of a scenario. */
function rawRequest(scenario, prefix, n) {
  const path = prefix + (scenario.paths ? scenario.paths((n % (scenario.count ?? 1000)) + 1) : scenario.path);
  const body = typeof scenario.body === "function" ? scenario.body((n % (scenario.count ?? 1000)) + 1) : scenario.body;
  const lines = [`${scenario.method ?? "GET"} ${path} HTTP/1.1`, "Host: 127.0.0.1"];
  for (const [name, value] of Object.entries(scenario.headers)) lines.push(`${name}: ${value}`);
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${body ?? ""}`;
}

/**
 * `count` requests over keep-alive connections (as many as --connections), each waiting for
 * its answer; the count answered. A connection the server closes (its keep-alive timeout can
 * fire first when valgrind starves it) is opened again and its unanswered request resent.
 */
async function load(url, scenario, prefix, count) {
  const { hostname, port } = new URL(url);
  let next = 0;
  const connection = (resend) =>
    new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname);
      let pending = Buffer.alloc(0);
      let inFlight = resend;
      let answered = false;
      const send = () => {
        if (inFlight === undefined && next < count) inFlight = next++;
        if (inFlight === undefined) socket.end(() => resolve(undefined));
        else socket.write(rawRequest(scenario, prefix, inFlight));
      };
      socket.on("connect", send);
      socket.on("error", () => undefined);
      socket.on("close", () => (answered || inFlight === undefined ? resolve(inFlight) : reject(new Error(`the server closed the connection without answering (${url})`))));
      socket.on("data", (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        for (;;) {
          const end = pending.indexOf("\r\n\r\n");
          if (end === -1) return;
          const head = pending.subarray(0, end).toString("latin1");
          const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
          if (pending.length < end + 4 + length) return;
          if (!/^HTTP\/1\.1 2\d\d/.test(head)) return reject(new Error(`answered ${head.split("\r\n")[0]}`));
          pending = pending.subarray(end + 4 + length);
          inFlight = undefined;
          answered = true;
          send();
        }
      });
    });
  const worker = async () => {
    let unanswered;
    do unanswered = await connection(unanswered); while (unanswered !== undefined || next < count);
  };
  await Promise.all(Array.from({ length: Number(options.connections) }, worker));
  return count;
}

async function measure(name, argv, env, prefix, prepare) {
  const server = start(name, argv, env);
  const url = await server.ready;
  if (prepare) await prepare(url);
  const pid = server.child.pid;
  const control = (...args) => execFileSync("callgrind_control", [...args, String(pid)], { stdio: "ignore" });
  const seen = new Set(readdirSync(scratch));
  const results = {};
  for (const scenarioName of chosen) {
    const file = script(SCENARIOS[scenarioName], prefix(scenarioName));
    const counted = options.requests === undefined ? undefined : Number(options.requests);
    // Warm-up uninstrumented (several times faster under valgrind): the JIT settles first.
    if (counted === undefined) wrk(url, file, Number(options.warmup));
    else await load(url, SCENARIOS[scenarioName], prefix(scenarioName), Number(options["warmup-requests"]));
    control("--zero");
    control("--instr=on");
    const requests = counted === undefined
      ? wrk(url, file, Number(options.seconds))
      : await load(url, SCENARIOS[scenarioName], prefix(scenarioName), counted);
    // A short pause before the dump: work the load left behind (GC, the JIT's background
    // threads) belongs to the requests too; an idle process does next to nothing meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    results[scenarioName] = { requests, perRequest: dumpedInstructions(pid, server.out, seen) / requests };
    control("--instr=off");
  }
  server.child.kill("SIGTERM");
  await new Promise((resolve) => server.child.once("exit", resolve));
  return results;
}

/** The node flags on the first line of a script (`#!/usr/bin/env -S node --flag`), as the command runs with them. */
function nodeFlags(script) {
  const first = readFileSync(script, "utf8").split("\n")[0];
  return (/^#!.*\bnode((?:\s+--\S+)*)\s*$/.exec(first)?.[1] ?? "").split(" ").filter(Boolean);
}

async function prepareService(url) {
  const put = await fetch(`${url}/data/bench-user/BENCH-GET/data.json`, { method: "PUT", headers: { ...data, "Content-Type": "application/json" }, body: DOC });
  if (!put.ok) throw new Error(`prepare: PUT ${put.status}`);
  const account = { email: "bench-user@lab.example", permitted: true, firstName: "Bench", lastName: "User", company: "Bench Lab" };
  const created = await fetch(`${url}/user/bench-user`, { method: "PUT", headers: { ...user, "Content-Type": "application/json" }, body: JSON.stringify(account) });
  if (!created.ok) throw new Error(`prepare: user PUT ${created.status}`);
  if (!chosen.includes("data-get-cold")) return;
  const cold = SCENARIOS["data-get-cold"];
  let next = 1;
  const putter = async () => {
    for (let n = next++; n <= cold.count; n = next++) {
      const response = await fetch(`${url}${cold.paths(n)}`, { method: "PUT", headers: { ...data, "Content-Type": "application/json" }, body: DOC });
      if (!response.ok) throw new Error(`prepare: PUT ${cold.paths(n)} ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, putter));
}

console.log(`callgrind instructions per request${options.encrypted ? ", serve encrypted at rest" : ""} (${new Date().toISOString()}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}, node ${process.version})`);
const service = await measure(
  "serve",
  [...nodeFlags(join(options.dist ?? join(root, "dist"), "src/adapters/node/cli.js")), join(options.dist ?? join(root, "dist"), "src/adapters/node/cli.js"), "serve", "--port", "0", "--data", join(scratch, "data")],
  { ...KEYS, ...ENCRYPTION, RATE_LIMITS: "off", NODE_ENV: "production" },
  () => "",
  prepareService,
);
let ceiling = {};
if (!options["no-ceiling"]) {
  const bodies = { default: { type: "application/json", base64: Buffer.from('{"ok":true}').toString("base64") } };
  bodies["data-get"] = { type: "application/json; charset=utf-8", base64: Buffer.from(DOC).toString("base64") };
  bodies["data-get-cold"] = bodies["data-get"];
  bodies["data-missing"] = { type: "application/json; charset=utf-8", base64: Buffer.from("[]").toString("base64") };
  bodies["data-put"] = { type: "application/json", base64: Buffer.from('{"success":true}').toString("base64") };
  bodies["audit-post"] = { type: "application/json", base64: Buffer.from('{"success":true,"entryCount":1,"filename":"audit-trails/bench-audit-1-2026-11-22.json"}').toString("base64") };
  writeFileSync(join(scratch, "bodies.json"), JSON.stringify(bodies));
  ceiling = await measure("ceiling", [join(root, "bench/ceiling/node.mjs")], { BENCH_BODIES: join(scratch, "bodies.json") }, (name) => `/${name}`);
}
const k = (value) => (value === undefined ? "-" : `${Math.round(value / 1000)}k`);
console.log("scenario      serve Ir/req  node:http Ir/req  ratio  (requests measured)");
for (const name of chosen) {
  const s = service[name];
  const c = ceiling[name];
  console.log(`${name.padEnd(13)} ${k(s.perRequest).padStart(12)}  ${k(c?.perRequest).padStart(16)}  ${c ? (c.perRequest / s.perRequest).toFixed(2).padStart(5) : "    -"}  (${s.requests}${c ? ` / ${c.requests}` : ""})`);
}
