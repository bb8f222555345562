#!/usr/bin/env node
// `npm run start:workerd -- --port P --data DIR`: the Cloudflare module worker that mounts
// all seven workers, bundled with esbuild and run in the real workerd through Miniflare,
// with local KV and R2 persisted under --data. Same flags and start-up lines as `serve`.
// Node's HTTP server stands in front of workerd as Cloudflare's edge does in front of a
// deployed worker: it parses HTTP (a malformed request is its 400, not workerd's 500), sets
// CF-Connecting-IP to the socket peer, and stops gracefully on SIGTERM/SIGINT.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { nodeListen } from "../dist/src/adapters/node/serve.js";
import { createFileBlobStore } from "../dist/src/adapters/server/files/file-ports.js";
import { listenProblem, parseServeFlags } from "../dist/src/adapters/server/command.js";
import { readEnvironment } from "../dist/src/adapters/server/environment.js";
import { ensureSecrets, generatedLine } from "../dist/src/adapters/server/secrets.js";
import { probeAddress } from "../dist/src/adapters/server/address-probe.js";
import { ListenError, serviceLines } from "../dist/src/adapters/server/start.js";
import { errorAnswer } from "../dist/src/core/http/errors.js";
import { parseConfig } from "../dist/src/core/config/mod.js";
import { hostInUrl } from "../dist/src/adapters/server/request-url.js";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * The Miniflare options of the whole-service worker bundled at `scriptPath` (under
 * `dataDir/.workerd`), on the bindings a deployment gives it, with `bindings` as its variables.
 */
export function serviceWorkerOptions(scriptPath, dataDir, bindings) {
  return {
    modules: true,
    scriptPath,
    modulesRoot: join(dataDir, ".workerd"),
    compatibilityDate: "2026-04-01",
    kvNamespaces: ["USER_DB"],
    r2Buckets: ["STRIAE_DATA", "STRIAE_AUDIT", "STRIAE_IMAGES", "STRIAE_OUTBOX"],
    bindings,
  };
}

/**
 * Miniflare's `handleRuntimeStdio`: workerd's standard output and error passed on as they come,
 * in the chunks workerd wrote. Miniflare's default splits them into lines and writes each with a
 * `console.log` of its own, on the core workerd runs on: about 30 us more CPU per request log line
 * under load (docs/performance.md, 2026-12-03).
 */
export function passRuntimeOutput(stdout, stderr) {
  stdout.pipe(process.stdout, { end: false });
  stderr.pipe(process.stderr, { end: false });
}

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

/** How long a stop waits for requests in flight before it disposes workerd anyway. */
const STOP_WAIT_MS = 30_000;
/** How long an answer waits for the rest of its request body to reach workerd (Node's own settle bound). */
const UPLOAD_WAIT_MS = 3000;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
// Miniflare's own header (how it compressed the answer for dispatchFetch): not the worker's, so not the client's.
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "mf-content-encoding"]);
/** The methods routes of the service take. */
const SERVED_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]);
// Another method goes to workerd as PATCH, which fetch sends (not TRACE), workerd knows (not
// M-SEARCH) and no route takes either: the worker's own 404 or 405 answers it, as on `serve`.
const STAND_IN = "PATCH";

/** The worker's answer to the stand-in, its message naming the method the client sent. */
async function answerOf(method, answer) {
  if (!(answer.headers.get("content-type") ?? "").includes("json")) return answer;
  const body = await answer.json();
  if (typeof body?.message === "string") body.message = body.message.replace(`${STAND_IN} `, `${method} `);
  const headers = new Headers(answer.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify(body), { status: answer.status, statusText: answer.statusText, headers });
}

/**
 * Moves each `.eml` object of the outbox bucket into `--data/outbox/` (the file store's
 * atomic write, then the object's delete), one run at a time, so the files are where
 * `serve` puts them before the answer that wrote them reaches the client; an object left
 * by a crash between the two steps is moved on the next run.
 */
function outboxMirror(mf, dataDir) {
  const files = createFileBlobStore(join(dataDir, "outbox"), { sync: true });
  let running = Promise.resolve();
  const move = async () => {
    const bucket = await mf.getR2Bucket("STRIAE_OUTBOX");
    let cursor;
    do {
      const listed = await bucket.list({ cursor });
      for (const { key } of listed.objects) {
        const object = await bucket.get(key);
        if (object === null) continue;
        await files.put(key, new Uint8Array(await object.arrayBuffer()));
        await bucket.delete(key);
      }
      cursor = listed.truncated ? listed.cursor : undefined;
    } while (cursor !== undefined);
  };
  return () => {
    running = running.then(move, move);
    return running;
  };
}

/** Resolves after `ms` or when `promise` settles, whichever is first. */
function within(promise, ms) {
  let timer;
  return Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}

/**
 * The app Node's server runs: each request forwarded to workerd with CF-Connecting-IP set
 * from the socket peer (a client's own header is replaced, as on Cloudflare).
 */
function forwardTo(mf, mirror) {
  return {
    async fetch(request, { clientIp }) {
      const headers = new Headers(request.headers);
      headers.delete("cf-connecting-ip");
      if (clientIp !== undefined) headers.set("CF-Connecting-IP", clientIp);
      let uploaded;
      let started = false;
      const sent = new Promise((resolve) => (uploaded = resolve));
      const body = request.body === null ? undefined : request.body.pipeThrough(new TransformStream({
        transform: (chunk, controller) => (started = true, controller.enqueue(chunk)),
        flush: () => uploaded(),
      }));
      let answer;
      try {
        const method = SERVED_METHODS.has(request.method) ? request.method : STAND_IN;
        answer = await mf.dispatchFetch(request.url, { method, headers, body, duplex: "half", redirect: "manual" });
        if (method !== request.method) answer = await answerOf(request.method, answer);
      } catch (err) {
        // fetch sends nothing to workerd before the body's first byte, and workerd drops that connection after 15 s: the client's stall.
        if (body !== undefined && !started) return errorAnswer(408, "The request body did not arrive in time");
        throw err;
      }
      // Miniflare's answer body is read from now on, while the waits below run: left unread
      // behind a slow outbox move, some answers reached the client empty (200, 0 bytes).
      const answerBody = answer.body === null ? null : answer.body.pipeThrough(new TransformStream());
      // The worker reads a refused body to the end; waiting for it keeps the client's connection alive.
      if (body !== undefined) await within(sent, UPLOAD_WAIT_MS);
      // A failed move leaves the mail in the bucket for the next run; the answer stands.
      if (!SAFE_METHODS.has(request.method)) await mirror().catch((err) => console.error(`outbox: ${err?.message ?? String(err)}`));
      // Miniflare's Headers come from its own undici: copied entry by entry; framing is Node's own.
      const answered = new Headers();
      for (const [name, value] of answer.headers) if (!HOP_BY_HOP.has(name)) answered.append(name, value);
      return new Response(answerBody, { status: answer.status, statusText: answer.statusText, headers: answered });
    },
  };
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
  // As serve: a port another server holds stops the start before anything is written under --data.
  try {
    await probeAddress(flags.host, flags.port);
  } catch (err) {
    console.error(listenProblem(new ListenError(flags.host, flags.port, err)));
    return 1;
  }
  mkdirSync(dataDir, { recursive: true });
  const env = Object.fromEntries(Object.entries(readEnvironment()).filter(([, v]) => typeof v === "string"));
  const secrets = await ensureSecrets(dataDir, env);
  const scriptPath = await bundleWorker("all", join(dataDir, ".workerd", "worker.js"));
  // Only the service's own variables go into the worker, not the whole shell environment.
  const bindings = Object.fromEntries(
    Object.entries(secrets.env).filter(([name]) => /^[A-Z][A-Z0-9_]*$/.test(name) && !/^(PATH|HOME|PWD|SHELL|USER|TERM|LANG)$|^(NODE_|npm_)/.test(name)),
  );
  const mf = new Miniflare({
    ...serviceWorkerOptions(scriptPath, dataDir, bindings),
    kvPersist: join(dataDir, "kv"),
    r2Persist: join(dataDir, "r2"),
    // Only Node's server in front is reachable; workerd listens on loopback.
    host: "127.0.0.1",
    port: 0,
    handleRuntimeStdio: passRuntimeOutput,
  });
  // Miniflare's exit hook answers SIGTERM/SIGINT with process.exit(128 + n) before in-flight
  // requests finish; take those listeners off and stop gracefully instead.
  process.removeAllListeners("SIGTERM").removeAllListeners("SIGINT");
  let stopping;
  const stopped = new Promise((done) => {
    stopping = done;
  });
  let listening;
  const mirror = outboxMirror(mf, dataDir);
  const stop = (signal) => {
    if (stopping === undefined) return;
    const done = stopping;
    stopping = undefined;
    console.log(`${signal}: stopping workerd`);
    // Stop accepting, let requests in flight finish (bounded), then dispose workerd.
    within(listening?.close() ?? Promise.resolve(), STOP_WAIT_MS)
      .then(() => mirror())
      .catch((err) => console.error(err?.stack ?? String(err)))
      .then(() => mf.dispose())
      .then(done, done);
  };
  process.on("SIGTERM", () => stop("SIGTERM")).on("SIGINT", () => stop("SIGINT"));
  await mf.ready;
  await mirror();
  // Node's server in front bounds connections as serve does (MAX_CONNECTIONS, MAX_CONNECTIONS_PER_CLIENT, HEADERS_TIMEOUT_SECONDS).
  const { maxConnections, maxConnectionsPerClient, headersTimeoutSeconds } = parseConfig(secrets.env);
  listening = await nodeListen(forwardTo(mf, mirror), { port: flags.port, hostname: flags.host }, { maxConnections, maxConnectionsPerClient, headersTimeoutSeconds });
  const url = `http://${hostInUrl(flags.host)}:${listening.port}`;
  for (const name of secrets.generated) console.log(generatedLine(name, secrets.env, dataDir, url));
  for (const line of serviceLines(url, secrets.env.API_DOCS !== "off")) console.log(line);
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
