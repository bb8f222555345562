import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import type { S3Location } from "../../src/adapters/s3/s3-store.ts";
import { closedPort } from "./http-server.ts";

// s3rver's command, with read-after-write consistency added (see the file).
const S3RVER = fileURLToPath(new URL("./s3rver-consistent.cjs", import.meta.url));

/**
 * An S3-compatible server (s3rver) in its own process on 127.0.0.1 and a free port, with
 * one bucket. s3rver signs list continuation tokens with DES, which OpenSSL 3 only offers
 * through its legacy provider.
 */
export async function startS3(bucket = "forensic", timeoutMs = 15_000): Promise<{ endpoint: string; bucket: string; stop(): Promise<void> }> {
  const directory = await mkdtemp(join(tmpdir(), "fa-s3-"));
  const port = await closedPort();
  // Always Node (even when Bun or Deno hosts the tests): the flag is Node's.
  const proc = spawn("node", ["--openssl-legacy-provider", S3RVER, "-d", directory, "-a", "127.0.0.1", "-p", String(port), "--silent", "--configure-bucket", bucket], {
    stdio: "ignore",
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while ((await fetch(endpoint).catch(() => null)) === null) {
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill("SIGKILL");
      throw new Error(`s3rver did not answer on port ${port} within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    endpoint,
    bucket,
    stop: async () => {
      if (proc.exitCode === null) {
        const exited = new Promise((resolve) => proc.once("exit", resolve));
        proc.kill("SIGTERM");
        await exited;
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * s3rver for the calling test file: started before its tests and stopped after them. Returns
 * the location of `prefix` in its bucket (each case its own prefix, so cases share nothing).
 */
export function useS3(): (prefix: string) => S3Location {
  let s3: Awaited<ReturnType<typeof startS3>> | undefined;
  beforeAll(async () => {
    s3 = await startS3();
  }, 20_000);
  afterAll(async () => {
    await s3?.stop();
  });
  return (prefix) => ({
    endpoint: s3!.endpoint,
    bucket: s3!.bucket,
    region: "us-east-1",
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    prefix,
  });
}
