#!/usr/bin/env node
// How much memory `serve` holds while it receives an image upload: in a fresh server
// process (warmed up with a 1 MB upload so code is compiled), the peak resident set size
// during one upload of the big image, above its size just before, in copies of the image.
// A fresh process per run, so memory freed by an earlier upload cannot hide a copy. Each
// run is made without and with DATA_ENCRYPTION_KEYS (encryption at rest), so the copies an
// encrypted upload adds are the difference of the two medians.
// Linux only (reads /proc/<pid>/status; resets the peak with clear_refs). Figures only.
// Run: npm run build && node bench/upload-memory.mjs [--mb 20] [--runs 3]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import { noisePng } from "./noise-png.mjs";
import { track } from "./children.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const mb = arg("mb", 20);
const runs = arg("runs", 3);
const token = "bench-images-token";

const kib = (pid, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);

const KEYS = JSON.stringify({ keys: [{ kty: "oct", kid: "bench", k: randomBytes(32).toString("base64url") }] });

async function startServer(dir, encrypted) {
  const server = track(spawn(process.execPath, [join(root, "dist/src/adapters/node/cli.js"), "serve", "--port", "0", "--data", join(dir, "data")], {
    cwd: dir,
    env: { PATH: process.env.PATH, RATE_LIMITS: "off", IMAGES_API_TOKEN: token, PUBLIC_URL: "http://127.0.0.1", MAX_IMAGE_BYTES: String((mb + 5) * 1024 * 1024), ...(encrypted ? { DATA_ENCRYPTION_KEYS: KEYS } : {}) },
    stdio: ["ignore", "pipe", "inherit"],
  }));
  const url = await new Promise((resolve, reject) => {
    let out = "";
    server.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /^ready\s+(http:\/\/\S+)/m.exec(out);
      if (match) resolve(match[1]);
    });
    server.once("exit", (code) => reject(new Error(`serve exited ${code}`)));
    setTimeout(() => reject(new Error("serve not ready in 30 s")), 30_000).unref();
  });
  return { server, url };
}

async function upload(url, image) {
  const form = new FormData();
  form.set("file", new Blob([image], { type: "image/png" }), "big.png");
  const response = await fetch(`${url}/image/`, { method: "POST", body: form, headers: { Authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`upload answered ${response.status}: ${await response.text()}`);
  await response.json();
}

const big = new Uint8Array(noisePng(mb * 1024 * 1024));
const small = new Uint8Array(noisePng(1024 * 1024));
console.log(`Upload of a ${mb} MB image to serve (Node ${process.version}): peak RSS of a fresh server during the upload, above its RSS before\n`);
const medians = {};
for (const mode of ["plain", "encrypted"]) {
  const copies = [];
  for (let run = 1; run <= runs; run++) {
    const dir = mkdtempSync(join(tmpdir(), "fa-upload-"));
    const { server, url } = await startServer(dir, mode === "encrypted");
    try {
      await upload(url, small); // warm-up: code paths compiled
      await new Promise((resolve) => setTimeout(resolve, 200));
      writeFileSync(`/proc/${server.pid}/clear_refs`, "5"); // reset the peak to the current RSS
      const before = kib(server.pid, "VmRSS");
      await upload(url, big);
      const peak = kib(server.pid, "VmHWM");
      const extra = (peak - before) / 1024;
      copies.push(extra / mb);
      console.log(`${mode} run ${run}: before ${(before / 1024).toFixed(1)} MiB, peak ${(peak / 1024).toFixed(1)} MiB, extra ${extra.toFixed(1)} MiB = ${(extra / mb).toFixed(2)} copies of the image`);
    } finally {
      server.kill("SIGTERM");
      await new Promise((resolve) => server.once("exit", resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  }
  copies.sort((a, b) => a - b);
  medians[mode] = copies[Math.floor(copies.length / 2)];
}
console.log(`\nmedian: ${medians.plain.toFixed(2)} copies of the image without encryption, ${medians.encrypted.toFixed(2)} with DATA_ENCRYPTION_KEYS (${(medians.encrypted - medians.plain).toFixed(2)} more; one 64 KiB chunk is ${(0.0625 / mb).toFixed(3)} of a copy)`);
