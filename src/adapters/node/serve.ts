/**
 * @module
 * `serve` on Node: the whole service on one port over the embedded default (files under
 * the data directory), with graceful shutdown.
 */
import type { AddressInfo } from "node:net";
import { serve as serveHono, type HttpBindings } from "@hono/node-server";
import { parseConfig } from "../../core/config.ts";
import { createService, WORKER_MOUNTS } from "../../core/service.ts";
import { createFilePorts } from "./file-ports.ts";
import { ensureSecrets } from "./secrets.ts";

/** Options of {@link startServer}. */
export interface ServeOptions {
  /** 0 picks a free port. */
  port: number;
  host: string;
  dataDir: string;
  /** Environment variables (already merged with `.env`). */
  env: Readonly<Record<string, string | undefined>>;
  /** Where the start-up lines go; default `console.log`. */
  log?: (line: string) => void;
}

/** A running server. */
export interface RunningServer {
  /** `http://host:port` */
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
}

/** Starts the service and prints one line per worker with its base URL. */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? ((line: string) => console.log(line));
  const defined = Object.fromEntries(
    Object.entries(options.env).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
  const secrets = await ensureSecrets(options.dataDir, defined);
  const config = parseConfig(secrets.env);
  const app = createService(createFilePorts(options.dataDir), config);

  const server = await new Promise<ReturnType<typeof serveHono>>((resolve, reject) => {
    const started = serveHono(
      {
        fetch: (request, env) =>
          app.fetch(request, { clientIp: (env as HttpBindings).incoming.socket.remoteAddress }),
        port: options.port,
        hostname: options.host,
      },
      () => resolve(started),
    );
    started.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `http://${shownHost}:${port}`;

  for (const name of secrets.generated) {
    log(`generated ${name}=${secrets.env[name]} (kept in ${options.dataDir}/secrets.json; shown once)`);
  }
  for (const [name, mount] of Object.entries(WORKER_MOUNTS)) log(`${name.padEnd(8)} ${url}${mount}`);
  log(`ready    ${url} (data in ${options.dataDir})`);

  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Keep-alive sockets would hold close() open: close each one as soon as its
        // in-flight request is answered.
        const sweep = setInterval(() => "closeIdleConnections" in server && server.closeIdleConnections(), 50);
        server.close((err) => {
          clearInterval(sweep);
          if (err) reject(err);
          else resolve();
        });
        if ("closeIdleConnections" in server) server.closeIdleConnections();
      }),
  };
}
