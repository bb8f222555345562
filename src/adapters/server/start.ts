/**
 * @module
 * What `serve` does on every runtime that runs `node:fs` (Node, Bun, Deno): fill in the
 * generated secrets, parse the configuration, build the service over the file stores,
 * listen with the runtime's own server and print one line per worker.
 */
import { parseConfig } from "../../core/config/mod.ts";
import { createService, type OperatorPorts, WORKER_MOUNTS } from "../../core/service/service.ts";
import { NotReady } from "../../core/service/readiness.ts";
import type { WorkerApp } from "../../core/http/worker-app.ts";
import { join } from "node:path";
import process from "node:process";
import { type Stats, statSync } from "node:fs";
import { createFileBlobStore, createFilePorts } from "./files/file-ports.ts";
import { holdsDataFolder, LOCK_FILE, lockDataFolder } from "./files/folder-lock.ts";
import { codeOf } from "./files/file-driver.ts";
import { removeLeftoverTemporaries } from "./files/leftover-temporaries.ts";
import { hostInUrl } from "./request-url.ts";
import { ensureSecrets, generatedLine, storedSecrets } from "./secrets.ts";
import { signEarlierTrails } from "./earlier-trails.ts";
import { probeAddress } from "./address-probe.ts";
import { createRedisPorts } from "./redis/redis-ports.ts";
import { createS3Ports, s3LocationFromUrl } from "../s3/s3-ports.ts";
import { createMemoryPorts } from "../../core/service/memory-ports.ts";
import { ConfigError, type ServiceConfig } from "../../core/config/mod.ts";
import type { ServicePorts } from "../../core/service/service.ts";
import type { Mailer } from "../../core/ports.ts";
import { checkCanaries, encryptPorts, keyringOf } from "../../core/service/encrypted-ports.ts";
import { CanaryError, type Keyring } from "../../core/encryption/mod.ts";
import { serverCipherSuite } from "./node-cipher.ts";
import { nodeSha256, nodeSha256BytesHex, nodeSha256Hex } from "./node-sha256.ts";
import { checkAuditKeys } from "../../core/audit/signing-keys.ts";

/** nodemailer is loaded only when SMTP is configured. */
async function smtpMailer(config: ServiceConfig): Promise<Mailer> {
  const { createSmtpMailer } = await import("./smtp-mailer.ts");
  return createSmtpMailer({ url: config.smtpUrl ?? "", timeoutMs: config.mailTimeoutMs });
}

/** The stores `STORAGE` names, how far appends stay lossless, and how to release them. */
export interface StoragePorts {
  /** The stores and services behind the workers. */
  ports: ServicePorts;
  /** Shown at start, e.g. `storage: redis (appends lossless across processes)`. */
  description: string;
  /** Releases the backend (closes a Redis or Deno KV connection). */
  close(): Promise<void>;
  /** The stores as they hold objects (sealed under encryption at rest), when `ports` are opened over them. */
  raw?: ServicePorts;
  /** `DATA_ENCRYPTION_KEYS`' keyring, when the stores are encrypted at rest. */
  keyring?: Keyring;
}

/** Stores only one runtime offers (Deno KV under Deno); undefined when it has none for `STORAGE`. */
export type RuntimeStorage = (config: ServiceConfig, dataDir: string) => Promise<StoragePorts | undefined>;

/**
 * Builds the stores `STORAGE` names, encrypted at rest when `DATA_ENCRYPTION_KEYS` is set.
 * Each store's canary is checked first: a missing or wrong key is a `ConfigError` naming the
 * store and the reason, so `serve` and the commands stop before answering anything.
 */
export async function storagePorts(config: ServiceConfig, dataDir: string, runtimeStorage?: RuntimeStorage, use: StorageUse = {}): Promise<StoragePorts> {
  const storage = await rawStoragePorts(config, dataDir, runtimeStorage, use);
  const keyring = config.dataEncryptionKeys === undefined ? undefined : keyringOf(config, await serverCipherSuite());
  try {
    // A reader leaves a missing canary for the next writer: sealing it would change the store beside serve.
    await checkCanaries(storage.ports, keyring, { writeMissing: use.readOnly !== true });
  } catch (err) {
    await storage.close();
    if (err instanceof CanaryError) throw new ConfigError([`DATA_ENCRYPTION_KEYS: ${err.message}`]);
    throw err;
  }
  const encrypted = keyring === undefined ? "" : `; encrypted at rest under key "${keyring.currentKid}"`;
  return { ...storage, ports: encryptPorts(storage.ports, keyring), description: `${storage.description}${encrypted}`, raw: storage.ports, ...(keyring === undefined ? {} : { keyring }) };
}

/** How a process uses the stores it opens. */
export interface StorageUse {
  /** Only reads (`audit verify`): the data folder's write lock is not taken. Default false. */
  readOnly?: boolean;
  /** The command named to another writer the file store's lock refuses (default `a process`). */
  command?: string;
  /**
   * The file store's `--data` must be a folder already (the commands: a mistyped path is a
   * `ConfigError`, not a new empty store that reads as an intact trail). Default false (`serve` makes it).
   */
  existing?: boolean;
  /** The caller checked the data folder and holds its lock (`serve`, which takes it before writing secrets.json). */
  lockedByCaller?: boolean;
}

/** A `ConfigError` when `dataDir` is there but no folder (serve would fail deep in a write), or, with `existing`, not there. */
function checkDataFolder(dataDir: string, existing: boolean): void {
  let found: Stats;
  try {
    found = statSync(dataDir);
  } catch (err) {
    if (!existing && codeOf(err) === "ENOENT") return;
    throw new ConfigError([`--data ${dataDir} does not exist${existing ? " (serve makes it; the commands work on the data serve wrote)" : ""}`]);
  }
  if (!found.isDirectory()) throw new ConfigError([`--data ${dataDir} is not a folder`]);
}

/**
 * The stores `STORAGE` names as they are: sealed objects stay sealed (the `keys` commands work
 * on these). With the file store, a writer holds the data folder's lock until `close`
 * (files/folder-lock.ts): a second writer on the folder is a `ConfigError` naming the first.
 */
export async function rawStoragePorts(config: ServiceConfig, dataDir: string, runtimeStorage?: RuntimeStorage, use: StorageUse = {}): Promise<StoragePorts> {
  const none = async () => {};
  const own = await runtimeStorage?.(config, dataDir);
  if (own) return own;
  switch (config.storage) {
    case "deno-kv":
      throw new ConfigError(["STORAGE: deno-kv runs under Deno only (npm run start:deno)"]);
    case "fs": {
      if (use.lockedByCaller !== true) checkDataFolder(dataDir, use.existing === true);
      const lock = use.readOnly === true || use.lockedByCaller === true ? undefined : lockDataFolder(dataDir, use.command ?? "a process");
      const close = () => Promise.resolve(lock?.release());
      return { ports: createFilePorts(dataDir, { fsync: config.fsync }), description: `data in ${dataDir}`, close };
    }
    case "memory":
      return { ports: createMemoryPorts(), description: "storage: memory (lost on exit)", close: none };
    case "redis": {
      const redis = createRedisPorts(config.storageUrl ?? "");
      return { ...redis, description: "storage: redis (appends lossless across processes)" };
    }
    case "s3": {
      const location = s3LocationFromUrl(config.storageUrl ?? "", config.s3Region, config.s3AccessKeyId ?? "", config.s3SecretAccessKey ?? "");
      const s3 = await createS3Ports(location);
      const scope = s3.conditionalWrites
        ? "conditional writes honoured: appends lossless across processes"
        : "conditional writes ignored by this service: appends lossless within this process only";
      return { ports: s3.ports, description: `storage: s3 ${location.endpoint}/${location.bucket} (${scope})`, close: none };
    }
  }
}

/** A runtime's server, listening. */
export interface Listening {
  /** The port actually bound (the free one picked when asked for 0). */
  port: number;
  /** Stops accepting, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
  /** The client connections open now where the runtime's server counts them (Node, Deno), else its requests in flight (Bun). */
  openConnections?: () => number;
}

/** What a runtime's server admits (docs/configuration.md#connections); each runtime applies what it can. */
export interface ConnectionLimits {
  /** `MAX_CONNECTIONS`: connections held at once; one more is closed at accept. */
  maxConnections: number;
  /** `MAX_CONNECTIONS_PER_CLIENT`: connections held at once from one client address. */
  maxConnectionsPerClient: number;
  /** `HEADERS_TIMEOUT_SECONDS`: how long a request's headers may take to arrive. */
  headersTimeoutSeconds: number;
  /**
   * Bun only (`BUN_SERVER=bun-serve`): serve with `Bun.serve`, faster, which enforces none of
   * the three, instead of Bun's `node:http` server, which does.
   */
  bunServe?: boolean;
}

/** The limits when none are given: the configuration's defaults. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { maxConnections: 4096, maxConnectionsPerClient: 256, headersTimeoutSeconds: 10 };

/**
 * Serves an app with a runtime's own HTTP server (port 0 picks a free port), within `limits` as far as the runtime allows.
 * `countsConnections`: its {@link Listening} has `openConnections` (the `/metrics` gauge is then shown).
 */
export type Listen = ((app: WorkerApp, address: { port: number; hostname: string }, limits?: ConnectionLimits) => Promise<Listening>) & { readonly countsConnections?: boolean };

/** Options of {@link startService}. */
export interface ServeOptions {
  /** 0 picks a free port. */
  port: number;
  /** The address to bind, e.g. `127.0.0.1`. */
  host: string;
  /** The data directory: the stores' files, `secrets.json` and the mail outbox. */
  dataDir: string;
  /** Environment variables (already merged with `.env`). */
  env: Readonly<Record<string, string | undefined>>;
  /** Where the start-up lines go; default `console.log`. */
  log?: (line: string) => void;
}

/** A running service. */
export interface RunningServer {
  /** `http://host:port` */
  url: string;
  /** The port the service listens on. */
  port: number;
  /** Stops accepting, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
}

/** The runtime's server could not listen (a port in use, a host that is no address here); `cause` is the runtime's error. */
export class ListenError extends Error {
  constructor(readonly host: string, readonly port: number, cause: unknown) {
    super(`cannot listen on ${hostInUrl(host)}:${port}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "ListenError";
  }
}

/** Starts the service on `listen` and prints one line per worker with its base URL. */
export async function startService(options: ServeOptions, listen: Listen, runtimeStorage?: RuntimeStorage): Promise<RunningServer> {
  // An empty value is unset, as parseConfig takes it (`STORAGE=` in a .env is the file store).
  const defined = Object.fromEntries(
    Object.entries(options.env).filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== ""),
  );
  checkDataFolder(options.dataDir, false);
  // The address first: a start that cannot listen leaves nothing under --data (no folder, no secrets.json).
  await probeAddress(options.host, options.port).catch((err: unknown) => {
    throw new ListenError(options.host, options.port, err);
  });
  // With the file store, the folder's lock before anything is written there (secrets.json), held until close.
  const early = (defined.STORAGE ?? "fs") === "fs" ? lockDataFolder(options.dataDir, "serve") : undefined;
  // Older than the lock by a margin: file times lag the clock a little, and this process's own writes come after it.
  const lockedAt = Date.now() - LEFTOVER_MARGIN_MS;
  let started: RunningServer;
  try {
    started = await startOnFolder(options, defined, listen, runtimeStorage, early !== undefined);
  } catch (err) {
    early?.release();
    throw err;
  }
  if (early === undefined) return started;
  let stopping = false;
  // Not when this process held the folder already (an embedder's second start): the other holder's writes in flight are not leftovers.
  const sweep = early.fresh ? sweepLeftovers(options, lockedAt, () => stopping) : undefined;
  const close = async () => {
    stopping = true;
    await Promise.all([sweep, started.close()]).finally(() => early.release());
  };
  return { ...started, close };
}

const LEFTOVER_MARGIN_MS = 1_000;

/** Where the start-up lines go. */
const logOf = (options: ServeOptions): ((line: string) => void) => options.log ?? ((line) => console.log(line));

/** Removes, in the background, the temporary files a stopped writer left under --data (files/leftover-temporaries.ts); never fails the service. */
async function sweepLeftovers(options: ServeOptions, olderThan: number, stopped: () => boolean): Promise<void> {
  const log = logOf(options);
  try {
    const { removed, failed } = await removeLeftoverTemporaries(options.dataDir, { olderThan, stopped });
    if (removed > 0) log(`removed ${removed} temporary file${removed === 1 ? "" : "s"} a stopped process left under ${options.dataDir}`);
    if (failed > 0) log(`could not read or remove ${failed} file${failed === 1 ? "" : "s"} or folder${failed === 1 ? "" : "s"} while looking for leftover temporary files under ${options.dataDir}`);
  } catch (err) {
    log(`looking for leftover temporary files under ${options.dataDir} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The start lines naming where each worker answers, and the API reference page unless `API_DOCS=off`. */
export function serviceLines(url: string, apiDocs: boolean): string[] {
  const lines = Object.entries(WORKER_MOUNTS).map(([name, mount]) => `${name.padEnd(8)} ${url}${mount}`);
  return apiDocs ? [...lines, `${"docs".padEnd(8)} ${url}/docs (the API reference, in a browser)`] : lines;
}

/** {@link startService} once the data folder is checked and, for the file store, locked. */
async function startOnFolder(options: ServeOptions, defined: Record<string, string>, listen: Listen, runtimeStorage: RuntimeStorage | undefined, locked: boolean): Promise<RunningServer> {
  const log = logOf(options);
  const secrets = await ensureSecrets(options.dataDir, defined);
  const config = parseConfig(secrets.env);
  await checkAuditKeys(config);
  const storage = await storagePorts(config, options.dataDir, runtimeStorage, { command: "serve", lockedByCaller: locked });
  let server: Listening;
  let counted: (() => number) | undefined;
  const signing: string[] = [];
  try {
    // A key made just now, over trails already stored: their unsigned heads are signed once, before anything appends.
    if (secrets.generated.includes("AUDIT_SIGNING_KEY")) await signEarlierTrails(storage.ports.audit, config, storage.ports.clock.now(), (line) => signing.push(line));
    // The server is made after the app: the gauge reads it once it listens.
    const operator = { ...operatorOf(options.dataDir, locked), ...(listen.countsConnections === true ? { openConnections: () => counted?.() ?? 0 } : {}) };
    const app = await serviceOnStores(storage, config, options.dataDir, operator);
    try {
      const { maxConnections, maxConnectionsPerClient, headersTimeoutSeconds } = config;
      const bunServe = config.bunServer === "bun-serve";
      server = await listen(app, { port: options.port, hostname: options.host }, { maxConnections, maxConnectionsPerClient, headersTimeoutSeconds, bunServe });
      counted = server.openConnections;
    } catch (err) {
      // Caught here, not with .catch: Bun's and Deno's serve throw before a promise exists.
      throw new ListenError(options.host, options.port, err);
    }
  } catch (err) {
    // A start that failed holds nothing: the lock and the stores' connections go.
    await storage.close();
    throw err;
  }
  const url = `http://${hostInUrl(options.host)}:${server.port}`;
  for (const name of secrets.generated) log(generatedLine(name, secrets.env, options.dataDir, url));
  for (const line of signing) log(line);
  for (const line of serviceLines(url, config.apiDocs === "on")) log(line);
  if (config.dataHistory === "off") log("history  off (DATA_HISTORY=off): data writes and deletes keep no version; histories already stored stay readable");
  log(`ready    ${url} (${storage.description})`);
  return {
    url,
    port: server.port,
    close: async () => {
      await server.close();
      await storage.close();
    },
  };
}

/**
 * The service over opened stores, as `serve` runs it: the outbox under `dataDir`, SMTP when
 * configured. The commands without `--url` call it in-process, so they act as the workers do
 * (the same checks, mails and audit entries).
 */
export async function serviceOnStores(storage: StoragePorts, config: ServiceConfig, dataDir: string, operator?: OperatorPorts): Promise<WorkerApp> {
  // The outbox is files under --data whatever STORAGE is (docs/storage.md).
  const outbox = createFileBlobStore(join(dataDir, "outbox"), { sync: config.fsync === "all" });
  const service = { ...storage.ports, outbox };
  return createService(
    {
      ...service,
      auditHash: nodeSha256Hex,
      digest: nodeSha256BytesHex,
      // What `backup --url` and `restore --url` go through: the stores as the backup commands open them.
      backup: {
        stores: { raw: storage.raw === undefined ? service : { ...storage.raw, outbox }, service },
        ...(storage.keyring === undefined ? {} : { keyring: storage.keyring }),
        sha256: nodeSha256,
        // Beside the stores, never in one restored into.
        spool: createFileBlobStore(join(dataDir, "restore-spool"), { sync: false }),
        generatedSecrets: async () => Object.keys(await storedSecrets(dataDir)),
      },
      ...(config.mailTransport === "smtp" ? { mailer: await smtpMailer(config) } : {}),
      ...(operator === undefined ? {} : { operator }),
    },
    config,
  );
}

/** The request log on standard output, the process's memory, and (file store) the lock as a readiness check. */
function operatorOf(dataDir: string, locked: boolean): OperatorPorts {
  // A reader of the log that goes away (`serve | head`, a log shipper restarting) must not stop
  // the service: the broken pipe ends the log, never the process.
  let logging = true;
  process.stdout.on("error", () => {
    logging = false;
  });
  return {
    log: (line) => {
      if (logging) process.stdout.write(`${line}\n`);
    },
    defaultLogFormat: process.stdout.isTTY === true ? "text" : "json",
    residentMemoryBytes: () => process.memoryUsage.rss(),
    ...(locked
      ? {
        readiness: {
          lock: () => (holdsDataFolder(dataDir) ? Promise.resolve() : Promise.reject(new NotReady(`the data folder's lock (${LOCK_FILE}) is no longer held by this process`))),
        },
      }
      : {}),
  };
}
