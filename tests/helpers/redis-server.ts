import { afterAll, beforeAll } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { closedPort } from "./http-server.ts";
import { requireTool } from "./system-tools.ts";

/** A real redis-server on 127.0.0.1 and a free port, without persistence. */
export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts redis-server (Debian package, installed by `npm run provision`) on `port` (default a free one) and waits for PING, bounded. */
export async function startRedis(timeoutMs = 10_000, port?: number): Promise<RedisServer> {
  requireTool("redis-server", "redis-server");
  port ??= await closedPort();
  const proc: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const url = `redis://127.0.0.1:${port}/0`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    client.on("error", () => undefined); // refused until the server is up
    try {
      await client.connect();
      if ((await client.ping()) === "PONG") {
        client.disconnect();
        break;
      }
    } catch {
      client.disconnect();
    }
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill("SIGKILL");
      throw new Error(`redis-server did not answer on port ${port} within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once("exit", () => resolve());
        proc.kill("SIGTERM");
      }),
  };
}

/**
 * A redis-server for the calling test file (started before its tests, stopped after), and
 * clients on it, each its own connection as separate server processes would have; `prefix`
 * gives every caller fresh keys.
 */
export function redisForSuite(): { client(): Redis; prefix(name: string): string } {
  let server: RedisServer | undefined;
  const clients: Redis[] = [];
  let n = 0;
  beforeAll(async () => {
    server = await startRedis();
  }, 20_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
    await server?.stop();
  });
  return {
    client: () => {
      const c = new Redis(server!.url);
      clients.push(c);
      return c;
    },
    prefix: (name) => `${name}${n++}:`,
  };
}
