#!/usr/bin/env node
// `npm run start:workerd -- --port P --data DIR`: the Cloudflare module worker that mounts
// all seven workers, bundled with esbuild and run in the real workerd through Miniflare,
// with local KV and R2 persisted under --data. Same flags and start-up lines as `serve`.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { parseServeFlags } from "../dist/src/adapters/server/command.js";
import { readEnvironment } from "../dist/src/adapters/server/environment.js";
import { ensureSecrets } from "../dist/src/adapters/server/secrets.js";
import { WORKER_MOUNTS } from "../dist/src/core/service/service.js";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Bundles a module-worker entry as wrangler would (ESM, workerd conditions). */
export async function bundleWorker(entry, outfile, minify = false) {
  await build({
    entryPoints: [join(root, "src/adapters/cloudflare/entries", `${entry}.ts`)],
    bundle: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "browser"],
    minify,
    outfile,
    logLevel: "error",
  });
  return outfile;
}

async function main(argv) {
  const flags = parseServeFlags(argv);
  if (flags === null) {
    console.log("Usage: npm run start:workerd -- [--port PORT] [--host HOST] [--data DIR] (same flags as serve)");
    return 0;
  }
  if (typeof flags === "string") {
    console.error(flags);
    return 2;
  }
  const dataDir = resolve(flags.data);
  mkdirSync(dataDir, { recursive: true });
  const env = Object.fromEntries(Object.entries(readEnvironment()).filter(([, v]) => typeof v === "string"));
  const secrets = await ensureSecrets(dataDir, env);
  const scriptPath = await bundleWorker("all", join(dataDir, ".workerd", "worker.js"));
  // Only the service's own variables go into the worker, not the whole shell environment.
  const bindings = Object.fromEntries(
    Object.entries(secrets.env).filter(([name]) => /^[A-Z][A-Z0-9_]*$/.test(name) && !/^(PATH|HOME|PWD|SHELL|USER|TERM|LANG)$|^(NODE_|npm_)/.test(name)),
  );
  let stopping;
  const stopped = new Promise((done) => {
    stopping = done;
  });
  const stop = (signal) => {
    if (stopping === undefined) return;
    const done = stopping;
    stopping = undefined;
    console.log(`${signal}: stopping workerd`);
    mf.dispose().then(done, done);
  };
  const onTerm = () => stop("SIGTERM");
  const onInt = () => stop("SIGINT");
  const mf = new Miniflare({
    modules: true,
    scriptPath,
    modulesRoot: join(dataDir, ".workerd"),
    compatibilityDate: "2026-04-01",
    kvNamespaces: ["USER_DB"],
    r2Buckets: ["STRIAE_DATA", "STRIAE_AUDIT", "STRIAE_IMAGES", "STRIAE_OUTBOX"],
    kvPersist: join(dataDir, "kv"),
    r2Persist: join(dataDir, "r2"),
    bindings,
    host: flags.host,
    port: flags.port,
  });
  // Miniflare's exit hook answers SIGTERM/SIGINT with process.exit(128 + n) before in-flight
  // requests finish; take those listeners off and stop gracefully (dispose), then exit 0.
  process.removeAllListeners("SIGTERM").removeAllListeners("SIGINT");
  process.on("SIGTERM", onTerm).on("SIGINT", onInt);
  const ready = await mf.ready;
  const url = ready.origin;
  for (const name of secrets.generated) console.log(`generated ${name}=${secrets.env[name]} (kept in ${dataDir}/secrets.json; shown once)`);
  for (const [name, mount] of Object.entries(WORKER_MOUNTS)) console.log(`${name.padEnd(8)} ${url}${mount}`);
  console.log(`ready    ${url} (data in ${dataDir}, workerd)`);
  await stopped;
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (err) => {
    console.error(err?.stack ?? String(err));
    process.exit(1);
  });
}
