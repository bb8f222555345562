#!/usr/bin/env node
// Prints the size of each Cloudflare module worker bundle (minified, and gzipped), built
// as wrangler would build it. Figures only.  Run: node bench/bundles.mjs
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { gzipSync } from "node:zlib";
import { bundleWorker } from "../scripts/start-workerd.mjs";

const kinds = ["all", "data", "audit", "keys", "captcha", "image", "user", "pdf", "exchange", "review"];
const dir = mkdtempSync(join(tmpdir(), "fa-bundles-"));
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
try {
  console.log("Cloudflare worker bundles (esbuild, ESM, minified)\n");
  console.log(`${"worker".padEnd(10)}${"minified".padStart(14)}${"gzipped".padStart(14)}`);
  for (const kind of kinds) {
    const file = await bundleWorker(kind, join(dir, `${kind}.js`), true);
    const code = readFileSync(file);
    console.log(`${kind.padEnd(10)}${kib(code.length).padStart(14)}${kib(gzipSync(code, { level: 9 }).length).padStart(14)}`);
  }
  console.log("\nCloudflare's limits: 3 MiB gzipped (Free), 10 MiB (Paid).");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
