#!/usr/bin/env node
// Runs independent commands side by side (`npm test`'s Bun and Deno suites, check:package's
// steps), at most --jobs at a time (default: the machine's cores). Each command's output is
// printed whole when it ends, so logs never interleave; the exit code is 1 when any failed,
// and every command runs to its end either way (one failure does not hide another).
//
//   node scripts/side-by-side.mjs [--jobs N] "command 1" "command 2" ...
import { spawn } from "node:child_process";
import os from "node:os";
import { parseArgs } from "node:util";

const { values, positionals: commands } = parseArgs({ options: { jobs: { type: "string" } }, allowPositionals: true });
const jobs = Math.max(1, Number(values.jobs ?? os.availableParallelism?.() ?? os.cpus().length) || 1);
if (commands.length === 0) {
  console.error('usage: node scripts/side-by-side.mjs [--jobs N] "command" ...');
  process.exit(2);
}

const children = new Set();
// Ctrl-C or CI's stop ends every command started here, not only the one in the foreground.
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(1);
  });
}

/** Runs one command through the shell; resolves with its exit code, its output and its time. */
function run(command) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    const chunks = [];
    child.stdout.on("data", (chunk) => chunks.push(chunk));
    child.stderr.on("data", (chunk) => chunks.push(chunk));
    const done = (code) => {
      children.delete(child);
      resolve({ command, code, output: Buffer.concat(chunks).toString("utf8"), seconds: (performance.now() - started) / 1000 });
    };
    child.once("error", (err) => {
      chunks.push(Buffer.from(`${err.message}\n`));
      done(127);
    });
    child.once("close", (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

const results = [];
let next = 0;
async function worker() {
  while (next < commands.length) {
    const command = commands[next++];
    const result = await run(command);
    results.push(result);
    process.stdout.write(`\n=== ${command} (exit ${result.code}, ${result.seconds.toFixed(1)} s)\n${result.output}`);
  }
}
await Promise.all(Array.from({ length: Math.min(jobs, commands.length) }, worker));
const failed = results.filter((r) => r.code !== 0);
console.log(`\nside-by-side: ${results.length - failed.length} of ${results.length} passed (${jobs} at a time)`);
for (const { command, code } of failed) console.log(`  FAILED (exit ${code}): ${command}`);
process.exit(failed.length === 0 ? 0 : 1);
