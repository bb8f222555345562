#!/usr/bin/env node
// Prints the time from spawning `serve` to its first 200 on /health under each runtime
// (median of N runs, default 5). Figures only.  Run: node bench/startup.mjs [--runs N]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { track } from "./children.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const runs = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 5;
const commands = {
  node: [process.execPath, join(root, "dist/src/adapters/node/cli.js"), "serve"],
  bun: [join(root, "node_modules/.bin/bun"), join(root, "src/adapters/bun/cli.ts"), "serve"],
  deno: [join(root, "node_modules/.bin/deno"), "run", "-A", "--unstable-kv", join(root, "src/adapters/deno/cli.ts"), "serve"],
  workerd: [process.execPath, join(root, "scripts/start-workerd.mjs")],
};

async function once(runtime) {
  const dir = mkdtempSync(join(tmpdir(), `fa-start-${runtime}-`));
  const [command, ...args] = commands[runtime];
  const started = performance.now();
  const proc = track(spawn(command, [...args, "--port", "0", "--data", dir], { stdio: ["ignore", "pipe", "inherit"] }));
  try {
    let out = "";
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${runtime} not ready in 60 s`)), 60_000);
      proc.stdout.on("data", (chunk) => {
        out += chunk;
        const match = /^ready\s+(http:\/\/\S+)/m.exec(out);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      proc.once("exit", (code) => reject(new Error(`${runtime} exited ${code}`)));
    });
    for (;;) {
      const response = await fetch(`${url}/health`).catch(() => null);
      if (response?.status === 200) break;
    }
    return performance.now() - started;
  } finally {
    proc.kill("SIGTERM");
    await new Promise((resolve) => proc.once("exit", resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`Time from spawn to the first 200 on /health (median of ${runs}; the first start of each runtime also warms caches)\n`);
for (const runtime of Object.keys(commands)) {
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await once(runtime));
  times.sort((a, b) => a - b);
  console.log(`${runtime.padEnd(8)} median ${times[Math.floor(times.length / 2)].toFixed(0).padStart(6)} ms   min ${times[0].toFixed(0).padStart(6)} ms   max ${times.at(-1).toFixed(0).padStart(6)} ms`);
}
