#!/usr/bin/env node
// The audit hash chain's cost (docs/storage.md#audit-chain), in one run: the p50 of one audit
// append with the chain (head compare-and-swap, hashing, then the day append) against the same
// store's plain append as appendAuditEntry did it before the chain (the server's clock, the UTC
// day's key, receivedAt added, then the day append: the same non-chain work on both sides), on
// memory and on files (fsync off and on), and the floor of any chain that keeps its head apart
// from the days (the plain append and one write of a head's bytes, nothing else); then the time
// to verify a 10,000-entry trail. The
// chained side hashes with node:crypto, as `serve` does (ServicePorts.auditHash); a third store
// appends with the core's JavaScript SHA-256 (workerd's and browsers' default) for comparison.
// Figures only: it fails only on a real error (a trail that does not verify).
//
//   npm run build && node bench/audit-chain.mjs [--appends N] [--entries N] [--runs N] [--data-root DIR]
// (--data-root: where the file stores live, default the system's temporary folder; its filesystem is printed.)
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createStorage } from "unstorage";
import { createBlobStore } from "../dist/src/core/storage/unstorage-stores.js";
import { createFileBlobStore } from "../dist/src/adapters/server/files/file-ports.js";
import { appendAuditEntry, readAuditTrail } from "../dist/src/core/audit/trail.js";
import { verifyAuditTrail } from "../dist/src/core/audit/verify.js";
import { entryHash } from "../dist/src/core/audit/chain.js";
import { utcDay } from "../dist/src/core/audit/days.js";
import { storageKeys } from "../dist/src/core/storage/keys.js";
import { nodeSha256Hex } from "../dist/src/adapters/server/node-sha256.js";
import { dayEntry } from "./audit-entries.mjs";
import { dataRootOrExit } from "./data-root.mjs";

// As the chain writes its heads: in place where the store can (files: two slots by turns).
const IN_PLACE = { inPlace: true };
const { values: options } = parseArgs({
  options: {
    appends: { type: "string", default: "2000" },
    entries: { type: "string", default: "10000" },
    runs: { type: "string", default: "5" },
    "data-root": { type: "string" },
  },
});
const dataFolder = dataRootOrExit(options["data-root"]);
const appends = Number(options.appends);
const entries = Number(options.entries);
const runs = Number(options.runs);
const DAY = "2026-11-22";
const clock = { now: () => new Date(`${DAY}T12:00:00Z`) };
const entry = (i) => dayEntry(DAY, i);
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];
const ms = (value) => `${value.toFixed(3)} ms`;
const folders = [];
const folder = () => {
  const dir = mkdtempSync(join(dataFolder.dir, "fa-bench-chain-"));
  folders.push(dir);
  return dir;
};

// Other work on the machine skews every figure: the load average is printed with them.
console.log(`node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), ${os.platform()} ${os.release()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
console.log(`file stores under ${dataFolder.description}`);
console.log(`\nappend p50 with the chain vs the plain day append, ${appends} appends each, interleaved in one run:`);
const backends = [
  ["memory", () => createBlobStore(createStorage())],
  ["files, FSYNC=off", () => createFileBlobStore(folder(), { sync: false, auditHeads: true })],
  ["files, FSYNC=audit", () => createFileBlobStore(folder(), { sync: true, auditHeads: true })],
];
for (const [name, make] of backends) {
  const plainStore = make();
  const chainStore = make();
  const jsStore = make();
  const floorStore = make();
  const plain = [];
  const chained = [];
  const chainedJs = [];
  const floor = [];
  // A head as the chain writes it (a signed one is longer), its bytes made once.
  let headBytes;
  for (let i = 0; i < appends; i++) {
    let start = performance.now();
    // appendAuditEntry before the chain, step for step.
    const now = clock.now();
    await plainStore.appendToJsonArray(storageKeys.auditDay("u1", utcDay(now)), { ...entry(i), receivedAt: now.toISOString() });
    plain.push(performance.now() - start);
    start = performance.now();
    await appendAuditEntry(chainStore, clock, "u1", entry(i), { hash: nodeSha256Hex });
    chained.push(performance.now() - start);
    start = performance.now();
    await appendAuditEntry(jsStore, clock, "u1", entry(i));
    chainedJs.push(performance.now() - start);
    // The floor of any design keeping the head apart: the plain append, then the store's head update with a head's bytes (no hash, no serializing).
    headBytes ??= await chainStore.get(storageKeys.auditHead("u1"));
    start = performance.now();
    const at = clock.now();
    await floorStore.appendToJsonArray(storageKeys.auditDay("u1", utcDay(at)), { ...entry(i), receivedAt: at.toISOString() });
    await floorStore.update(storageKeys.auditHead("u1"), () => headBytes, IN_PLACE);
    floor.push(performance.now() - start);
  }
  // Every chained append hashes its entry (RFC 8785 JSON, SHA-256): timed alone, in a batch (one is below the clock's grain).
  const stored = { ...entry(0), receivedAt: clock.now().toISOString(), seq: 1, prevHash: "0".repeat(64) };
  let hashStart = performance.now();
  for (let i = 0; i < appends; i++) entryHash(stored, nodeSha256Hex);
  const hashOne = (performance.now() - hashStart) / appends;
  const ratio = percentile(chained, 50) / percentile(plain, 50);
  console.log(
    `  ${name.padEnd(20)} plain p50 ${ms(percentile(plain, 50))} p99 ${ms(percentile(plain, 99))} | chained p50 ${ms(percentile(chained, 50))} p99 ${
      ms(percentile(chained, 99))
    } | ${ratio.toFixed(2)}x (goal <= 1.3x)`,
  );
  const first = chained.slice(0, 100);
  const last = chained.slice(-100);
  console.log(`  ${"".padEnd(20)} chained p50 of the first 100 ${ms(percentile(first, 50))}, of the last 100 ${ms(percentile(last, 50))}`);
  console.log(`  ${"".padEnd(20)} chained with the core's JS SHA-256 p50 ${ms(percentile(chainedJs, 50))} (${(percentile(chainedJs, 50) / percentile(plain, 50)).toFixed(2)}x)`);
  console.log(`  ${"".padEnd(20)} floor: plain append + the store's head update with fixed bytes p50 ${ms(percentile(floor, 50))} (${(percentile(floor, 50) / percentile(plain, 50)).toFixed(2)}x);` +
    ` hashing the entry alone ${ms(hashOne)} (${((100 * hashOne) / percentile(plain, 50)).toFixed(0)} % of the plain p50)`);
}

console.log(`\nverifying a trail of ${entries} entries (files, written with the chain):`);
const store = createFileBlobStore(folder(), { sync: false, auditHeads: true });
for (let i = 0; i < entries; i++) await appendAuditEntry(store, clock, "u1", entry(i), { hash: nodeSha256Hex });
const reads = [];
const verifies = [];
for (let run = 0; run < runs; run++) {
  let start = performance.now();
  const input = await readAuditTrail(store, "u1", [DAY]);
  reads.push(performance.now() - start);
  start = performance.now();
  const result = await verifyAuditTrail(input);
  verifies.push(performance.now() - start);
  if (!result.valid || result.entries !== entries) throw new Error(`the trail does not verify: ${JSON.stringify(result.firstBad)}`);
}
console.log(`  read (parse the day and head) median ${ms(percentile(reads, 50))}; verifyAuditTrail median ${ms(percentile(verifies, 50))} (goal <= 150 ms), all runs: ${verifies.map((v) => v.toFixed(1)).join(", ")} ms`);
for (const dir of folders) rmSync(dir, { recursive: true, force: true });
