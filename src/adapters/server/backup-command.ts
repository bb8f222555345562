/**
 * @module
 * The backup commands (docs/operations.md#backups), on the stores `serve` opens (files under
 * `--data` by default, or what `STORAGE` names):
 *
 *     forensic-annotation backup --out FILE [--data DIR] [--decrypt]
 *     forensic-annotation backup verify FILE [--json]
 *     forensic-annotation restore FILE [--data DIR] [--force] [--resume]
 *
 * `backup` only reads, so it runs beside a `serve` that holds the data folder's lock; `restore`
 * writes, and takes that lock like the other writing commands.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { ConfigError, parseConfig } from "../../core/config/mod.ts";
import type { BlobStore, Bytes } from "../../core/ports.ts";
import type { ServicePorts } from "../../core/service/service.ts";
import { auditKeys, checkAuditKeys } from "../../core/audit/signing-keys.ts";
import { checkCanaries, encryptPorts, keyringOf } from "../../core/service/encrypted-ports.ts";
import { CanaryError, encryptedBlobStore } from "../../core/encryption/mod.ts";
import { openValue } from "../../core/encryption/stored-value.ts";
import {
  ArchiveDamaged,
  type ArchiveProgress,
  type ArchiveVerdict,
  checkArchive,
  restoreArchive,
  RestoreRefusal,
  storesOf,
  writeBackup,
} from "../../core/backup/mod.ts";
import { nodeSha256, nodeSha256Hex } from "./node-sha256.ts";
import { serverCipherSuite } from "./node-cipher.ts";
import { createFileBlobStore } from "./files/file-ports.ts";
import { OutputPathError, writeOutputFile } from "./output-file.ts";
import { rawStoragePorts, type RuntimeStorage, type StorageUse } from "./start.ts";
import { commandIo, type ExchangeCommandIo, signatureConfig } from "./exchange-command.ts";
import { STORE_COMMAND_OPTIONS } from "./command-options.ts";
import { commandFailure, UsageError } from "./command-failure.ts";
import { storedSecrets } from "./secrets.ts";
import { backupThroughService, RemoteRestoreRefusal, restoreThroughService, type ServiceTarget } from "./backup-over-http.ts";
import { withServeAuditKey, withUrlHint } from "./running-service.ts";

const USAGE = `Usage:
  forensic-annotation backup --out FILE [--data DIR | --url URL] [--decrypt]
  forensic-annotation backup verify FILE [--json]
  forensic-annotation restore FILE [--data DIR | --url URL] [--force] [--resume]

backup writes one archive of everything the stores hold (user records, cases and
annotations and every other document, images and their metadata, every audit
day and head, the mail outbox) while the service runs: each user's audit trail
as it stood at one moment, so every trail in it verifies. It only reads: on
files it runs beside serve. Encrypted stores are backed up sealed unless --decrypt.
The manifest is signed with EXPORT_SIGNING_KEY when it is set.

backup verify checks an archive without a service: every object against its
SHA-256, the manifest and its signature (EXPORT_SIGNING_KEY's public half,
EXPORT_VERIFY_KEYS), and every audit trail (AUDIT_SIGNING_KEY, AUDIT_VERIFY_KEYS).
Exit 0 when it checks out, 1 when not.

restore writes an archive into the stores STORAGE names (files under --data,
redis, s3, ...). It refuses an archive that does not verify and a target that
holds data (unless --force), writing nothing then; it ends by checking the
counts and every audit trail on the target. A restore cut short finishes with
--resume (what is there already as archived is not written again). On files,
stop serve first, or use --url.

With --url both go through the running service (GET /data/backup, POST
/data/restore) with R2_KEY_SECRET (or --key-file) and ADMIN_AUTH: the same
archive, checks and results, on the stores and keys of the service.

Options:
  --out FILE   backup: the archive to write
  --data DIR   data directory (default ./.forensic-data)
  --url URL    the running service's base URL, e.g. http://127.0.0.1:8787
  --key-file F with --url: a file whose first line is R2_KEY_SECRET
  --decrypt    backup: write encrypted stores' objects opened (plaintext)
  --force      restore: write into stores that hold data
  --resume     restore: finish an interrupted restore
  --json       verify: print the verdict as JSON
  --help       show this help
`;


function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        ...STORE_COMMAND_OPTIONS,
        out: { type: "string" },
        decrypt: { type: "boolean", default: false },
        force: { type: "boolean", default: false },
        resume: { type: "boolean", default: false },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** A progress line on stderr, redrawn at most 5 times a second, only on a terminal. */
function progressLine(err: ExchangeCommandIo["err"], what: string) {
  let drawnAt = 0;
  let drawn = false;
  return {
    show(progress: ArchiveProgress) {
      if (err.isTTY !== true || Date.now() - drawnAt < 200) return;
      drawnAt = Date.now();
      drawn = true;
      err.write(`\r${what}: ${progress.objects} objects, ${(progress.bytes / 1048576).toFixed(1)} MB\x1b[K`);
    },
    end() {
      if (drawn) err.write("\n");
      drawn = false;
    },
  };
}

/** Chunks gathered into writes of about 1 MiB (an archive is many small records). */
function bufferedSink(write: (chunk: Uint8Array) => Promise<void>): { sink: (chunk: Uint8Array) => Promise<void>; flush(): Promise<void> } {
  const LIMIT = 1024 * 1024;
  let parts: Uint8Array[] = [];
  let size = 0;
  const flush = async () => {
    if (size === 0) return;
    const joined = new Uint8Array(size);
    let at = 0;
    for (const part of parts) {
      joined.set(part, at);
      at += part.length;
    }
    parts = [];
    size = 0;
    await write(joined);
  };
  return {
    async sink(chunk) {
      if (chunk.length >= LIMIT) {
        await flush();
        return write(chunk);
      }
      parts.push(chunk.slice());
      size += chunk.length;
      if (size >= LIMIT) await flush();
    },
    flush,
  };
}

/** The archive file as a web stream (read in 1 MiB pieces). */
function archiveStream(path: string): ReadableStream<Uint8Array> {
  return Readable.toWeb(createReadStream(path, { highWaterMark: 1024 * 1024 })) as unknown as ReadableStream<Uint8Array>;
}

/** The stores as they are and as the service uses them, with the outbox under --data; closed by `close`. */
async function openStores(env: ExchangeCommandIo["env"], dataDir: string, runtimeStorage: RuntimeStorage | undefined, use: StorageUse) {
  const config = parseConfig(env);
  await checkAuditKeys(config);
  const raw = await rawStoragePorts(config, dataDir, runtimeStorage, use);
  const keyring = config.dataEncryptionKeys === undefined ? undefined : keyringOf(config, await serverCipherSuite());
  try {
    await checkCanaries(raw.ports, keyring, { writeMissing: use.readOnly !== true });
  } catch (err) {
    await raw.close();
    if (err instanceof CanaryError) throw new ConfigError([`DATA_ENCRYPTION_KEYS: ${err.message}`]);
    throw err;
  }
  // The outbox is files under --data whatever STORAGE is (as serve keeps it), never encrypted.
  const outbox = createFileBlobStore(join(dataDir, "outbox"), { sync: config.fsync === "all" });
  const rawPorts: ServicePorts = { ...raw.ports, outbox };
  return { config, keyring, raw: rawPorts, service: encryptPorts(rawPorts, keyring), close: raw.close };
}

/** What `backup verify` and `restore` need to check an archive: keys from the environment. */
async function checkOptions(env: ExchangeCommandIo["env"]) {
  const config = parseConfig(env);
  await checkAuditKeys(config);
  const keyring = config.dataEncryptionKeys === undefined ? undefined : keyringOf(config, await serverCipherSuite());
  const { signer: _, verification } = await signatureConfig(env, false);
  const audit = auditKeys(config);
  return {
    keyring,
    options: {
      sha256: nodeSha256,
      signature: verification,
      publicKeys: await audit.publicKeys(),
      requireSignature: false,
      hash: nodeSha256Hex,
      now: new Date(),
      ...(keyring === undefined ? {} : { openAudit: (store: BlobStore) => encryptedBlobStore(store, keyring, { appendLog: true, store: "audit" }) }),
    },
  };
}

/**
 * The warning of a backup whose source has keys `serve` generated: they are credentials, kept
 * out of the archive (docs/operations.md#generated-secrets), so the operator keeps them aside.
 */
export function secretsWarning(names: readonly string[], where: string): string {
  return `backup: NOT in the archive: the keys serve generated (${names.join(", ")}) in ${where}; keep a copy of that file aside, as safely as DATA_ENCRYPTION_KEYS, and put it under the new --data (or set the variables) when you restore, or there the clients' keys, signed image URLs, packages sealed for this lab and what these keys signed stop working or verifying`;
}

/** The counts of a manifest, one kind a line. */
function countLines(counts: Record<string, number>): string[] {
  return Object.keys(counts).sort().map((kind) => `  ${kind.padEnd(20)} ${counts[kind]}`);
}

function describeVerdict(verdict: ArchiveVerdict): string[] {
  const { manifest, signature } = verdict;
  const sig = signature.valid === true ? "signed, signature valid" : signature.valid === "unsigned" ? "unsigned" : `signature NOT valid: ${signature.reason ?? ""}`;
  const trails = verdict.trails.filter((trail) => trail.valid).length;
  return [
    `backup of ${manifest.createdAt}: ${manifest.objects} objects, ${manifest.bytes} bytes${manifest.sealed ? ", sealed (encryption at rest)" : ""}; ${sig}`,
    ...countLines(manifest.counts),
    `audit trails: ${trails} of ${verdict.trails.length} verify`,
    verdict.valid ? "the archive checks out" : `NOT VALID: ${verdict.problem}`,
  ];
}

/** The service `--url` names, with the keys' sources. */
const targetOf = (flags: ReturnType<typeof parse>["values"], io: ExchangeCommandIo): ServiceTarget => ({ url: flags.url!, keyFile: flags["key-file"], dataDir: flags.data, env: io.env });

/** `backup --url`: the service's archive saved to --out, the same lines as a backup on the stores. */
async function runBackupThroughService(flags: ReturnType<typeof parse>["values"], io: ExchangeCommandIo): Promise<number> {
  const bar = progressLine(io.err, "backup");
  const path = resolve(flags.out!);
  const { manifest, generatedSecrets } = await backupThroughService(targetOf(flags, io), path, { decrypt: flags.decrypt, onProgress: (progress) => bar.show(progress) }).finally(() => bar.end());
  io.err.write(`backup: ${manifest.objects} objects, ${manifest.bytes} bytes${manifest.sealed ? " (sealed)" : ""}${manifest.signature ? ", manifest signed" : ""}\n`);
  for (const line of countLines(manifest.counts)) io.err.write(`${line}\n`);
  if (generatedSecrets.length > 0) io.err.write(`${secretsWarning(generatedSecrets, `secrets.json under the --data of the serve at ${flags.url}`)}\n`);
  io.out(path);
  return 0;
}

async function runBackup(flags: ReturnType<typeof parse>["values"], io: ExchangeCommandIo, runtimeStorage: RuntimeStorage | undefined): Promise<number> {
  if (flags.out === undefined || flags.out === "") throw new UsageError("backup needs --out FILE");
  if (flags.url !== undefined) return await runBackupThroughService(flags, io);
  const { signer } = await signatureConfig(io.env, false);
  // Reads only: beside a running serve, which holds the data folder's write lock.
  const stores = await openStores(await withServeAuditKey(io.env, flags.data), resolve(flags.data), runtimeStorage, { readOnly: true, existing: true });
  try {
    const sealed = stores.keyring !== undefined && !flags.decrypt;
    const keyring = stores.keyring;
    const bar = progressLine(io.err, "backup");
    const path = resolve(flags.out);
    let manifest;
    await writeOutputFile(path, async (write) => {
      const buffered = bufferedSink(write);
      manifest = await writeBackup(storesOf(sealed ? stores.raw : stores.service), buffered.sink, {
        sha256: nodeSha256,
        now: new Date(),
        sealed,
        ...(keyring === undefined ? {} : { openHead: (key: string, stored: Bytes) => openValue(keyring, key, stored) }),
        signer,
        onProgress: (progress) => bar.show(progress),
      });
      await buffered.flush();
    });
    bar.end();
    const written = manifest as unknown as Awaited<ReturnType<typeof writeBackup>>;
    io.err.write(`backup: ${written.objects} objects, ${written.bytes} bytes${written.sealed ? " (sealed)" : ""}${written.signature ? ", manifest signed" : ""}\n`);
    for (const line of countLines(written.counts)) io.err.write(`${line}\n`);
    // Unreadable, it still holds them: warned all the same.
    const generated = await storedSecrets(resolve(flags.data)).then(Object.keys, () => ["(the file could not be read)"]);
    if (generated.length > 0) io.err.write(`${secretsWarning(generated, join(resolve(flags.data), "secrets.json"))}\n`);
    io.out(path);
    return 0;
  } finally {
    await stores.close();
  }
}

async function runVerify(path: string, flags: ReturnType<typeof parse>["values"], io: ExchangeCommandIo): Promise<number> {
  await stat(path).catch(() => {
    throw new UsageError(`${path}: no such file`);
  });
  // The heads are checked with the key serve generated under --data too, when one is there.
  const { options } = await checkOptions(await withServeAuditKey(io.env, flags.data));
  const bar = progressLine(io.err, "verifying");
  let verdict: ArchiveVerdict;
  try {
    verdict = await checkArchive(archiveStream(path), { ...options, onProgress: (progress) => bar.show(progress) });
  } catch (err) {
    bar.end();
    if (!(err instanceof ArchiveDamaged)) throw err;
    if (flags.json) io.out(JSON.stringify({ valid: false, problem: err.message }, null, 2));
    else io.out(`NOT VALID: ${err.message}`);
    return 1;
  }
  bar.end();
  if (flags.json) {
    const { manifest, signature, valid, problem } = verdict;
    io.out(JSON.stringify({ valid, problem, manifest, signature, trails: verdict.trails.map(({ userId, valid, entries, firstBad }) => ({ userId, valid, entries, firstBad })) }, null, 2));
  } else for (const line of describeVerdict(verdict)) io.out(line);
  return verdict.valid ? 0 : 1;
}

/** A restore's phases and progress on the terminal, as the local and the --url restore tell them. */
function restoreProgress(bar: ReturnType<typeof progressLine>, io: ExchangeCommandIo) {
  return {
    onPhase: (phase: string) => {
      bar.end();
      if (io.err.isTTY === true) io.err.write(`restore: ${phase}\n`);
    },
    onProgress: (progress: Parameters<ReturnType<typeof progressLine>["show"]>[0]) => bar.show(progress),
  };
}

/** What a finished restore prints: the objects, the target's counts, the trails that verify. */
function printRestored(io: ExchangeCommandIo, done: { objects: number; written: number; alreadyThere: number; counts: Parameters<typeof countLines>[0]; verified: number; total: number }): void {
  io.out(`restored ${done.objects} objects (${done.written} written${done.alreadyThere > 0 ? `, ${done.alreadyThere} already there` : ""}); the target holds:`);
  for (const line of countLines(done.counts)) io.out(line);
  io.out(`audit trails: ${done.verified} of ${done.total} verify on the target`);
}

/** `restore --url`: the archive sent to the service, its phases and outcome told as a restore on the stores tells them. */
async function runRestoreThroughService(path: string, flags: ReturnType<typeof parse>["values"], io: ExchangeCommandIo): Promise<number> {
  const bar = progressLine(io.err, "restore");
  try {
    const done = await restoreThroughService(targetOf(flags, io), path, {
      force: flags.force,
      resume: flags.resume,
      ...restoreProgress(bar, io),
    });
    bar.end();
    printRestored(io, { ...done, verified: done.trails.verified, total: done.trails.total });
    return 0;
  } catch (err) {
    bar.end();
    if (err instanceof RemoteRestoreRefusal) {
      io.err.write(`restore refused: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

async function runRestore(path: string, flags: ReturnType<typeof parse>["values"], io: ExchangeCommandIo, runtimeStorage: RuntimeStorage | undefined): Promise<number> {
  await stat(path).catch(() => {
    throw new UsageError(`${path}: no such file`);
  });
  if (flags.url !== undefined) return await runRestoreThroughService(path, flags, io);
  // The target's serve checks the heads with the key it generated under --data: the restore checks them with it first.
  const env = await withServeAuditKey(io.env, flags.data);
  const { options } = await checkOptions(env);
  const stores = await openStores(env, resolve(flags.data), runtimeStorage, { command: "restore" }).catch((err: unknown) => {
    throw withUrlHint(err, "restore");
  });
  try {
    const bar = progressLine(io.err, "restore");
    const summary = await restoreArchive(() => archiveStream(path), {
      raw: storesOf(stores.raw),
      service: storesOf(stores.service),
      encrypted: stores.keyring !== undefined,
    }, {
      ...options,
      force: flags.force,
      resume: flags.resume,
      ...restoreProgress(bar, io),
      onWritten: (progress) => bar.show(progress),
    });
    bar.end();
    printRestored(io, { objects: summary.manifest.objects, written: summary.written, alreadyThere: summary.alreadyThere, counts: summary.counts, verified: summary.trails.filter((trail) => trail.valid).length, total: summary.trails.length });
    return 0;
  } catch (err) {
    if (err instanceof RestoreRefusal) {
      io.err.write(`restore refused: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await stores.close();
  }
}

/**
 * Runs `backup ...`, `backup verify ...` or `restore ...` (argv without the program name) and
 * resolves with the exit code: 0 done or valid, 1 refused, failed or not valid, 2 bad usage.
 */
export async function runBackupCommand(
  argv: readonly string[],
  options: { runtimeStorage?: RuntimeStorage | undefined; io?: Partial<ExchangeCommandIo> | undefined } = {},
): Promise<number> {
  const io = commandIo(options.io);
  try {
    const { values: flags, positionals } = parse(argv);
    if (flags.help) {
      io.out(USAGE);
      return 0;
    }
    const [command, sub, extra] = positionals;
    if (command === "backup" && sub === "verify") {
      if (positionals[2] === undefined || positionals.length > 3) throw new UsageError("backup verify takes one FILE");
      if (flags.out !== undefined || flags.force || flags.resume || flags.decrypt) throw new UsageError("backup verify takes only FILE and --json");
      if (flags.url !== undefined || flags["key-file"] !== undefined) throw new UsageError("backup verify checks a file without a service: it takes no --url");
      return await runVerify(resolve(positionals[2]), flags, io);
    }
    if (command === "backup") {
      if (sub !== undefined) throw new UsageError(`Unexpected argument: ${sub} (backup --out FILE, or backup verify FILE)`);
      if (flags.force || flags.resume || flags.json) throw new UsageError("backup takes --out, --data or --url, and --decrypt");
      if (flags["key-file"] !== undefined && flags.url === undefined) throw new UsageError("--key-file goes with --url (without it the command opens the stores itself)");
      return await runBackup(flags, io, options.runtimeStorage);
    }
    if (command === "restore") {
      if (sub === undefined || extra !== undefined) throw new UsageError("restore takes one FILE");
      if (flags.out !== undefined || flags.decrypt || flags.json) throw new UsageError("restore takes FILE, --data or --url, --force and --resume");
      if (flags["key-file"] !== undefined && flags.url === undefined) throw new UsageError("--key-file goes with --url (without it the command opens the stores itself)");
      return await runRestore(resolve(sub), flags, io, options.runtimeStorage);
    }
    throw new UsageError(`Unknown command: ${command ?? "(none)"}`);
  } catch (err) {
    return commandFailure(err, io.err, { usage: USAGE, input: [ConfigError, OutputPathError] });
  }
}
