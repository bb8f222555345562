import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
export const CLI = `${root}dist/src/adapters/node/cli.js`;

/** The runtimes `serve` runs under, and how each is started (CONTRACT "Starting it"). */
export const RUNTIMES = {
  node: [process.execPath, CLI, "serve"],
  bun: [`${root}node_modules/.bin/bun`, `${root}src/adapters/bun/cli.ts`, "serve"],
  deno: [`${root}node_modules/.bin/deno`, "run", "-A", "--unstable-kv", `${root}src/adapters/deno/cli.ts`, "serve"],
  workerd: [process.execPath, `${root}scripts/start-workerd.mjs`],
} as const;

/** A runtime's name. */
export type Runtime = keyof typeof RUNTIMES;

export interface Served {
  url: string;
  proc: ChildProcess;
  output: () => string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Starts `forensic-annotation serve --port 0` under a runtime and waits (bounded) for its ready line. */
export function spawnServe(options: {
  runtime?: Runtime;
  dataDir: string;
  env?: Record<string, string>;
  cwd?: string;
  args?: string[];
  timeoutMs?: number;
}): Promise<Served> {
  const [command, ...prefix] = RUNTIMES[options.runtime ?? "node"];
  return spawnUntilReady(command, [...prefix, "--port", "0", "--data", options.dataDir, ...(options.args ?? [])], options);
}

// A clean environment, but the machine's CA bundle and proxy settings stay so that
// runtimes fetching packages (deno task start) reach the registry as the shell does.
const PASSED_ON = ["PATH", "HOME", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "DENO_CERT", "DENO_TLS_CA_STORE", "DENO_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"];
function networkEnv(): Record<string, string> {
  return Object.fromEntries(PASSED_ON.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));
}

/** Spawns a server process and waits (bounded) until its output shows `ready` (or `readyPattern`). */
export async function spawnUntilReady(
  command: string,
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number; readyPattern?: RegExp } = {},
): Promise<Served> {
  const pattern = options.readyPattern ?? /^ready\s+(http:\/\/\S+)/m;
  // A process group of its own: a server started through npx or `deno task` runs as a grandchild,
  // which a signal to the child alone leaves running (each examples run left a Deno server behind).
  const proc = spawn(command, [...args], {
    cwd: options.cwd,
    env: { ...networkEnv(), ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: process.platform !== "win32",
  });
  const signalAll = (signal: NodeJS.Signals) => {
    try {
      process.kill(-proc.pid!, signal);
    } catch {
      // No group (Windows), or none of it left: the child alone.
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    }
  };
  let out = "";
  proc.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  proc.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    proc.once("exit", (code, signal) => resolve(code ?? signal ?? -1))
  );
  const timeoutMs = options.timeoutMs ?? 30_000;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      signalAll("SIGKILL");
      reject(new Error(`${command} did not get ready within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const check = () => {
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!.replace(/\/$/, ""));
      }
    };
    proc.stdout!.on("data", check);
    proc.stderr!.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code}) before it was ready:\n${out}`));
    });
  });
  return {
    url,
    proc,
    output: () => out,
    exited,
    stop: async (signal = "SIGTERM") => {
      if (proc.exitCode === null && proc.signalCode === null) signalAll(signal);
      const timer = setTimeout(() => signalAll("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      // Whatever of its group outlived it (a grandchild that ignored or missed the signal).
      try {
        process.kill(-proc.pid!, "SIGKILL");
      } catch {
        // none left
      }
      return code;
    },
  };
}
