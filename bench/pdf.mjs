#!/usr/bin/env node
// Render time (p50, p95) and peak memory of the PDF report (renderReport of the built
// package, no HTTP in front) for: a 12 MP JPEG with 50 boxes and all layers, fetched from a
// local image host and sent as a data: URL; a 4 MP PNG, opaque RGB (embedded as is) and RGBA
// (split into colour and soft mask with the runtime's zlib); 5 pages of notes. Target for the
// first: p50 <= 50 ms on Node on 2 cores. Figures only: it fails only when a render fails. Peak memory is the
// process's RSS high-water (VmHWM, reset per case with /proc/self/clear_refs on Linux;
// elsewhere the largest RSS sampled after each render). Images are made here with pure-JS
// encoders (jpeg-js, fast-png), once per run; the image host is a node:http server in this
// process, so serving the file is inside the measured time.
//   npm run build && node bench/pdf.mjs [--runs 30] [--warmup 5] [--dist DIR]
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import jpeg from "jpeg-js";
import { encode as encodePng } from "fast-png";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values: options } = parseArgs({
  options: {
    runs: { type: "string", default: "30" },
    warmup: { type: "string", default: "5" },
    dist: { type: "string", default: join(root, "dist") },
  },
});
const runs = Number(options.runs);
const warmup = Number(options.warmup);
const reportModule = join(resolve(options.dist), "src/core/pdf/report.js");
if (!existsSync(reportModule)) {
  console.error(`${reportModule} not found. Build first:  npm run build   then  node bench/pdf.mjs`);
  process.exit(1);
}
const { renderReport } = await import(pathToFileURL(reportModule).href);
const { PDFDocument } = await import("pdf-lib");

// ---------------------------------------------------------------- images

/** RGB(A) pixels of a photo-like pattern: gradients plus noise, so the image compresses like a photo. */
function pixels(width, height, channels) {
  const data = new Uint8Array(width * height * channels);
  let seed = 12345;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const noise = (seed >>> 24) % 24;
      const i = (y * width + x) * channels;
      data[i] = ((x * 255) / width + noise) & 255;
      data[i + 1] = ((y * 255) / height + noise) & 255;
      data[i + 2] = (((x + y) * 128) / (width + height) + 64 + noise) & 255;
      if (channels === 4) data[i + 3] = 255;
    }
  }
  return data;
}

const started = performance.now();
const jpegBytes = new Uint8Array(jpeg.encode({ data: pixels(4000, 3000, 4), width: 4000, height: 3000 }, 85).data);
const pngBytes = encodePng({ width: 2310, height: 1732, data: pixels(2310, 1732, 3), channels: 3, depth: 8 });
const pngAlphaBytes = encodePng({ width: 2310, height: 1732, data: pixels(2310, 1732, 4), channels: 4, depth: 8 });
const pngNoise = encodePng({ width: 64, height: 48, data: pixels(64, 48, 3), channels: 3, depth: 8 });
const dataUrl = (bytes, type) => `data:${type};base64,${Buffer.from(bytes).toString("base64")}`;
console.log(
  `images made in ${((performance.now() - started) / 1000).toFixed(1)} s: ` +
    `JPEG 4000x3000 ${(jpegBytes.length / 1e6).toFixed(1)} MB, PNG 2310x1732 RGB ${(pngBytes.length / 1e6).toFixed(1)} MB, ` +
    `RGBA ${(pngAlphaBytes.length / 1e6).toFixed(1)} MB\n`,
);

const host = http.createServer((req, res) => {
  if (req.url !== "/photo.jpg") return res.writeHead(404).end();
  res.writeHead(200, { "Content-Type": "image/jpeg", "Content-Length": String(jpegBytes.length) }).end(jpegBytes);
});
await new Promise((done) => host.listen(0, "127.0.0.1", done));
const hostName = `127.0.0.1:${host.address().port}`;

// ---------------------------------------------------------------- cases

const boxes = Array.from({ length: 50 }, (_, i) => ({
  id: `box-${i}`,
  x: (i % 10) * 9 + 1,
  y: Math.floor(i / 10) * 18 + 2,
  width: 7,
  height: 14,
  color: ["#ff0000", "#00ff00", "#0000ff", "orange", "#fc0"][i % 5],
}));
const allLayers = ["number", "class", "index", "id", "box", "notes"];
const annotations = {
  leftCase: "C-2026-001",
  leftItem: "1",
  rightCase: "C-2026-002",
  rightItem: "14",
  caseFontColor: "#FFDE21",
  classType: "Bullet",
  classNote: "9 mm Luger",
  indexType: "color",
  indexColor: "#1e90ff",
  supportLevel: "ID",
  hasSubclass: true,
  includeConfirmation: true,
  additionalNotes: "Land and groove impressions agree in number, width and twist. Striations correspond in the marked areas.",
};
const request = (imageUrl, extra = {}) => ({
  imageUrl,
  caseNumber: "C-2026-001",
  annotationData: { ...annotations, ...extra },
  activeAnnotations: allLayers,
  currentDate: "11/22/2026",
  notesUpdatedFormatted: "11/21/2026",
  userCompany: "State Crime Laboratory",
});
// 20,000 characters (the schema's cap) of 90-character lines: five pages.
const noteLine = "Striation 0000: consistent agreement in the marked area of the land engraved area; ok. ";
const longNotes = Array.from({ length: Math.floor(20_000 / (noteLine.length + 1)) }, (_, i) =>
  noteLine.replace("0000", String(i).padStart(4, "0")).trimEnd()).join("\n");

const cases = [
  { name: "12 MP JPEG, 50 boxes, all layers, from a host", input: request(`http://${hostName}/photo.jpg`, { boxAnnotations: boxes }) },
  { name: "12 MP JPEG, 50 boxes, all layers, data: URL", input: request(dataUrl(jpegBytes, "image/jpeg"), { boxAnnotations: boxes }) },
  { name: "4 MP PNG (RGB), all layers", input: request(dataUrl(pngBytes, "image/png"), { boxAnnotations: boxes.slice(0, 5) }) },
  { name: "4 MP PNG (RGBA), all layers", input: request(dataUrl(pngAlphaBytes, "image/png"), { boxAnnotations: boxes.slice(0, 5) }) },
  { name: "5 pages of notes (small PNG)", input: request(dataUrl(pngNoise, "image/png"), { additionalNotes: longNotes }) },
];
const renderOptions = { imageHosts: [hostName], timeoutMs: 10_000, maxImageBytes: 64 * 1024 * 1024, serviceName: "Forensic Annotation Service" };

// ---------------------------------------------------------------- measure

const linux = existsSync("/proc/self/status");
const statusKib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? NaN);
function resetPeak() {
  if (!linux) return false;
  try {
    writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch {
    return false;
  }
}
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const pageCount = async (pdf) => (await PDFDocument.load(pdf)).getPageCount();

console.log(`Node ${process.version}, ${runs} runs after ${warmup} warm-up per case\n`);
console.log(`${"case".padEnd(48)}${"p50".padStart(10)}${"p95".padStart(10)}${"peak RSS".padStart(12)}${"above start".padStart(13)}${"PDF".padStart(10)}${"pages".padStart(7)}`);
for (const { name, input } of cases) {
  for (let i = 0; i < warmup; i++) await renderReport(input, renderOptions);
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  const hwm = resetPeak();
  let sampledPeak = before;
  const times = [];
  let pdf;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    pdf = await renderReport(input, renderOptions);
    times.push(performance.now() - t0);
    sampledPeak = Math.max(sampledPeak, process.memoryUsage().rss);
  }
  const peak = hwm ? statusKib("VmHWM") * 1024 : sampledPeak;
  times.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(48)}${`${percentile(times, 50).toFixed(1)} ms`.padStart(10)}${`${percentile(times, 95).toFixed(1)} ms`.padStart(10)}` +
      `${mib(peak).padStart(12)}${`+${mib(peak - before)}`.padStart(13)}${`${(pdf.length / 1e6).toFixed(2)} MB`.padStart(10)}${String(await pageCount(pdf)).padStart(7)}`,
  );
}
console.log(
  `\nPeak RSS: ${linux && resetPeak() ? "VmHWM since the case started (clear_refs)" : "largest RSS sampled after a render"}; ` +
    "above start: over the RSS when the case's measured runs began (the bench itself holds every test image).",
);
host.close();
