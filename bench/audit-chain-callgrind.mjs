#!/usr/bin/env node
// Instructions per audit append, with the hash chain and without (the plain day append as
// bench/audit-chain.mjs makes it), counted by valgrind's callgrind: figures that other load on the
// machine does not move, for comparing two builds of the append path. Per store and kind, a
// child process under callgrind appends --warmup entries uninstrumented (the JIT settles), then
// --appends counted ones (all threads: the GC and compiler threads too) and dumps.
//
//   npm run build && node bench/audit-chain-callgrind.mjs [--store memory|files|files-sync]... [--kind plain|chained]... [--appends 2000] [--warmup 3000] [--dist DIR]
// (--dist: another build's dist/, e.g. of the commit before. files: FSYNC=off; files-sync:
// FSYNC=audit, not run unless asked, its flushes' kernel time not counted. Needs valgrind.)
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { dayEntry } from "./audit-entries.mjs";

const { values: options } = parseArgs({
  options: {
    store: { type: "string", multiple: true },
    kind: { type: "string", multiple: true },
    appends: { type: "string", default: "2000" },
    warmup: { type: "string", default: "3000" },
    dist: { type: "string" },
    child: { type: "boolean", default: false },
  },
});
const dist = resolve(options.dist ?? fileURLToPath(new URL("../dist", import.meta.url)));
const appends = Number(options.appends);
const warmup = Number(options.warmup);

if (options.child) {
  const store = options.store[0];
  const kind = options.kind[0];
  const load = (path) => import(pathToFileURL(join(dist, path)).href);
  const { createStorage } = await import("unstorage");
  const { createBlobStore } = await load("src/core/storage/unstorage-stores.js");
  const { createFileBlobStore } = await load("src/adapters/server/files/file-ports.js");
  const { appendAuditEntry } = await load("src/core/audit/trail.js");
  const { utcDay } = await load("src/core/audit/days.js");
  const { storageKeys } = await load("src/core/storage/keys.js");
  const { nodeSha256Hex } = await load("src/adapters/server/node-sha256.js");
  const DAY = "2026-11-22";
  const clock = { now: () => new Date(`${DAY}T12:00:00Z`) };
  const entry = (i) => dayEntry(DAY, i);
  const dir = mkdtempSync(join(os.tmpdir(), "fa-bench-chain-cg-"));
  const blobs = store === "memory" ? createBlobStore(createStorage()) : createFileBlobStore(dir, { sync: store === "files-sync", auditHeads: true });
  let i = 0;
  const append = kind === "plain"
    ? () => {
      // appendAuditEntry before the chain, step for step (as bench/audit-chain.mjs).
      const now = clock.now();
      return blobs.appendToJsonArray(storageKeys.auditDay("u1", utcDay(now)), { ...entry(i++), receivedAt: now.toISOString() });
    }
    : () => appendAuditEntry(blobs, clock, "u1", entry(i++), { hash: nodeSha256Hex });
  for (let n = 0; n < warmup; n++) await append();
  execFileSync("callgrind_control", ["--instr=on", String(process.pid)], { stdio: "ignore" });
  for (let n = 0; n < appends; n++) await append();
  execFileSync("callgrind_control", ["--dump", String(process.pid)], { stdio: "ignore" });
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

if (spawnSync("sh", ["-c", "command -v valgrind && command -v callgrind_control"], { stdio: "ignore" }).status !== 0) {
  console.error("valgrind is missing (Debian: apt-get install -y valgrind)");
  process.exit(1);
}
console.log(`node ${process.version}, dist ${dist}, ${appends} counted appends after ${warmup}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
const counts = {};
for (const store of options.store ?? ["memory", "files"]) {
  for (const kind of options.kind ?? ["plain", "chained"]) {
    const out = mkdtempSync(join(os.tmpdir(), "fa-callgrind-"));
    const argv = [fileURLToPath(import.meta.url), "--child", "--store", store, "--kind", kind, "--appends", String(appends), "--warmup", String(warmup), "--dist", dist];
    const run = spawnSync("valgrind", ["--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${join(out, "cg.%p")}`, process.execPath, ...argv], { encoding: "utf8" });
    if (run.status !== 0) throw new Error(`callgrind run failed (${store}, ${kind}): ${run.stderr.slice(-2000)}`);
    // The dump holds what ran while counting; the file written at exit, the rest.
    const dump = readdirSync(out).find((name) => /^cg\.\d+\.1$/.test(name));
    if (dump === undefined) throw new Error(`no callgrind dump in ${out}`);
    const text = readFileSync(join(out, dump), "utf8");
    const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
    rmSync(out, { recursive: true, force: true });
    counts[`${store} ${kind}`] = total / appends;
    console.log(`  ${store.padEnd(7)} ${kind.padEnd(8)} ${Math.round(total / appends).toLocaleString("en")} instructions per append`);
  }
  const plain = counts[`${store} plain`];
  const chained = counts[`${store} chained`];
  if (plain !== undefined && chained !== undefined) console.log(`  ${store.padEnd(7)} chained / plain ${(chained / plain).toFixed(2)}x`);
}
