#!/usr/bin/env node
// Time and peak memory of a ZIP export (EXCHANGE.md "ZIP") of one case of 100 images x 2 MB,
// the way `forensic-annotation export --format zip` runs it: the file stores under a data
// directory (the embedded default), `writeCaseZip` of the built package, each chunk written to
// a file before the next image is read. Targets: >= 200 MB/s, and peak memory under twice the
// largest image plus 64 MB. The images are incompressible noise with a JPEG signature, made
// once per run; each measured export runs in a fresh child process (warmed up with a small
// export first) so memory from seeding cannot hide or inflate anything. Peak memory is the
// child's RSS high-water (VmHWM reset with /proc/self/clear_refs before the export, Linux)
// above its RSS just before, and also the V8 heap + array buffers sampled during the export.
// Figures only: it fails only when an export fails or the archive does not check out.
//   npm run build && node bench/exchange.mjs [--images 100] [--mb 2] [--runs 3] [--dist DIR] [--sink file|null] [--crc native|js]
// --crc js uses the module's pure-JavaScript CRC-32 (what a browser runs) instead of node:zlib's.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join, resolve } from "node:path";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import * as zlib from "node:zlib";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values: options } = parseArgs({
  options: {
    images: { type: "string", default: "100" },
    mb: { type: "string", default: "2" },
    runs: { type: "string", default: "3" },
    dist: { type: "string", default: join(root, "dist") },
    sink: { type: "string", default: "file" },
    crc: { type: "string", default: "native" },
    child: { type: "string" },
  },
});
const dist = resolve(options.dist);
const modulePath = (path) => pathToFileURL(join(dist, path)).href;
for (const path of ["src/core/exchange/mod.js", "src/adapters/server/files/file-ports.js"]) {
  if (!existsSync(join(dist, path))) {
    console.error(`${join(dist, path)} not found. Build first:  npm run build   then  node bench/exchange.mjs`);
    process.exit(1);
  }
}
const { portsExchangeStore, writeCaseZip } = await import(modulePath("src/core/exchange/mod.js"));
const { createFilePorts } = await import(modulePath("src/adapters/server/files/file-ports.js"));
const { storageKeys } = await import(modulePath("src/core/storage/keys.js"));

const UID = "bench-analyst";
const linux = process.platform === "linux";
const statusKib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0);

/** One export in this process: answers its figures as JSON on stdout. */
async function child(dataDir) {
  const store = portsExchangeStore(createFilePorts(dataDir));
  const sinkPath = join(dataDir, "out.zip");
  const exportTo = async (caseNumber) => {
    const handle = options.sink === "file" ? await open(sinkPath, "w") : null;
    let bytes = 0;
    const summary = await writeCaseZip(store, UID, caseNumber, async (chunk) => {
      bytes += chunk.length;
      if (handle !== null) {
        for (let offset = 0; offset < chunk.length;) offset += (await handle.write(chunk, offset)).bytesWritten;
      }
    }, { crc32: options.crc === "native" ? zlib.crc32 : undefined });
    await handle?.close();
    return { summary, bytes };
  };
  await exportTo("WARMUP"); // compiles the code paths; its memory is freed before measuring
  globalThis.gc?.();
  await new Promise((done) => setTimeout(done, 50));
  let hwm = false;
  if (linux) {
    try {
      writeFileSync("/proc/self/clear_refs", "5");
      hwm = true;
    } catch {
      // Not permitted: fall back to sampling.
    }
  }
  const before = process.memoryUsage();
  let sampledRss = before.rss;
  let sampledHeap = before.heapUsed + before.arrayBuffers;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    sampledRss = Math.max(sampledRss, now.rss);
    sampledHeap = Math.max(sampledHeap, now.heapUsed + now.arrayBuffers);
  }, 5);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const { summary, bytes } = await exportTo("BENCH");
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  const after = process.memoryUsage();
  sampledRss = Math.max(sampledRss, after.rss);
  sampledHeap = Math.max(sampledHeap, after.heapUsed + after.arrayBuffers);
  const peakRss = hwm ? statusKib("VmHWM") * 1024 : sampledRss;
  process.stdout.write(JSON.stringify({
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    bytes,
    images: summary.images,
    peakRss,
    rssBefore: before.rss,
    heapBefore: before.heapUsed + before.arrayBuffers,
    peakHeap: sampledHeap,
    hwm,
  }));
}

if (options.child !== undefined) {
  await child(options.child);
  process.exit(0);
}

// ---------------------------------------------------------------- seed a case on disk

const count = Number(options.images);
const size = Math.round(Number(options.mb) * 1024 * 1024);
const runs = Number(options.runs);
const dataDir = mkdtempSync(join(tmpdir(), "fa-bench-exchange-"));
const cleanup = () => rmSync(dataDir, { recursive: true, force: true });
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});

/** Noise with a JPEG signature: does not compress, like a photo. */
function image(seed) {
  const bytes = new Uint8Array(size);
  for (let offset = 0; offset < size; offset += 65536) crypto.getRandomValues(bytes.subarray(offset, Math.min(size, offset + 65536)));
  bytes.set([0xff, 0xd8, 0xff, 0xe0, seed & 255, (seed >> 8) & 255]);
  return bytes;
}

try {
  const started = performance.now();
  const ports = createFilePorts(dataDir);
  const encode = (value) => new TextEncoder().encode(JSON.stringify(value));
  await ports.users.put(storageKeys.user(UID), JSON.stringify({
    uid: UID, email: "bench@lab.example", firstName: "Bench", lastName: "Analyst", company: "Lab", permitted: true,
    cases: [{ caseNumber: "BENCH", createdAt: "2026-01-01T00:00:00.000Z" }, { caseNumber: "WARMUP", createdAt: "2026-01-01T00:00:00.000Z" }],
    createdAt: "2026-01-01T00:00:00.000Z",
  }));
  const seedCase = async (caseNumber, images) => {
    const files = [];
    for (let i = 0; i < images; i++) {
      const id = `${caseNumber.toLowerCase()}-image-${String(i).padStart(4, "0")}`;
      await ports.images.put(storageKeys.image(id), image(i));
      files.push({ id, originalFilename: `photo-${i}.jpg`, uploadedAt: "2026-01-02T00:00:00.000Z" });
      await ports.data.put(storageKeys.annotations(UID, caseNumber, id), encode({
        leftCase: caseNumber, rightCase: caseNumber, leftItem: "1", rightItem: "2", includeConfirmation: false, updatedAt: "2026-01-03T00:00:00.000Z",
        boxAnnotations: [{ id: `box-${i}`, x: 10, y: 10, width: 20, height: 20, color: "#ff0000", timestamp: "2026-01-03T00:00:00.000Z" }],
      }));
    }
    await ports.data.put(storageKeys.case(UID, caseNumber), encode({ caseNumber, files, createdAt: "2026-01-01T00:00:00.000Z" }));
  };
  await seedCase("WARMUP", 2);
  await seedCase("BENCH", count);
  console.log(`seeded ${count} images x ${(size / 1e6).toFixed(2)} MB (${((count * size) / 1e6).toFixed(0)} MB) under ${dataDir} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (options.crc === "native" && typeof zlib.crc32 !== "function") options.crc = "js";
  console.log(
    `node ${process.version}, sink: ${options.sink === "file" ? "a file in the data directory" : "discarded"}, ` +
      `CRC-32: ${options.crc === "native" ? "node:zlib crc32 (as the command uses it)" : "the exchange module's JavaScript one"}\n`,
  );

  const results = [];
  for (let run = 0; run < runs; run++) {
    const child = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--child", dataDir, "--dist", dist, "--sink", options.sink, "--crc", options.crc, "--images", String(count), "--mb", options.mb], {
      encoding: "utf8",
      maxBuffer: 1 << 20,
    });
    if (child.status !== 0) throw new Error(`export failed:\n${child.stderr}`);
    const result = JSON.parse(child.stdout);
    if (result.images !== count) throw new Error(`the archive holds ${result.images} images, not ${count}`);
    results.push(result);
    const mbps = (count * size) / 1e6 / result.seconds;
    console.log(
      `run ${run + 1}: ${result.seconds.toFixed(3)} s, ${mbps.toFixed(0)} MB/s of images (${(result.bytes / 1e6).toFixed(1)} MB archive), ` +
        `CPU ${result.cpuSeconds.toFixed(2)} s (all threads); ` +
        `peak RSS ${(result.peakRss / 1e6).toFixed(1)} MB (+${((result.peakRss - result.rssBefore) / 1e6).toFixed(1)} MB over ${(result.rssBefore / 1e6).toFixed(1)} MB before); ` +
        `peak heap+buffers +${((result.peakHeap - result.heapBefore) / 1e6).toFixed(1)} MB`,
    );
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const seconds = median(results.map((r) => r.seconds));
  const growth = median(results.map((r) => r.peakRss - r.rssBefore));
  const heapGrowth = median(results.map((r) => r.peakHeap - r.heapBefore));
  const mbps = (count * size) / 1e6 / seconds;
  const limit = 2 * size + 64 * 1024 * 1024;
  const best = Math.min(...results.map((r) => r.seconds));
  console.log(`\nmedian: ${seconds.toFixed(3)} s, ${mbps.toFixed(0)} MB/s (target >= 200 MB/s: ${mbps >= 200 ? "met" : "missed"}); best ${((count * size) / 1e6 / best).toFixed(0)} MB/s`);
  console.log(`load average while running: ${loadavg().map((n) => n.toFixed(2)).join(" ")} on ${availableParallelism()} CPUs`);
  console.log(
    `peak memory above the process before the export: RSS +${(growth / 1e6).toFixed(1)} MB, heap+buffers +${(heapGrowth / 1e6).toFixed(1)} MB; ` +
      `target < 2 x largest image + 64 MB = ${(limit / 1e6).toFixed(1)} MB: ${growth < limit ? "met" : "missed"}`,
  );
  console.log(results[0].hwm ? "Peak RSS: VmHWM since the export started (clear_refs)." : "Peak RSS: largest RSS sampled every 5 ms.");
} finally {
  cleanup();
}
