/**
 * @module
 * The `audit` commands (docs/storage.md#audit-chain), on the same stores as `serve` (files under
 * `--data` by default, or what `STORAGE` names):
 *
 *     forensic-annotation audit verify --user UID [--from DAY --to DAY] [--data DIR] [--json]
 *     forensic-annotation audit export --user UID [--from DAY --to DAY] --format json|csv|pdf [--out FILE]
 *     forensic-annotation audit sign-heads [--user UID] [--data DIR] [--force]
 *
 * `verify` exits 0 when the trail is intact, 1 when it is not (naming the first bad entry and
 * why), 2 on bad usage or configuration. Heads are checked with `AUDIT_SIGNING_KEY`'s public
 * half (configured, or the one `serve` generated under `--data`) and `AUDIT_VERIFY_KEYS`; with
 * `AUDIT_SIGNING_KEY` an unsigned head is `signature missing`.
 * `sign-heads` signs the unsigned heads of intact trails (all users, or one) with `AUDIT_SIGNING_KEY`.
 */
import { OutputPathError, writeOutputFile } from "./output-file.ts";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, parseConfig } from "../../core/config/mod.ts";
import { ServiceError } from "../../core/errors.ts";
import { auditVerifyDays, readAuditTrail, verifyStoredTrail } from "../../core/audit/trail.ts";
import { nodeSha256Hex } from "./node-sha256.ts";
import { utcDayOf } from "../../core/schemas/audit.ts";
import type { BlobStore } from "../../core/ports.ts";
import { type AuditVerification, verifyAuditTrail } from "../../core/audit/verify.ts";
import { auditKeys, checkAuditKeys } from "../../core/audit/signing-keys.ts";
import { auditExportCsv, auditExportJson } from "../../core/audit/export.ts";
import { type HeadSigningOutcome, SigningBegun, signAuditHeads } from "../../core/audit/sign-heads.ts";
import { renderAuditReport } from "../../core/pdf/audit-report.ts";
import { type RuntimeStorage, storagePorts } from "./start.ts";
import { commandIo } from "./exchange-command.ts";
import { callProblem, runningServiceClient, serviceUrl, ServiceClientError, withServeAuditKey, workerKey } from "./running-service.ts";
import { STORE_COMMAND_OPTIONS } from "./command-options.ts";
import { commandFailure, UsageError } from "./command-failure.ts";

const USAGE = `Usage:
  forensic-annotation audit verify --user UID [--from DAY --to DAY] [--data DIR | --url URL [--key-file FILE]] [--json]
  forensic-annotation audit export --user UID [--from DAY --to DAY] --format json|csv|pdf [--out FILE] [--data DIR]
  forensic-annotation audit sign-heads [--user UID] [--data DIR] [--force]

verify checks the user's hash chain and head: exit 0 intact, 1 tampered (the first
bad entry is named, and why), 2 bad usage. export writes the trail with its chain:
JSON (the days as stored and the signed head; verifyAuditTrail re-checks it offline),
CSV (one row per entry with seq and hash) or PDF (a printable report).
sign-heads, run when AUDIT_SIGNING_KEY is turned on, signs the unsigned head of
every trail (or the user's) that verifies: appends never sign over an unsigned
head, and verify calls one "signature missing" while a key is set. Once the store
holds signed heads it refuses (an unsigned head may then be a forgery) unless
--force. Exit 0 when every head is signed, 1 when a trail is tampered (not
signed), moved meanwhile (run again), or signing had begun. It writes: on files,
stop serve first.

Options:
  --user UID       the user whose trail is read (sign-heads: default every user)
  --from DAY       first UTC day (YYYY-MM-DD or an ISO date-time); default the trail's first day
  --to DAY         last UTC day; default today
  --format F       export: json, csv or pdf
  --out FILE       export: where to write (default audit-UID-FROM-TO.F in the working directory)
  --data DIR       data directory (default ./.forensic-data)
  --json           verify: print the verdict as JSON
  --url URL        verify: ask the running service at URL (its audit worker's
                   /audit/audit/verify) instead of reading the stores; without --url,
                   verify and export read the stores beside a running serve
  --key-file FILE  with --url: a file whose first line is R2_KEY_SECRET (default: the
                   environment, .env, then the key serve generated under --data)
  --force          sign-heads: sign although the store already holds signed heads
  --help           show this help

Environment (and .env): STORAGE and the storage variables as for serve;
AUDIT_SIGNING_KEY (its public half checks heads; default the key serve generated
under --data), AUDIT_VERIFY_KEYS (older keys).
`;

/** Where the command writes. */
export interface AuditCommandIo {
  /** Results (stdout). */
  out: (line: string) => void;
  /** Progress and errors (stderr); a progress bar is drawn when `isTTY` is true. */
  err: { write(text: string): unknown; isTTY?: boolean | undefined };
  /** The environment. */
  env: Readonly<Record<string, string | undefined>>;
}


/**
 * The days the command reads: as GET /audit/verify reads them, except that `--to` alone starts
 * at the trail's first day (the help's default for `--from`), not at that day itself.
 */
async function commandDays(audit: BlobStore, user: string, from: string | undefined, to: string | undefined, now: Date): Promise<string[]> {
  if (from !== undefined || to === undefined) return await auditVerifyDays(audit, user, from, to, now);
  const last = utcDayOf(to);
  if (last === undefined) throw ServiceError.validation("--to must be an ISO 8601 date or date-time");
  // The whole trail's days up to the last one asked for (or the trail's own last, if earlier), which ends the range.
  const whole = await auditVerifyDays(audit, user, undefined, undefined, now);
  const end = whole[whole.length - 1]! < last ? whole[whole.length - 1]! : last;
  return [...whole.filter((day) => day < end), end];
}

// Fewer entries verify in an instant: no progress bar.
const LONG_TRAIL = 2_000;

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        ...STORE_COMMAND_OPTIONS,
        user: { type: "string" },
        from: { type: "string" },
        to: { type: "string" },
        format: { type: "string" },
        out: { type: "string" },
        force: { type: "boolean", default: false },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

function progressBar(err: AuditCommandIo["err"]): { show(done: number, total: number): void; end(): void } {
  let drawn = false;
  return {
    show(done, total) {
      if (err.isTTY !== true || total < LONG_TRAIL) return;
      const width = 30;
      const filled = Math.round((done / total) * width);
      err.write(`\rverifying [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total}\x1b[K`);
      drawn = true;
    },
    end() {
      if (drawn) err.write("\n");
    },
  };
}

/** The verdict in words: one line, then a line per bad day. */
export function describeVerification(result: AuditVerification): string[] {
  const range = `${result.from ?? "-"} to ${result.to ?? "-"}`;
  const head = result.head === null ? "no head" : `head seq ${result.head.seq}, signature ${result.head.signature}${result.head.unsignedUntil === undefined ? "" : ` (entries up to seq ${result.head.unsignedUntil} appended unsigned)`}${result.head.pending ? ", newest entry still in the head" : ""}`;
  const counts = `${result.entries} entries${result.unchained > 0 ? `, ${result.unchained} unchained (stored before the chain began)` : ""}`;
  if (result.valid && result.entries === 0 && result.unchained === 0 && result.head === null) {
    return [`audit trail of ${result.userId}, ${range}: none stored (no entries, no head: nothing to check; a trail removed whole, head included, reads the same)`];
  }
  if (result.valid) return [`audit trail of ${result.userId}, ${range}: intact (${counts}; ${head})`];
  const bad = result.firstBad!;
  return [
    `audit trail of ${result.userId}, ${range}: TAMPERED (${counts}; ${head})`,
    `first bad entry: seq ${bad.seq} on ${bad.date}${bad.index === undefined ? "" : ` (position ${bad.index})`}: ${bad.reason}: ${bad.message}`,
    ...result.days.filter((day) => !day.valid).map((day) => `  ${day.date}: ${day.reason} at seq ${day.firstBadSeq}: ${day.message ?? ""}`),
  ];
}

/** `audit sign-heads`: signs the unsigned heads of intact trails; 0 when all are signed, 1 otherwise. */
async function signHeads(
  flags: ReturnType<typeof parse>["values"],
  io: AuditCommandIo,
  runtimeStorage: RuntimeStorage | undefined,
  onOpen: (close: () => Promise<void>) => void,
): Promise<number> {
  if (flags.from !== undefined || flags.to !== undefined || flags.format !== undefined || flags.out !== undefined || flags.json) {
    throw new UsageError("audit sign-heads takes only --user, --data and --force");
  }
  if (flags.user === "") throw new UsageError("--user needs a user id");
  const config = parseConfig(await withServeAuditKey(io.env, flags.data));
  if (config.auditSigningKey === undefined) throw new UsageError("audit sign-heads needs AUDIT_SIGNING_KEY (the key serve signs heads with; none is set, nor generated by serve under --data)");
  await checkAuditKeys(config);
  const keys = auditKeys(config);
  const storage = await storagePorts(config, resolve(flags.data), runtimeStorage, { existing: true, command: "audit sign-heads" });
  onOpen(storage.close);
  const { audit, clock } = storage.ports;
  let failed = 0;
  let done: HeadSigningOutcome[];
  try {
    done = await signAuditHeads(audit, { signer: keys.signer!, publicKeys: await keys.publicKeys() }, clock.now(), {
      force: flags.force,
      ...(flags.user === undefined ? {} : { users: [flags.user] }),
      onUser: ({ userId, outcome, verification, error }) => {
        const seq = verification?.head?.seq;
        const bad = verification?.firstBad;
        if (outcome === "signed") io.out(`${userId}: signed (head seq ${seq}; entries up to ${seq} were appended under unsigned heads)`);
        else if (outcome === "already signed") io.out(`${userId}: already signed (head seq ${seq})`);
        else if (outcome === "no head") io.out(`${userId}: no head (no chained entry): nothing to sign`);
        else if (outcome === "changed") io.out(`${userId}: not signed: the head moved while its trail was read; run again`);
        else if (error !== undefined) io.out(`${userId}: not signed: ${error}`);
        else io.out(`${userId}: TAMPERED, not signed: seq ${bad?.seq} on ${bad?.date}: ${bad?.reason}: ${bad?.message}`);
        if (outcome === "changed" || outcome === "tampered" || outcome === "unverifiable") failed++;
      },
    });
  } catch (err) {
    if (!(err instanceof SigningBegun)) throw err;
    io.err.write(`audit sign-heads: ${err.message}\n`);
    return 1;
  }
  if (done.length === 0) io.out("no audit heads stored: nothing to sign");
  return failed === 0 ? 0 : 1;
}

/** `audit verify --url`: the running service's audit worker verifies; printed as without --url. */
async function verifyThroughService(flags: ReturnType<typeof parse>["values"], io: AuditCommandIo): Promise<number> {
  if (flags.url === undefined) throw new UsageError("--key-file goes with --url");
  const url = serviceUrl(flags.url);
  const dataKey = await workerKey("R2_KEY_SECRET", { keyFile: flags["key-file"], env: io.env, dataDir: resolve(flags.data) });
  if (dataKey === undefined) throw new ConfigError(["R2_KEY_SECRET: the audit worker's key is needed with --url (set it, or give --key-file)"]);
  const adminKey = io.env.ADMIN_AUTH === "" ? undefined : io.env.ADMIN_AUTH;
  const client = runningServiceClient(url, { dataKey, ...(adminKey === undefined ? {} : { adminKey }) });
  const user = flags.user!;
  let result: AuditVerification;
  try {
    // --to alone starts at the trail's first day, as without --url: the whole trail's verdict names it.
    const from = flags.from ?? (flags.to === undefined ? undefined : (await client.audit.verify(user)).from ?? flags.to);
    result = await client.audit.verify(user, { ...(from === undefined ? {} : { startDate: from }), ...(flags.to === undefined ? {} : { endDate: flags.to }) });
  } catch (err) {
    if (!(err instanceof ServiceClientError)) throw err;
    // The service's check of the range names the query's fields; here the user typed --from and --to.
    if (err.status === 400) throw new UsageError((err.error?.message ?? err.message).replaceAll("startDate", "--from").replaceAll("endDate", "--to"));
    io.err.write(`${callProblem(err, url)}\n`);
    return 1;
  }
  if (flags.json) io.out(JSON.stringify(result, null, 2));
  else for (const line of describeVerification(result)) io.out(line);
  return result.valid ? 0 : 1;
}

/**
 * Runs `audit verify ...`, `audit export ...` or `audit sign-heads ...` (argv without the program name, starting with
 * `audit`) and resolves with the exit code: 0 intact, written or all signed, 1 tampered or failed, 2 bad usage.
 */
export async function runAuditCommand(
  argv: readonly string[],
  options: { runtimeStorage?: RuntimeStorage | undefined; io?: Partial<AuditCommandIo> | undefined } = {},
): Promise<number> {
  const io: AuditCommandIo = commandIo(options.io);
  let close = async () => {};
  try {
    const { values: flags, positionals } = parse(argv);
    if (flags.help) {
      io.out(USAGE);
      return 0;
    }
    if (positionals[0] !== "audit") throw new UsageError(`Unknown command: ${positionals[0] ?? "(none)"}`);
    const command = positionals[1];
    if (command !== "verify" && command !== "export" && command !== "sign-heads") {
      throw new UsageError(`Unknown audit command: ${command ?? "(none)"} (verify, export or sign-heads)`);
    }
    if (positionals.length > 2) throw new UsageError(`Unexpected argument: ${positionals[2]}`);
    if (flags.force && command !== "sign-heads") throw new UsageError("--force is an option of audit sign-heads only");
    if (command === "sign-heads" && (flags.url !== undefined || flags["key-file"] !== undefined)) {
      throw new UsageError("--url: audit sign-heads writes the stored heads, which no route does; run it on the stores (with the file store, once serve stopped)");
    }
    if (command === "sign-heads") {
      const code = await signHeads(flags, io, options.runtimeStorage, (closing) => (close = closing));
      return code;
    }
    if (flags.user === undefined || flags.user === "") throw new UsageError(`audit ${command} needs --user UID`);
    const format = flags.format;
    if (command === "export" && format !== "json" && format !== "csv" && format !== "pdf") {
      throw new UsageError("audit export needs --format json, csv or pdf");
    }
    if (flags.url !== undefined || flags["key-file"] !== undefined) {
      if (command !== "verify") {
        throw new UsageError(`--url: audit ${command} reads the stored days and signed head, which no route serves; run it without --url (export only reads: it runs beside serve)`);
      }
      return await verifyThroughService(flags, io);
    }
    const config = parseConfig(await withServeAuditKey(io.env, flags.data));
    await checkAuditKeys(config);
    const keys = auditKeys(config);
    // Reads only: beside a running serve, which holds the data folder's write lock.
    const storage = await storagePorts(config, resolve(flags.data), options.runtimeStorage, { readOnly: true, existing: true });
    close = storage.close;
    const { audit, clock } = storage.ports;
    const user = flags.user;
    let days: string[];
    try {
      days = await commandDays(audit, user, flags.from, flags.to, clock.now());
    } catch (err) {
      // The range check names the HTTP query's fields; here the user typed --from and --to.
      if (err instanceof ServiceError) throw new UsageError(err.message.replaceAll("startDate", "--from").replaceAll("endDate", "--to"));
      throw err;
    }
    const bar = progressBar(io.err);
    const verifying = { publicKeys: await keys.publicKeys(), requireSignature: keys.signer !== undefined };
    if (command === "verify") {
      // Day by day, one entry at a time: a day of any size is verified in bounded memory.
      const result = await verifyStoredTrail(audit, user, days, { ...verifying, hash: nodeSha256Hex, onProgress: (done, total) => bar.show(done, total) });
      bar.end();
      if (flags.json) io.out(JSON.stringify(result, null, 2));
      else for (const line of describeVerification(result)) io.out(line);
      return result.valid ? 0 : 1;
    }
    const input = await readAuditTrail(audit, user, days);
    const result = await verifyAuditTrail(input, { ...verifying, onProgress: (done, total) => bar.show(done, total) });
    bar.end();
    const path = resolve(flags.out ?? `audit-${user}-${result.from ?? "none"}-${result.to ?? "none"}.${format}`);
    const bytes = format === "json"
      ? new TextEncoder().encode(`${JSON.stringify(auditExportJson(input, result, clock.now()), null, 2)}\n`)
      : format === "csv"
      ? new TextEncoder().encode(auditExportCsv(input))
      : await renderAuditReport(input, result, { generatedAt: clock.now() });
    await writeOutputFile(path, (write) => write(bytes));
    for (const line of describeVerification(result)) io.err.write(`${line}\n`);
    io.out(path);
    return 0;
  } catch (err) {
    return commandFailure(err, io.err, { usage: USAGE, input: [ConfigError, OutputPathError] });
  } finally {
    await close();
  }
}
