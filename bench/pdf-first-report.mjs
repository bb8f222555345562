#!/usr/bin/env node
// The PDF worker's first report in a fresh workerd isolate against its warm median. The PDF
// module worker (src/adapters/cloudflare/entries/pdf.ts) is bundled as it is deployed
// (bundleWorker of scripts/start-workerd.mjs: esbuild, wrangler's conditions, minified) and
// run in the real workerd through Miniflare. Each round starts a new Miniflare (a new workerd
// process, so a new isolate), times its start-up, then the first POST / of a report (wall
// time, and the CPU time workerd used meanwhile, read from /proc on Linux), then --warm more
// reports after --warmup untimed ones (and workerd's mean CPU time per warm report). For scale, each round also starts a second workerd whose
// first request renders nothing (GET /, the worker's 405): what any first request costs there.
// Prints per round and the medians; goals: first report <= 400 ms wall and <= 4 x the warm
// median. Figures only: it fails only when a report fails.
// --script FILE measures another bundle of a PDF module worker instead (e.g. an older build).
//   npm run build && node bench/pdf-first-report.mjs [--rounds 5] [--warm 20] [--warmup 3] [--script FILE]
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import jpeg from "jpeg-js";
import { Miniflare } from "miniflare";
import { bundleWorker } from "../scripts/start-workerd.mjs";

const { values: options } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    warm: { type: "string", default: "20" },
    warmup: { type: "string", default: "3" },
    script: { type: "string" },
  },
});
const rounds = Number(options.rounds);
const warmRuns = Number(options.warm);
const warmup = Number(options.warmup);

/** A 1600 x 1200 photo-like JPEG (gradients and noise), as a data: URL. */
function photoDataUrl() {
  const width = 1600;
  const height = 1200;
  const data = Buffer.alloc(width * height * 4);
  let seed = 7;
  for (let i = 0; i < width * height; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const x = i % width;
    const y = Math.floor(i / width);
    data[4 * i] = (x * 255) / width + (seed & 15);
    data[4 * i + 1] = (y * 255) / height + ((seed >> 4) & 15);
    data[4 * i + 2] = 128 + ((seed >> 8) & 31);
    data[4 * i + 3] = 255;
  }
  return `data:image/jpeg;base64,${jpeg.encode({ data, width, height }, 85).data.toString("base64")}`;
}

// Every promised script in the text, so each font's cmap and glyphs are used.
const body = JSON.stringify({
  imageUrl: photoDataUrl(),
  caseNumber: "CASE-2026-0042 Κ-1",
  annotationData: {
    leftCase: "LC-11",
    leftItem: "LI-12",
    rightCase: "Дело",
    rightItem: "№ 5",
    caseFontColor: "#FFDE21",
    classType: "Bullet",
    classNote: "nine mm Luger",
    indexType: "number",
    indexNumber: "IDX-7",
    supportLevel: "ID",
    hasSubclass: true,
    includeConfirmation: true,
    additionalNotes: "Striations agree over the marked lands. Ελληνικά, кириллица, café, Łódź, Tiếng Việt, ʃəˈtɑː, Հայերեն, ქართული. ".repeat(20),
    boxAnnotations: Array.from({ length: 20 }, (_, i) => ({ id: `b${i}`, x: (i * 4) % 90, y: (i * 7) % 90, width: 8, height: 6, color: "#ff0000" })),
  },
  activeAnnotations: ["number", "class", "index", "id", "box", "notes"],
  currentDate: "11/22/2026",
  notesUpdatedFormatted: "11/21/2026",
  userCompany: "State Crime Laboratory / Лаборатория",
});

/** CPU time (user + system, ms) of the workerd processes that are children of this one (Linux). */
function workerdCpuMs() {
  let total = 0;
  try {
    for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
      let stat;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      } catch {
        continue;
      }
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (name !== "workerd" || Number(fields[1]) !== process.pid) continue;
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 1/100 s
    }
  } catch {
    return Number.NaN;
  }
  return total;
}

async function report(mf) {
  const started = performance.now();
  const response = await mf.dispatchFetch("http://localhost/", { method: "POST", headers: { "Content-Type": "application/json" }, body });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const ms = performance.now() - started;
  if (response.status !== 200 || new TextDecoder().decode(bytes.subarray(0, 5)) !== "%PDF-") {
    throw new Error(`report failed: ${response.status} ${new TextDecoder().decode(bytes.subarray(0, 300))}`);
  }
  return { ms, bytes: bytes.length };
}

/** Copies a given bundle into the temporary folder, workerd's modules root. */
function copyScript(file) {
  const target = join(dir, "worker.js");
  writeFileSync(target, readFileSync(file));
  return target;
}

/** Wall time of the first request (GET /, answered 405 without rendering) in a new workerd. */
async function firstRequestFloor(script) {
  const mf = new Miniflare({ modules: true, scriptPath: script, modulesRoot: dir, compatibilityDate: "2026-04-01" });
  try {
    await mf.ready;
    const started = performance.now();
    const response = await mf.dispatchFetch("http://localhost/");
    await response.arrayBuffer();
    if (response.status !== 405) throw new Error(`GET / answered ${response.status}, not 405`);
    return performance.now() - started;
  } finally {
    await mf.dispose();
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const dir = mkdtempSync(join(tmpdir(), "fa-pdf-first-"));
try {
  const script = options.script === undefined ? await bundleWorker("pdf", join(dir, "worker.js"), true) : copyScript(options.script);
  console.log(`PDF worker bundle: ${(readFileSync(script).length / 1024).toFixed(1)} KiB minified; request body ${(body.length / 1024).toFixed(0)} KiB`);
  console.log(`${rounds} rounds, each a new workerd; warm median of ${warmRuns} reports after ${warmup} untimed\n`);
  console.log(`${"round".padEnd(7)}${"start-up".padStart(11)}${"first".padStart(11)}${"first CPU".padStart(12)}${"warm p50".padStart(11)}${"warm CPU".padStart(11)}${"ratio".padStart(8)}${"first GET".padStart(12)}`);
  const firsts = [];
  const cpus = [];
  const warmCpus = [];
  const warms = [];
  const floors = [];
  for (let round = 1; round <= rounds; round++) {
    const floor = await firstRequestFloor(script);
    floors.push(floor);
    const startedAt = performance.now();
    const mf = new Miniflare({ modules: true, scriptPath: script, modulesRoot: dir, compatibilityDate: "2026-04-01" });
    try {
      await mf.ready;
      const startup = performance.now() - startedAt;
      const cpuBefore = workerdCpuMs();
      const first = await report(mf);
      const cpu = workerdCpuMs() - cpuBefore;
      for (let i = 0; i < warmup; i++) await report(mf);
      const times = [];
      const warmCpuBefore = workerdCpuMs();
      for (let i = 0; i < warmRuns; i++) times.push((await report(mf)).ms);
      const warmCpu = (workerdCpuMs() - warmCpuBefore) / warmRuns;
      const warm = median(times);
      firsts.push(first.ms);
      cpus.push(cpu);
      warmCpus.push(warmCpu);
      warms.push(warm);
      const ms = (value) => `${value.toFixed(1)} ms`.padStart(11);
      console.log(`${String(round).padEnd(7)}${ms(startup)}${ms(first.ms)}${`${cpu.toFixed(0)} ms`.padStart(12)}${ms(warm)}${`${warmCpu.toFixed(0)} ms`.padStart(11)}${`${(first.ms / warm).toFixed(1)}x`.padStart(8)}${ms(floor).padStart(12)}`);
    } finally {
      await mf.dispose();
    }
  }
  const first = median(firsts);
  const warm = median(warms);
  console.log(`\nmedian first report ${first.toFixed(1)} ms wall (workerd CPU ${median(cpus).toFixed(0)} ms), warm median ${warm.toFixed(1)} ms (workerd CPU ${median(warmCpus).toFixed(0)} ms a report), ratio ${(first / warm).toFixed(1)}x; first GET (no report) ${median(floors).toFixed(1)} ms`);
  console.log(`goals: first <= 400 ms: ${first <= 400 ? "met" : "NOT met"}; first <= 4 x warm: ${first <= 4 * warm ? "met" : "NOT met"}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
