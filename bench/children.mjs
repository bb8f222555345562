// Servers a bench started, stopped when the bench ends however it ends: an error, Ctrl-C, or
// its output cut off (`| head`), which left a `serve` running on the data folder before.
// Importing this makes Ctrl-C, SIGTERM and SIGHUP end the bench through its exit handlers
// (a signal's default ends the process without them), so a bench's own cleanup runs too.
import { spawn } from "node:child_process";
import os from "node:os";

const children = new Set();
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => process.exit(128 + os.constants.signals[signal]));

/** Keeps `child` to be killed (SIGKILL) when this process exits before stopping it; answers `child`. */
export function track(child) {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/**
 * Spawns a server (tracked) and answers `{ child, ready, log }`: `ready` resolves with the URLs of
 * its `ready URL [URL] [URL]` line, or rejects when it cannot start, exits first or is not ready in 120 s.
 */
export function startServer(name, argv, { cwd, env }) {
  const child = track(spawn(argv[0], argv.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] }));
  let log = "";
  const keep = (chunk) => (log = (log + chunk).slice(-8192));
  child.stderr.on("data", keep);
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready in 120 s\n${log}`)), 120_000);
    const lookForReady = (chunk) => {
      keep(chunk);
      const match = /^ready((?:\s+http:\/\/\S+)+)/m.exec(log);
      if (match) {
        clearTimeout(timer);
        // From now on the server's log is only kept: the bench's own process runs beside the measured ones.
        child.stdout.off("data", lookForReady).on("data", keep);
        resolve(match[1].trim().split(/\s+/).map((url) => url.replace(/\/$/, "")));
      }
    };
    child.stdout.on("data", lookForReady);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready\n${log}`));
    });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  return { child, ready, log: () => log };
}

/** Stops `child` with SIGTERM, SIGKILL after 5 s; resolves once it has exited. */
export async function stopServer(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}
