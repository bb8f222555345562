#!/usr/bin/env node
// Time and peak memory of a ZIP export (EXCHANGE.md "ZIP") of one case of 100 images x 2 MB,
// first the way `forensic-annotation export --format zip` runs it, then over HTTP through the
// exchange worker of a `serve` on the same data (export, then import of that package as another
// user), with the server's peak RSS growth read from /proc/{pid} (Linux). The command's way: the file stores under a data
// directory (the embedded default), `writeCaseZip` of the built package, each chunk written to
// a file before the next image is read. Targets: >= 200 MB/s, and peak memory under twice the
// largest image plus 64 MB. The images are PNGs made incompressible by a chunk of noise (an import
// checks each image's structure), made
// once per run; each measured export runs in a fresh child process (warmed up with a small
// export first) so memory from seeding cannot hide or inflate anything. Peak memory is the
// child's RSS high-water (VmHWM reset with /proc/self/clear_refs before the export, Linux)
// above its RSS just before, and also the V8 heap + array buffers sampled during the export.
// Figures only: it fails only when an export fails or the archive does not check out.
//   npm run build && node bench/exchange.mjs [--images 100] [--mb 2] [--runs 3] [--dist DIR] [--sink file|null] [--crc native|js]
// --crc js uses the module's pure-JavaScript CRC-32 (what a browser runs) instead of node:zlib's.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, openAsBlob, readFileSync, rmSync, writeFileSync } from "node:fs";
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
const { crc32: jsCrc32 } = await import(modulePath("src/core/encoding/crc32.js"));

const UID = "bench-analyst";
const REVIEWER = "bench-reviewer";
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

/** A 1x1 PNG (signature, IHDR, IDAT, IEND) with a private chunk of noise making it `size` bytes: it does not compress, like a photo. */
const TINY_PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
function image(seed) {
  const bytes = new Uint8Array(size);
  bytes.set(TINY_PNG.subarray(0, 33));
  const filler = size - TINY_PNG.length - 12;
  const view = new DataView(bytes.buffer);
  view.setUint32(33, filler);
  bytes.set([0x70, 0x72, 0x56, 0x74], 37); // "prVt": ancillary, private
  for (let offset = 41; offset < 41 + filler; offset += 65536) crypto.getRandomValues(bytes.subarray(offset, Math.min(41 + filler, offset + 65536)));
  bytes.set([seed & 255, (seed >> 8) & 255], 41);
  view.setUint32(41 + filler, jsCrc32(bytes.subarray(37, 41 + filler)));
  bytes.set(TINY_PNG.subarray(33), 45 + filler);
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
  await ports.users.put(storageKeys.user(REVIEWER), JSON.stringify({
    uid: REVIEWER, email: "reviewer@lab.example", firstName: "Bench", lastName: "Reviewer", company: "Other Lab", permitted: true, cases: [], createdAt: "2026-01-01T00:00:00.000Z",
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
  await overHttp(limit);
} finally {
  cleanup();
}

/** The same case exported and imported over HTTP through `serve`'s exchange worker, with the server's peak RSS growth. */
async function overHttp(limit) {
  const key = "bench-exchange-key";
  const server = spawn(process.execPath, [join(dist, "src/adapters/node/cli.js"), "serve", "--port", "0", "--data", dataDir], {
    env: { PATH: process.env.PATH, R2_KEY_SECRET: key, RATE_LIMITS: "off", LOG_LEVEL: "off" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const url = await new Promise((found, failed) => {
      let out = "";
      const timer = setTimeout(() => failed(new Error(`serve did not get ready:\n${out}`)), 60_000);
      server.stdout.on("data", (chunk) => {
        out += chunk;
        const ready = /^ready\s+(http:\/\/\S+)/m.exec(out);
        if (ready !== null) {
          clearTimeout(timer);
          found(ready[1]);
        }
      });
      server.once("exit", (code) => failed(new Error(`serve exited (${code}):\n${out}`)));
    });
    const headers = { "X-Custom-Auth-Key": key };
    const serverMemory = () => {
      if (!linux) return null;
      const status = readFileSync(`/proc/${server.pid}/status`, "utf8");
      const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
      try {
        writeFileSync(`/proc/${server.pid}/clear_refs`, "5");
      } catch {
        // Not permitted: the peak is then since the server started.
      }
      return { rss: kib("VmRSS"), peak: kib("VmHWM") };
    };
    const zipPath = join(dataDir, "http.zip");
    const exportOnce = async (caseNumber) => {
      const response = await fetch(`${url}/exchange/${UID}/cases/${caseNumber}`, { headers });
      if (response.status !== 200) throw new Error(`HTTP export answered ${response.status}: ${await response.text()}`);
      const handle = await open(zipPath, "w");
      let bytes = 0;
      for await (const chunk of response.body) {
        bytes += chunk.length;
        for (let offset = 0; offset < chunk.length;) offset += (await handle.write(chunk, offset)).bytesWritten;
      }
      await handle.close();
      return bytes;
    };
    const importOnce = async () => {
      const response = await fetch(`${url}/exchange/${REVIEWER}/imports?overwrite=true`, {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/zip" },
        body: await openAsBlob(zipPath),
      });
      const result = await response.json();
      if (response.status !== 200 || result.filesImported === undefined) throw new Error(`HTTP import answered ${response.status}: ${JSON.stringify(result)}`);
      return result.filesImported;
    };
    await exportOnce("WARMUP");
    await importOnce();
    console.log(`\nover HTTP (serve on the same data, ${url}):`);
    const rows = [];
    for (let run = 0; run < runs; run++) {
      const before = serverMemory();
      let started = performance.now();
      const bytes = await exportOnce("BENCH");
      const exportSeconds = (performance.now() - started) / 1000;
      const afterExport = serverMemory();
      started = performance.now();
      const files = await importOnce();
      const importSeconds = (performance.now() - started) / 1000;
      const afterImport = serverMemory();
      if (files !== count) throw new Error(`the import stored ${files} images, not ${count}`);
      const row = {
        exportSeconds,
        importSeconds,
        exportGrowth: before === null ? null : afterExport.peak - before.rss,
        importGrowth: afterExport === null ? null : afterImport.peak - afterExport.rss,
      };
      rows.push(row);
      const growth = (value) => (value === null ? "n/a" : `+${(value / 1e6).toFixed(1)} MB`);
      console.log(
        `run ${run + 1}: export ${exportSeconds.toFixed(3)} s, ${((count * size) / 1e6 / exportSeconds).toFixed(0)} MB/s (${(bytes / 1e6).toFixed(1)} MB), server peak RSS ${growth(row.exportGrowth)}; ` +
          `import ${importSeconds.toFixed(3)} s, ${((count * size) / 1e6 / importSeconds).toFixed(0)} MB/s, server peak RSS ${growth(row.importGrowth)}`,
      );
    }
    const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const exportSeconds = median(rows.map((row) => row.exportSeconds));
    const importSeconds = median(rows.map((row) => row.importSeconds));
    console.log(`median over HTTP: export ${((count * size) / 1e6 / exportSeconds).toFixed(0)} MB/s, import ${((count * size) / 1e6 / importSeconds).toFixed(0)} MB/s`);
    if (linux) {
      const exportGrowth = median(rows.map((row) => row.exportGrowth));
      const importGrowth = median(rows.map((row) => row.importGrowth));
      console.log(
        `server peak RSS above its RSS before: export +${(exportGrowth / 1e6).toFixed(1)} MB, import +${(importGrowth / 1e6).toFixed(1)} MB; ` +
          `bound 2 x largest image + 64 MB = ${(limit / 1e6).toFixed(1)} MB: ${Math.max(exportGrowth, importGrowth) <= limit ? "within" : "beyond"}`,
      );
    }
  } finally {
    server.kill("SIGTERM");
    await new Promise((done) => (server.exitCode !== null ? done() : server.once("exit", done)));
  }
}
