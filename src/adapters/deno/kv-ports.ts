/**
 * @module
 * The ports on Deno KV (STORAGE=deno-kv): a database file (STORAGE_URL, default
 * `DATA/kv.sqlite3`) locally, or the platform's KV on Deno Deploy (`STORAGE_URL=deploy`).
 */
import { systemClock } from "../../core/ports.ts";
import type { ServicePorts } from "../../core/service/service.ts";
import type { RuntimeStorage, StoragePorts } from "../server/start.ts";
import type { ServiceConfig } from "../../core/config/mod.ts";
import { createDenoKvBlobStore, createDenoKvStore, type DenoKvLike } from "./kv-blob-store.ts";

interface DenoKvApi {
  openKv(path?: string): Promise<DenoKvLike & { close(): void }>;
}

/** The service's ports on one Deno KV database. */
export function denoKvPorts(kv: DenoKvLike): ServicePorts {
  return {
    data: createDenoKvBlobStore(kv, "data"),
    audit: createDenoKvBlobStore(kv, "audit"),
    images: createDenoKvBlobStore(kv, "images"),
    outbox: createDenoKvBlobStore(kv, "outbox"),
    users: createDenoKvStore(kv, "users"),
    clock: systemClock,
  };
}

/** `STORAGE=deno-kv` for the serve command under Deno (needs `--unstable-kv`). */
export const denoKvStorage: RuntimeStorage = async (config: ServiceConfig, dataDir: string): Promise<StoragePorts | undefined> => {
  if (config.storage !== "deno-kv") return undefined;
  const deno = (globalThis as { Deno?: DenoKvApi }).Deno;
  if (!deno?.openKv) throw new Error("STORAGE=deno-kv needs Deno with --unstable-kv");
  const path = config.storageUrl === "deploy" ? undefined : (config.storageUrl ?? `${dataDir}/kv.sqlite3`);
  const kv = await deno.openKv(path);
  return {
    ports: denoKvPorts(kv),
    description: `storage: deno-kv ${path ?? "(Deno Deploy)"} (appends lossless across processes)`,
    close: () => Promise.resolve(kv.close()),
  };
};
