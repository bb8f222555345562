#!/usr/bin/env node
// Encryption at rest: data GET/PUT of a 2 KB document and image upload/delivery, with and
// without DATA_ENCRYPTION_KEYS, in one run, next to a bare node:http server. The GET twice:
// warm (one document read over and over: an encrypted server serves the plaintext it kept of
// it, docs/storage.md#encryption-at-rest) and cold (--cold-documents distinct documents read
// in turn, more than the kept plaintexts and unwrapped data keys hold: every read opens an
// envelope and unwraps its key). Both servers are pinned to CPU 0 and wrk to CPU 1 (taskset);
// each scenario loads them one at a time, plain and encrypted in turn, --runs times, and
// shows each side's median run. Figures only: it fails only on a real error (a server that
// does not start, a failed request, a bad read-back).
//
//   npm run build && node bench/encryption.mjs [--duration S] [--connections N] [--image-kb KB] [--runs N] [--warmup S] [--data-root DIR]
// See bench/README.md.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { noisePng } from "./noise-png.mjs";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { dataRootOrExit } from "./data-root.mjs";
import { track } from "./children.mjs";
import { makeDocument } from "./documents.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist/src/adapters/node/cli.js");
const { values: options } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "16" },
    "image-kb": { type: "string", default: "256" },
    "cold-documents": { type: "string", default: "5000" },
    runs: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    "data-root": { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (options.help) {
  console.log("Usage: node bench/encryption.mjs [--duration SECONDS] [--connections N] [--image-kb KB] [--cold-documents N] [--runs N] [--warmup S] [--data-root DIR]");
  process.exit(0);
}
const duration = Number(options.duration);
const connections = Number(options.connections);
const imageKb = Number(options["image-kb"]);
const coldDocuments = Number(options["cold-documents"]);
const runs = Number(options.runs);
const warmup = Number(options.warmup);
if (!(runs >= 1) || !(warmup >= 1) || !(duration >= 1)) {
  console.error("--runs, --warmup and --duration must be at least 1");
  process.exit(2);
}
for (const tool of ["wrk", "taskset"]) {
  try {
    execFileSync("sh", ["-c", `command -v ${tool}`]);
  } catch {
    console.error(`${tool} is needed (Debian: apt-get install ${tool === "wrk" ? "wrk" : "util-linux"})`);
    process.exit(1);
  }
}
if (!existsSync(cli)) {
  console.error(`dist/ is missing (${cli}); run npm run build first`);
  process.exit(1);
}
if (os.cpus().length < 2) {
  console.error("two CPUs are needed: the server on CPU 0, wrk on CPU 1");
  process.exit(1);
}

const dataFolder = dataRootOrExit(options["data-root"]);
const scratch = mkdtempSync(join(dataFolder.dir, "fa-bench-enc-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

const DOC = makeDocument(2048);

const IMAGE = noisePng(imageKb * 1024);
const BOUNDARY = "----fa-bench-boundary";
const MULTIPART = Buffer.concat([
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="bench.png"\r\nContent-Type: image/png\r\n\r\n`),
  IMAGE,
  Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
]);

const BARE_SERVER = `
const http = require("node:http");
const doc = Buffer.from(process.env.BENCH_DOC, "utf8");
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => { res.writeHead(200, { "content-type": "application/json", "content-length": doc.length }); res.end(doc); });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log("ready http://127.0.0.1:" + server.address().port));
`;

/** Starts a child on CPU 0 and resolves with the URL of its `ready` line. */
function startPinned(args, env) {
  const child = track(spawn("taskset", ["-c", "0", ...args], { env, cwd: scratch, stdio: ["ignore", "pipe", "pipe"] }));
  let log = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in 30 s\n${log}`)), 30_000);
    const onData = (chunk) => {
      log += chunk;
      const match = /^ready\s+(http:\/\/\S+)/m.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1], stop: () => stop(child) });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`exited (${code}) before it was ready\n${log}`)));
  });
}
function stop(child) {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  return exited;
}

/** wrk on CPU 1 against `url`, with an optional Lua script; answers requests/s and non-2xx count. */
function wrk(url, script, seconds = duration) {
  const args = ["-c", "1", "wrk", "-t1", `-c${connections}`, `-d${seconds}s`, "--latency", ...(script ? ["-s", script] : []), url];
  const out = execFileSync("taskset", args, { encoding: "utf8" });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const bad = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors:.*/.exec(out)?.[0];
  const p50 = /^\s+50%\s+(\S+)/m.exec(out)?.[1];
  const p99 = /^\s+99%\s+(\S+)/m.exec(out)?.[1];
  if (bad > 0) throw new Error(`${url}: ${bad} responses were not 2xx\n${out}`);
  return { rps, p50, p99, errors };
}

function luaScript(name, method, headers, bodyFile, rotatePath, rotateOver = connections) {
  const path = join(scratch, `${name}.lua`);
  const lines = [`wrk.method = "${method}"`];
  // Writes spread over as many documents as connections, as run.mjs does: one key's writes are serialized.
  if (rotatePath) lines.push("local n = 0", `request = function() n = n + 1; return wrk.format(nil, string.format("${rotatePath}", n % ${rotateOver})) end`);
  for (const [header, value] of Object.entries(headers)) lines.push(`wrk.headers["${header}"] = "${value}"`);
  if (bodyFile) lines.push(`local f = io.open("${bodyFile}", "rb")`, "wrk.body = f:read(\"*a\")", "f:close()");
  writeFileSync(path, lines.join("\n"));
  return path;
}

const SECRET = "bench-secret-0123456789";
const TOKEN = "bench-image-token-0123456789";
const docFile = join(scratch, "doc.json");
writeFileSync(docFile, DOC);
const formFile = join(scratch, "form.bin");
writeFileSync(formFile, MULTIPART);
const dataHeaders = { "X-Custom-Auth-Key": SECRET, "Content-Type": "application/json" };
const putScript = luaScript("put", "PUT", dataHeaders, docFile, "/data/bench/PUT-%d/data.json");
const getScript = luaScript("get", "GET", { "X-Custom-Auth-Key": SECRET });
const coldScript = luaScript("cold", "GET", { "X-Custom-Auth-Key": SECRET }, undefined, "/data/bench/COLD-%d/data.json", coldDocuments);
const uploadScript = luaScript("upload", "POST", { Authorization: `Bearer ${TOKEN}`, "Content-Type": `multipart/form-data; boundary=${BOUNDARY}` }, formFile);

/** Starts `serve` with `extraEnv`, checks it round-trips a document and an image, stores the cold GET's documents; answers its URLs. */
async function startServe(label, extraEnv) {
  const data = join(scratch, label);
  const env = { PATH: process.env.PATH ?? "", HOME: scratch, NODE_ENV: "production", R2_KEY_SECRET: SECRET, IMAGES_API_TOKEN: TOKEN, RATE_LIMITS: "off", ...extraEnv };
  const server = await startPinned([process.execPath, cli, "serve", "--port", "0", "--data", data], env);
  const put = await fetch(`${server.url}/data/bench/GET/data.json`, { method: "PUT", headers: dataHeaders, body: DOC });
  const got = await fetch(`${server.url}/data/bench/GET/data.json`, { headers: dataHeaders });
  if (put.status !== 200 || (await got.text()) !== DOC) throw new Error(`${label}: the 2 KB document did not round-trip`);
  const uploaded = await fetch(`${server.url}/image/`, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": `multipart/form-data; boundary=${BOUNDARY}` }, body: MULTIPART });
  const { result } = await uploaded.json();
  const signed = new URL(await (await fetch(`${server.url}/image/${encodeURIComponent(result.variants[0])}`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text());
  const deliveryUrl = `${server.url}${signed.pathname}${signed.search}`;
  const delivered = Buffer.from(await (await fetch(deliveryUrl)).arrayBuffer());
  if (!delivered.equals(IMAGE)) throw new Error(`${label}: the image did not round-trip`);
  // The cold GET's documents, 16 writes at a time.
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < coldDocuments) {
      const response = await fetch(`${server.url}/data/bench/COLD-${next++}/data.json`, { method: "PUT", headers: dataHeaders, body: DOC });
      if (response.status !== 200) throw new Error(`${label}: a cold document's PUT answered ${response.status}`);
    }
  }));
  return { server, deliveryUrl };
}

/** Each scenario: a warm-up per side, then --runs wrk runs per side, plain and encrypted in turn (so noise hits both); the median run of each side. */
function measure(plain, sealed) {
  const scenarios = {
    get: (s) => [`${s.server.url}/data/bench/GET/data.json`, getScript],
    cold: (s) => [`${s.server.url}/data/bench/COLD-0/data.json`, coldScript],
    put: (s) => [`${s.server.url}/data/bench/PUT/data.json`, putScript],
    upload: (s) => [`${s.server.url}/image/`, uploadScript],
    delivery: (s) => [s.deliveryUrl, undefined],
  };
  const servers = { plain, sealed };
  const out = { plain: {}, sealed: {} };
  for (const [name, target] of Object.entries(scenarios)) {
    const taken = { plain: [], sealed: [] };
    for (const server of Object.values(servers)) wrk(...target(server), warmup);
    for (let run = 0; run < runs; run++) {
      for (const [side, server] of Object.entries(servers)) taken[side].push(wrk(...target(server)));
    }
    for (const side of Object.keys(servers)) out[side][name] = taken[side].sort((a, b) => a.rps - b.rps)[Math.floor(runs / 2)];
  }
  return out;
}

const keys = JSON.stringify({ keys: [{ kty: "oct", kid: "bench", k: randomBytes(32).toString("base64url") }] });
console.log("forensic-annotation encryption-at-rest bench");
console.log(`machine  ${os.cpus().length} CPUs, ${os.cpus()[0]?.model?.trim()}; node ${process.version}`);
console.log(`data     ${dataFolder.description}`);
console.log(`load     wrk -t1 -c${connections} on CPU 1, ${warmup} s warm-up then ${runs} runs of ${duration} s per side, plain and encrypted in turn, the median run shown; both servers on CPU 0, loaded one at a time; files under a fresh --data; image ${IMAGE.length} bytes`);
console.log("");
const bareServer = await startPinned([process.execPath, "-e", BARE_SERVER], { PATH: process.env.PATH ?? "", BENCH_DOC: DOC });
const bare = wrk(`${bareServer.url}/doc.json`);
await bareServer.stop();
// Both servers up at once, loaded one at a time: each scenario alternates between them.
const plainServe = await startServe("plain", {});
const sealedServe = await startServe("encrypted", { DATA_ENCRYPTION_KEYS: keys });
const { plain, sealed } = measure(plainServe, sealedServe);
await plainServe.server.stop();
await sealedServe.server.stop();

const fmt = (value) => value.toFixed(0);
const rows = [
  ["data GET 2 KB document, warm (one read again)", plain.get, sealed.get],
  [`data GET 2 KB document, cold (${coldDocuments} in turn)`, plain.cold, sealed.cold],
  ["data PUT 2 KB document", plain.put, sealed.put],
  [`image upload (${Math.round(IMAGE.length / 1024)} KB)`, plain.upload, sealed.upload],
  [`image delivery (${Math.round(IMAGE.length / 1024)} KB)`, plain.delivery, sealed.delivery],
];
console.log(`bare node:http GET 2 KB: ${fmt(bare.rps)} req/s (p50 ${bare.p50}, p99 ${bare.p99})`);
console.log("");
const header = ["request", "plain req/s", "encrypted req/s", "change", "plain p50/p99", "encrypted p50/p99"];
const table = rows.map(([label, a, b]) => [label, fmt(a.rps), fmt(b.rps), `${(((b.rps - a.rps) / a.rps) * 100).toFixed(1)} %`, `${a.p50}/${a.p99}`, `${b.p50}/${b.p99}`]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
const line = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ");
console.log(line(header));
console.log(widths.map((w) => "-".repeat(w)).join("  "));
for (const row of table) console.log(line(row));
const getChange = (sealed.get.rps - plain.get.rps) / plain.get.rps;
const coldChange = (sealed.cold.rps - plain.cold.rps) / plain.cold.rps;
const putChange = (sealed.put.rps - plain.put.rps) / plain.put.rps;
const met = (change) => (-change <= 0.15 ? "met" : "missed");
console.log("");
console.log(`goal: 2 KB documents at most 15 % slower encrypted, in this run: GET warm ${(-getChange * 100).toFixed(1)} % slower (${met(getChange)}), GET cold ${(-coldChange * 100).toFixed(1)} % slower (${met(coldChange)}), PUT ${(-putChange * 100).toFixed(1)} % slower (${met(putChange)})`);
console.log("(warm: the encrypted server serves the plaintext it keeps of a document read before, after comparing the stored envelope byte for byte; cold: every read decrypts)");
for (const [label, a, b] of rows) for (const r of [a, b]) if (r.errors) console.log(`note (${label}): ${r.errors}`);

// What a cold read cannot skip on node:crypto: the two AES-256-GCM decryptions of an envelope
// (its 32-byte data key under the key-encryption key, then the 2 KB body under that data key),
// each a fresh context with its additional data and tag, the calls the service's suite makes
// (src/adapters/server/node-cipher.ts), over distinct envelopes as the cold row reads them.
function coldOpenFloorUs() {
  const kek = randomBytes(32);
  const body = Buffer.from(DOC);
  const aad = randomBytes(48);
  const seal = (key, iv, plaintext, additional) => {
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    if (additional) cipher.setAAD(additional);
    const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { iv, sealed, tag: cipher.getAuthTag() };
  };
  const open = (key, { iv, sealed, tag }, additional) => {
    const decipher = createDecipheriv("aes-256-gcm", key, iv);
    if (additional) decipher.setAAD(additional);
    decipher.setAuthTag(tag);
    const plain = decipher.update(sealed);
    decipher.final();
    return plain;
  };
  const envelopes = Array.from({ length: 2000 }, () => {
    const dataKey = randomBytes(32);
    return { wrapped: seal(kek, randomBytes(12), dataKey), body: seal(dataKey, randomBytes(12), body, aad) };
  });
  const rounds = [];
  for (let round = 0; round < 7; round++) {
    const start = process.hrtime.bigint();
    let bytes = 0;
    for (const envelope of envelopes) bytes += open(open(kek, envelope.wrapped), envelope.body, aad).length;
    if (bytes !== envelopes.length * body.length) throw new Error("the floor's envelopes did not open");
    rounds.push(Number(process.hrtime.bigint() - start) / 1000 / envelopes.length);
  }
  return rounds.sort((x, y) => x - y)[3];
}
const floorUs = coldOpenFloorUs();
const plainColdUs = 1e6 / plain.cold.rps;
console.log(
  `floor of a cold read (node:crypto alone, in this process, median of 7 rounds): ${floorUs.toFixed(1)} us for the two AES-256-GCM decryptions = ${
    ((floorUs / plainColdUs) * 100).toFixed(1)
  } % of the plain cold GET's ${plainColdUs.toFixed(1)} us a request (1 s / its req/s: the server's one core is saturated)`,
);
