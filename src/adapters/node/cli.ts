#!/usr/bin/env node
/**
 * @module
 * The `forensic-annotation` command (CONTRACT "Starting it").
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs, parseEnv } from "node:util";
import { ConfigError } from "../../core/config.ts";
import { startServer } from "./serve.ts";

const USAGE = `Usage: forensic-annotation serve [options]

Runs the seven workers of the forensic annotation service on one port.
With no other configuration every store is files under --data, mail goes to
DATA/outbox/, images are hosted by the image worker itself.

Options:
  --port PORT   port to listen on (default 8787; 0 picks a free one)
  --host HOST   address to bind (default 127.0.0.1)
  --data DIR    data directory (default ./.forensic-data)
  --help        show this help

Configuration comes from environment variables and a .env file in the working
directory (the environment wins); see README.md.
`;

const SHUTDOWN_GRACE_MS = 30_000;

/** The environment: `.env` of the working directory under `process.env`. */
function readEnvironment(): Record<string, string | undefined> {
  const file = resolve(".env");
  const fromFile = existsSync(file) ? parseEnv(readFileSync(file, "utf8")) : {};
  return { ...fromFile, ...process.env };
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: "string", default: "8787" },
        host: { type: "string", default: "127.0.0.1" },
        data: { type: "string", default: "./.forensic-data" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[0] ?? "serve";
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (command !== "serve" || positionals.length > 1) {
    console.error(`Unknown command: ${positionals.join(" ")}\n\n${USAGE}`);
    return 2;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be an integer from 0 to 65535, got "${values.port}"`);
    return 2;
  }

  let server;
  try {
    server = await startServer({ port, host: values.host, dataDir: resolve(values.data), env: readEnvironment() });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  }

  await new Promise<void>((resolveStop) => {
    const stop = (signal: string) => {
      console.log(`${signal}: finishing in-flight requests`);
      const force = setTimeout(() => {
        console.error("in-flight requests did not finish in time; exiting");
        process.exit(1);
      }, SHUTDOWN_GRACE_MS);
      force.unref();
      server.close().then(resolveStop, resolveStop);
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
