/**
 * @module
 * The `export` and `import` commands (docs/exchange.md), on the same stores as `serve` (files under
 * `--data` by default, or what `STORAGE` names):
 *
 *     forensic-annotation export --user UID --case CASE --format json|csv|zip [--out FILE]
 *     forensic-annotation export --user UID --all --format json|xlsx [--out FILE]
 *     forensic-annotation import --user UID [--preview] FILE.zip
 *
 * A progress bar on a terminal, plain lines otherwise. Manifests are signed with
 * `EXPORT_SIGNING_KEY` (a private JWK) when it is set, and verified on import against its
 * public half and `EXPORT_VERIFY_KEYS`.
 */
import { type FileHandle, open } from "node:fs/promises";
import { constants } from "node:fs";
import { OutputPathError, writeOutputFile } from "./output-file.ts";
import { terminalJson, terminalLine } from "./terminal-text.ts";
import { auditKeys, checkAuditKeys } from "../../core/audit/signing-keys.ts";
import { basename, resolve } from "node:path";
import { parseArgs } from "node:util";
import * as zlib from "node:zlib";
import { ConfigError, parseConfig } from "../../core/config/mod.ts";
import { type ExchangeSignatures, exchangeSignatures } from "../../core/exchange/signing-config.ts";
import { deliveredImageReader } from "../../core/exchange/delivered-images.ts";
import { createKeyHistories } from "../../core/history/mod.ts";
import { hostForDirectUse, imageHostOf } from "../../core/service/service.ts";
import { nodeSha256BytesHex, nodeSha256Hex } from "./node-sha256.ts";
import {
  type CaseImportOptions,
  type CaseImportPreview,
  type ImportResult,
  type CaseZipSummary,
  type ExchangeStore,
  exportAllCases,
  exportCase,
  type ExportProgress,
  importCase,
  type ArchiveReader,
  type ManifestSigner,
  portsExchangeStore,
  previewCaseImport,
  writeCaseZip,
} from "../../core/exchange/mod.ts";
import { type RuntimeStorage, storagePorts } from "./start.ts";
import { readEnvironment } from "./environment.ts";
import type { ServiceClient } from "../../client/mod.ts";
import { callProblem, runningServiceClient, ServiceClientError, serviceUrl, withServeAuditKey, withUrlHint, workerKey } from "./running-service.ts";
import { STORE_COMMAND_OPTIONS } from "./command-options.ts";
import { commandFailure, UsageError } from "./command-failure.ts";

const USAGE = `Usage:
  forensic-annotation export --user UID --case CASE --format json|csv|zip [--out FILE] [--url URL]
  forensic-annotation export --user UID --all --format json|xlsx [--out FILE] [--url URL]
  forensic-annotation import --user UID [--preview] [--url URL] FILE.zip

Exports a case (JSON, CSV, or a ZIP with its images and a signed manifest) or every
case of a user (JSON, or an XLSX workbook), and imports a case ZIP as a read-only case.
Reads and writes the same stores as serve.

Options:
  --data DIR                 data directory (default ./.forensic-data)
  --out FILE                 where to write the export (default: a name in the working directory;
                             - writes it to standard output)
  --no-annotations           export files without their annotations
  --no-metadata              export without the summary block
  --preview                  import: check the package and show what it holds; write nothing
  --overwrite                import: replace a read-only case of the same number
  --no-validate-integrity    import: report files without images as warnings, not refusals
  --no-preserve-timestamps   import: date files and annotations at the import time
  --require-signature        import: refuse packages without a valid signature
  --json                     import: print the result as JSON
  --url URL                  export or import through the running service at URL (its
                             /exchange worker: the service's keys sign and verify, nothing
                             is stopped); the same files and results as without it
  --key-file FILE            with --url: a file whose first line is R2_KEY_SECRET (default:
                             the environment, .env, then the key serve generated under --data)
  --help                     show this help

Environment (and .env): STORAGE and the storage variables as for serve;
EXPORT_SIGNING_KEY (a private JWK: signs export manifests), EXPORT_VERIFY_KEYS (a JWK,
an array of JWKs or a JWKS: keys import accepts), EXPORT_REQUIRE_SIGNATURE=true.
`;

/** Where the command writes. */
export interface ExchangeCommandIo {
  /** One line of results (stdout). */
  out: (line: string) => void;
  /** Progress and errors (stderr); a progress bar is drawn when `isTTY` is true. */
  err: { write(text: string): unknown; isTTY?: boolean | undefined };
  /** The environment (default: `.env` of the working directory under the process environment). */
  env: Readonly<Record<string, string | undefined>>;
  /** Where `--out -` writes the export's bytes (default: standard output, waiting while it drains). */
  data?: (chunk: Uint8Array) => Promise<void>;
}

/** A command's I/O: what `io` gives, else the console, stderr and `.env` under the process environment. */
export function commandIo(io: Partial<ExchangeCommandIo> | undefined): ExchangeCommandIo {
  return {
    out: io?.out ?? ((line) => console.log(line)),
    err: io?.err ?? process.stderr,
    env: io?.env ?? readEnvironment(),
    data: io?.data ?? writeStandardOutput,
  };
}

/** Writes to standard output, resolving once the chunk is handed over (a slow reader holds the export, not memory). */
function writeStandardOutput(chunk: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(chunk, (err) => (err ? reject(err) : resolve()));
  });
}

/** `--out -`: the export goes to standard output, and what the command says about it to standard error. */
const TO_STANDARD_OUTPUT = "-";

/**
 * Writes an export to `out` (a file written whole or not at all, output-file.ts) or to standard
 * output for `-`; resolves with the bytes written.
 */
function writeExport(out: string, io: ExchangeCommandIo, produce: (write: (chunk: Uint8Array) => Promise<void>) => Promise<void>): Promise<number> {
  if (out !== TO_STANDARD_OUTPUT) return writeOutputFile(out, produce);
  const data = io.data ?? writeStandardOutput;
  let bytes = 0;
  return produce(async (chunk) => {
    await data(chunk);
    bytes += chunk.length;
  }).then(() => bytes);
}

/** Where the command's own lines go: standard error when the export itself is on standard output. */
const reportOf = (out: string | undefined, io: ExchangeCommandIo): ((line: string) => void) =>
  out === TO_STANDARD_OUTPUT ? (line) => io.err.write(`${line}\n`) : io.out;

/** Options of {@link runExchangeCommand}. */
export interface ExchangeCommandOptions {
  /** Stores only one runtime offers (Deno KV under Deno), as for `serve`. */
  runtimeStorage?: RuntimeStorage | undefined;
  /** Output and environment; default the process's. */
  io?: Partial<ExchangeCommandIo> | undefined;
}


/** The file to import cannot be opened: said in one line (exit 2), as a wrong path is bad usage. */
class InputFileError extends Error {}

/** A refusal of the exchange library in the command's words: its option is the flag the user types. */
const inFlagWords = (text: string): string => text.replaceAll("overwriteExisting", "--overwrite");

/** The runtime's native CRC-32 (Node >= 20.15, Bun, Deno); the exchange module's own otherwise. */
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;


function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        ...STORE_COMMAND_OPTIONS,
        user: { type: "string" },
        case: { type: "string" },
        all: { type: "boolean", default: false },
        format: { type: "string" },
        out: { type: "string" },
        preview: { type: "boolean", default: false },
        overwrite: { type: "boolean", default: false },
        "no-annotations": { type: "boolean", default: false },
        "no-metadata": { type: "boolean", default: false },
        "no-validate-integrity": { type: "boolean", default: false },
        "no-preserve-timestamps": { type: "boolean", default: false },
        "require-signature": { type: "boolean", default: false },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}
type Flags = ReturnType<typeof parse>["values"];

/** A progress bar on a terminal, a line per step otherwise. */
export function progressPrinter(err: ExchangeCommandIo["err"]): { show(label: string, done: number, total: number): void; end(): void } {
  let drawn = false;
  let lastLabel = "";
  return {
    show(label, done, total) {
      if (err.isTTY === true) {
        const width = 30;
        const ratio = total === 0 ? 1 : Math.min(1, done / total);
        const filled = Math.round(ratio * width);
        err.write(`\r${label.padEnd(11)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} ${Math.round(ratio * 100)}%\x1b[K`);
        drawn = true;
        return;
      }
      // Plain lines: every step of the images, the start and end of the other phases.
      if (label === "images" || done === total || label !== lastLabel) err.write(`${label} ${done}/${total}\n`);
      lastLabel = label;
    },
    end() {
      if (drawn) err.write("\n");
      drawn = false;
    },
  };
}

/** The signer and the verification keys the environment configures (the exchange worker reads the same). */
export function signatureConfig(env: ExchangeCommandIo["env"], requireSignature: boolean): Promise<ExchangeSignatures> {
  const required = requireSignature || /^(1|true|yes)$/i.test(env.EXPORT_REQUIRE_SIGNATURE ?? "");
  return exchangeSignatures({ signingKey: env.EXPORT_SIGNING_KEY, verifyKeys: env.EXPORT_VERIFY_KEYS, requireSignature: required });
}

/** Writes an export to `--out` (or its own name) inside the export, so the audit entry records what was written, or the failure. */
function savingTo(out: string | undefined, io: ExchangeCommandIo): { save: (file: { fileName: string; bytes: Uint8Array }) => Promise<string>; path: string; bytes: number } {
  const saved = {
    path: "",
    bytes: 0,
    save: async (file: { fileName: string; bytes: Uint8Array }) => {
      const toOutput = out === TO_STANDARD_OUTPUT;
      saved.path = toOutput ? "standard output" : resolve(out ?? file.fileName);
      saved.bytes = await writeExport(toOutput ? TO_STANDARD_OUTPUT : saved.path, io, (write) => write(file.bytes));
      return toOutput ? file.fileName : basename(saved.path);
    },
  };
  return saved;
}

async function runExport(flags: Flags, store: ExchangeStore, io: ExchangeCommandIo, signer: ManifestSigner | undefined): Promise<number> {
  const user = flags.user!;
  const options = { includeAnnotations: !flags["no-annotations"], includeMetadata: !flags["no-metadata"] };
  const progress = progressPrinter(io.err);
  const onProgress = ({ phase, done, total }: ExportProgress) => progress.show(phase, done, total);
  const report = reportOf(flags.out, io);
  if (flags.all) {
    if (flags.case !== undefined) throw new UsageError("--all and --case exclude each other");
    const format = flags.format ?? "json";
    if (format !== "json" && format !== "xlsx") throw new UsageError(`--all exports json or xlsx, not "${format}"`);
    const saved = savingTo(flags.out, io);
    const file = await exportAllCases(store, user, format, { ...options, onCase: (done, total) => progress.show("cases", done, total), save: saved.save });
    progress.end();
    const { path, bytes } = saved;
    const failed = file.data.cases.filter((data) => data.summary?.exportError !== undefined);
    report(`exported ${file.data.cases.length} case(s) of ${user} (${file.data.metadata.totalFiles} files) to ${path} (${bytes} bytes)`);
    for (const data of failed) report(`case ${data.metadata.caseNumber} failed: ${data.summary?.exportError ?? ""}`);
    return 0;
  }
  const caseNumber = flags.case;
  if (caseNumber === undefined) throw new UsageError("export needs --case CASE or --all");
  const format = flags.format ?? "zip";
  if (format === "json" || format === "csv") {
    const saved = savingTo(flags.out, io);
    const file = await exportCase(store, user, caseNumber, format, { ...options, onProgress, save: saved.save });
    progress.end();
    const { path, bytes } = saved;
    report(`exported case ${caseNumber} of ${user} (${file.data.metadata.totalFiles} files) to ${path} (${bytes} bytes)`);
    return 0;
  }
  if (format !== "zip") throw new UsageError(`--format must be json, csv or zip, not "${format}"`);
  const defaultName = `${caseNumber}-export-${store.now().toISOString().slice(0, 10).replaceAll("-", "")}.zip`;
  const toOutput = flags.out === TO_STANDARD_OUTPUT;
  const path = toOutput ? TO_STANDARD_OUTPUT : resolve(flags.out ?? defaultName);
  let summary: CaseZipSummary | undefined;
  const bytes = await writeExport(path, io, async (write) => {
    summary = await writeCaseZip(store, user, caseNumber, write, { ...options, onProgress, signer, fileName: toOutput ? defaultName : basename(path), crc32: nativeCrc32 });
  });
  progress.end();
  report(`exported case ${caseNumber} of ${user} (${summary!.images} images) to ${toOutput ? "standard output" : path} (${bytes} bytes)`);
  report(`manifest hash ${summary!.manifest.manifestHash}${summary!.manifest.signature !== undefined ? ` signed with key ${summary!.manifest.signature.keyId}` : " (unsigned)"}`);
  return 0;
}

/** What an import takes from the environment rather than the flags. */
type ImportSettings = Pick<CaseImportOptions, "verification" | "maxImageBytes">;

/** The package file of `import`, opened and checked to be a regular file. */
async function openPackage(positionals: string[]): Promise<{ file: string; handle: FileHandle }> {
  const file = positionals[0];
  if (file === undefined || positionals.length > 1) throw new UsageError("import needs exactly one FILE.zip");
  // Without blocking: a FIFO (or a device) would hold the open until something writes to it.
  const handle = await open(resolve(file), constants.O_RDONLY | (constants.O_NONBLOCK ?? 0)).catch((err: unknown) => {
    const code = typeof err === "object" && err !== null && "code" in err ? err.code : undefined;
    if (code === "ENOENT") throw new InputFileError(`import: ${file} does not exist`);
    if (code === "EACCES" || code === "EPERM") throw new InputFileError(`import: ${file} cannot be read (permission denied)`);
    if (code === "EISDIR") throw new InputFileError(`import: ${file} is a folder: import reads a .zip file`);
    throw err;
  });
  try {
    if (!(await handle.stat()).isFile()) throw new UsageError(`${file} is not a regular file: import reads a .zip file`);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return { file, handle };
}

async function runImport(flags: Flags, positionals: string[], store: ExchangeStore, io: ExchangeCommandIo, settings: ImportSettings): Promise<number> {
  const { file, handle } = await openPackage(positionals);
  try {
    return await importArchive(flags, await fileReader(handle), io, store, { ...settings, fileName: basename(file) });
  } finally {
    await handle.close();
  }
}

/** The file's bytes as a stream, read in chunks (an upload holds one chunk at a time). */
function fileStream(handle: FileHandle): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = new Uint8Array(256 * 1024);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, offset);
      if (bytesRead === 0) return controller.close();
      offset += bytesRead;
      controller.enqueue(chunk.subarray(0, bytesRead));
    },
  }, { highWaterMark: 0 });
}

/** The flags the service's own settings answer for under `--url`. */
const SERVICE_SETTINGS = ["no-validate-integrity", "no-preserve-timestamps", "require-signature"] as const;

/** `export --url` and `import --url`: through the running service's exchange worker, with the client's calls. */
async function throughService(command: "export" | "import", flags: Flags, positionals: string[], io: ExchangeCommandIo): Promise<number> {
  if (flags.url === undefined) throw new UsageError("--key-file goes with --url");
  const fixed = SERVICE_SETTINGS.filter((flag) => flags[flag]);
  if (fixed.length > 0) throw new UsageError(`${fixed.map((flag) => `--${flag}`).join(", ")}: with --url the service's own settings decide (EXPORT_REQUIRE_SIGNATURE, EXPORT_VERIFY_KEYS on the server)`);
  const url = serviceUrl(flags.url);
  const dataKey = await workerKey("R2_KEY_SECRET", { keyFile: flags["key-file"], env: io.env, dataDir: resolve(flags.data) });
  if (dataKey === undefined) throw new ConfigError(["R2_KEY_SECRET: the exchange worker's key is needed with --url (set it, or give --key-file)"]);
  const adminKey = io.env.ADMIN_AUTH === "" ? undefined : io.env.ADMIN_AUTH;
  const client = runningServiceClient(url, { dataKey, ...(adminKey === undefined ? {} : { adminKey }) });
  try {
    return command === "export" ? await exportThroughService(flags, io, client, url) : await importThroughService(flags, positionals, io, client);
  } catch (err) {
    if (!(err instanceof ServiceClientError)) throw err;
    io.err.write(`${terminalLine(callProblem(err, url))}\n`);
    return 1;
  }
}

/** A name the service gave its file, as a plain name in the working directory (never a path it chose); undefined when it is none. */
function plainFileName(name: string): string | undefined {
  const plain = basename(name.replaceAll("\\", "/"));
  return plain === "" || plain === "." || plain === ".." || terminalLine(plain) !== plain ? undefined : plain;
}

async function exportThroughService(flags: Flags, io: ExchangeCommandIo, client: ServiceClient, url: string): Promise<number> {
  const user = flags.user!;
  if (flags.all && flags.case !== undefined) throw new UsageError("--all and --case exclude each other");
  if (!flags.all && flags.case === undefined) throw new UsageError("export needs --case CASE or --all");
  const format = flags.format ?? (flags.all ? "json" : "zip");
  const options = { annotations: !flags["no-annotations"], metadata: !flags["no-metadata"] };
  let file;
  if (flags.all) {
    if (format !== "json" && format !== "xlsx") throw new UsageError(`--all exports json or xlsx, not "${format}"`);
    file = await client.exchange.exportAllCases(user, { ...options, format });
  } else {
    if (format !== "json" && format !== "csv" && format !== "zip") throw new UsageError(`--format must be json, csv or zip, not "${format}"`);
    file = await client.exchange.exportCase(user, flags.case!, { ...options, format });
  }
  const name = plainFileName(file.fileName) ?? `${flags.all ? "all-cases" : flags.case}-export.${format}`;
  const toOutput = flags.out === TO_STANDARD_OUTPUT;
  const path = toOutput ? TO_STANDARD_OUTPUT : resolve(flags.out ?? name);
  const reader = file.body.getReader();
  const bytes = await writeExport(path, io, async (write) => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      await write(value);
    }
  }).finally(() => reader.cancel().catch(() => undefined));
  reportOf(flags.out, io)(`exported ${flags.all ? "every case" : `case ${flags.case}`} of ${user} through ${url} to ${toOutput ? "standard output" : path} (${bytes} bytes)`);
  return 0;
}

async function importThroughService(flags: Flags, positionals: string[], io: ExchangeCommandIo, client: ServiceClient): Promise<number> {
  const { file, handle } = await openPackage(positionals);
  try {
    const user = flags.user!;
    if (flags.preview) return reportPreview(flags, io, await client.exchange.previewImport(user, fileStream(handle), { overwrite: flags.overwrite }));
    let result: ImportResult;
    try {
      result = await client.exchange.importCase(user, fileStream(handle), { overwrite: flags.overwrite, fileName: basename(file) });
    } catch (err) {
      // A refused package: the worker's 4xx carries the import result, printed as without --url.
      const refused = err instanceof ServiceClientError ? (err.error?.details as { result?: ImportResult } | undefined)?.result : undefined;
      if (refused === undefined) throw err;
      result = refused;
    }
    return reportImport(flags, io, result);
  } finally {
    await handle.close();
  }
}

/** The archive read in ranges from its file, so an import's memory follows its largest image, not the archive. */
async function fileReader(handle: FileHandle): Promise<ArchiveReader> {
  const { size } = await handle.stat();
  return {
    size,
    async read(offset, into) {
      let filled = 0;
      while (filled < into.length) {
        const { bytesRead } = await handle.read(into, filled, into.length - filled, offset + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return filled;
    },
  };
}

async function importArchive(flags: Flags, zip: ArchiveReader, io: ExchangeCommandIo, store: ExchangeStore, settings: ImportSettings & { fileName: string }): Promise<number> {
  const user = flags.user!;
  const options: CaseImportOptions = {
    overwriteExisting: flags.overwrite,
    validateIntegrity: !flags["no-validate-integrity"],
    preserveTimestamps: !flags["no-preserve-timestamps"],
    ...settings,
  };
  if (flags.preview) return reportPreview(flags, io, await previewCaseImport(zip, { store, importerUid: user, ...options }));
  const progress = progressPrinter(io.err);
  const result = await importCase(store, zip, user, { ...options, onProgress: ({ stage, done, total }) => progress.show(stage, done, total) });
  progress.end();
  return reportImport(flags, io, result);
}

/** A preview printed (its control characters escaped: terminal-text.ts); 0 when it can be imported. */
function reportPreview(flags: Flags, io: ExchangeCommandIo, preview: CaseImportPreview): number {
  if (flags.json) io.out(terminalJson(preview));
  else {
    io.out(terminalLine(`case ${preview.caseNumber || "(none)"}: ${preview.fileCount} files, ${preview.annotationCount} with annotations, images ${preview.hasImages ? "yes" : "no"}`));
    io.out(terminalLine(`exported ${preview.exportDate || "(unknown)"} by ${preview.exportedBy ?? "(unknown)"}; signature ${String(preview.signatureValid ?? "not read")}`));
    io.out(`can import: ${preview.canImport ? "yes" : "no"}`);
    for (const warning of preview.warnings) io.out(terminalLine(`- ${inFlagWords(warning)}`));
  }
  return preview.canImport ? 0 : 1;
}

/** An import's result printed; its exit code. */
function reportImport(flags: Flags, io: ExchangeCommandIo, result: ImportResult): number {
  const user = flags.user!;
  if (flags.json) io.out(terminalJson(result));
  else if (result.success) {
    io.out(terminalLine(`imported case ${result.caseNumber} for ${user} as a read-only case: ${result.filesImported} files, ${result.annotationsImported} annotation documents; signature ${String(result.signatureValid ?? "not read")}`));
    for (const warning of result.warnings ?? []) io.out(terminalLine(`warning: ${inFlagWords(warning)}`));
  } else {
    for (const error of result.errors ?? []) io.err.write(`${terminalLine(`import refused: ${inFlagWords(error)}`)}\n`);
    for (const warning of result.warnings ?? []) io.err.write(`${terminalLine(`warning: ${inFlagWords(warning)}`)}\n`);
  }
  // A case document of the importer's own in the way is no fault of the package: 2, as the 409 over HTTP.
  // A read-only case of the same number is not: --overwrite resolves it (1, as any refusal).
  return result.success ? 0 : result.errorCode === "CONFLICT" && result.overwritable !== true ? 2 : 1;
}

/**
 * Runs `export ...` or `import ...` (argv without the program name) and resolves with the
 * exit code: 0 done, 1 failed or refused, 2 bad usage or configuration, or an import refused
 * because a case document of the importer's own is in the way (`CONFLICT`).
 */
export async function runExchangeCommand(argv: readonly string[], options: ExchangeCommandOptions = {}): Promise<number> {
  const io = commandIo(options.io);
  let close = async () => {};
  try {
    const { values: flags, positionals } = parse(argv);
    if (flags.help) {
      io.out(USAGE);
      return 0;
    }
    const command = positionals.shift();
    if (command !== "export" && command !== "import") throw new UsageError(`Unknown command: ${command ?? "(none)"}`);
    if (flags.user === undefined || flags.user === "") throw new UsageError(`${command} needs --user UID`);
    if (command === "export" && positionals.length > 0) throw new UsageError(`Unexpected argument: ${positionals[0]}`);
    if (flags.url !== undefined || flags["key-file"] !== undefined) return await throughService(command, flags, positionals, io);
    const signatures = await signatureConfig(io.env, flags["require-signature"]);
    // The audit entries it appends are signed with serve's key, as serve signs them.
    const config = parseConfig(await withServeAuditKey(io.env, flags.data));
    await checkAuditKeys(config);
    // A preview writes nothing; an export writes its audit entry, an import the case.
    const use = command === "import" && flags.preview ? { readOnly: true, existing: true } : { command, existing: true };
    const storage = await storagePorts(config, resolve(flags.data), options.runtimeStorage, use).catch((err: unknown) => {
      throw withUrlHint(err, command);
    });
    close = storage.close;
    const ports = storage.ports;
    const host = hostForDirectUse(ports.imageHost ?? imageHostOf(config, ports.clock, () => ports.images), config);
    // An import's documents keep their versions, as the service's own writes do (DATA_HISTORY).
    const histories = config.dataHistory === "off" ? undefined : createKeyHistories(ports.data, { clock: ports.clock, hash: nodeSha256Hex, digest: nodeSha256BytesHex });
    const store = portsExchangeStore({ ...ports, imageHost: host, readImage: deliveredImageReader(config, host), auditChain: { signer: auditKeys(config).signer, hash: nodeSha256Hex, maxDayBytes: config.maxAuditDayBytes }, histories });
    return command === "export" ? await runExport(flags, store, io, signatures.signer) : await runImport(flags, positionals, store, io, { verification: signatures.verification, maxImageBytes: config.maxImageBytes });
  } catch (err) {
    // After a progress bar: the failure on a line of its own.
    return commandFailure(err, io.err, { usage: USAGE, input: [ConfigError, OutputPathError, InputFileError], otherLine: (message) => `\n${terminalLine(message)}` });
  } finally {
    await close();
  }
}
