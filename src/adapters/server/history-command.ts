/**
 * @module
 * `forensic-annotation history prune` (docs/operations.md#history-retention): removes the bytes
 * of versions older than `HISTORY_RETENTION_DAYS`, never a key's newest version nor a version of
 * a case on legal hold, with one `history-prune` entry per key in its owner's trail. On the
 * stores `STORAGE` names (the file store's folder lock refuses a folder `serve` holds), or with
 * `--url` through a running service's `POST /data/history/prune`.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, parseConfig } from "../../core/config/mod.ts";
import { auditKeys } from "../../core/audit/signing-keys.ts";
import { serviceAuditLog } from "../../core/audit/service-events.ts";
import { legalHoldStore } from "../../core/users/legal-holds.ts";
import { pruneRetainedHistories } from "../../core/users/history-retention.ts";
import type { PruneSummary } from "../../core/history/prune-history.ts";
import { commandIo, type ExchangeCommandIo } from "./exchange-command.ts";
import { nodeSha256Hex } from "./node-sha256.ts";
import { type RuntimeStorage, storagePorts } from "./start.ts";
import { STORE_COMMAND_OPTIONS } from "./command-options.ts";
import { commandFailure, UsageError } from "./command-failure.ts";
import { type KeySources, withServeAuditKey, workerKey } from "./running-service.ts";

const USAGE = `Usage: forensic-annotation history prune [options]

Removes the bytes of data-key versions written more than HISTORY_RETENTION_DAYS
days ago (see docs/operations.md). A key's newest version is never pruned, nor
any version of a case on legal hold; each version keeps its record, so every
history still verifies. One history-prune entry per key goes to its owner's
audit trail.

Options:
  --data DIR    data directory (default ./.forensic-data), as for serve; with
                the file store stop serve first (or use --url)
  --url URL     prune through a running service instead (POST /data/history/prune
                with R2_KEY_SECRET and ADMIN_AUTH from the environment)
  --key-file F  with --url: the data key from the first line of F instead of
                R2_KEY_SECRET (else the environment, .env, then the key serve
                generated under --data)
  --json        print the result as JSON
  --help        show this help
`;

/** Options of {@link runHistoryCommand}. */
export interface HistoryCommandOptions {
  /** Output and environment (defaults: console, stderr, `.env` under the process environment). */
  io?: Partial<ExchangeCommandIo>;
  /** Stores only one runtime offers (Deno KV under Deno), as for `serve`. */
  runtimeStorage?: RuntimeStorage | undefined;
  /** The fetch of `--url` (default the global one). */
  fetch?: typeof fetch;
}


/** A running service's answer to `POST /data/history/prune`. */
async function pruneOverHttp(url: string, sources: KeySources, send: typeof fetch): Promise<PruneSummary & { retentionDays: number }> {
  // The data key as every --url command finds it (--key-file, the environment, serve's secrets.json); the admin key is configured, never generated.
  const dataKey = await workerKey("R2_KEY_SECRET", sources);
  const adminKey = sources.env.ADMIN_AUTH;
  if (dataKey === undefined || adminKey === undefined || adminKey === "") {
    throw new ConfigError(["R2_KEY_SECRET, ADMIN_AUTH: history prune --url sends both (the data key and the admin key of the service)"]);
  }
  let target: URL;
  try {
    target = new URL(`${url.replace(/\/+$/, "")}/data/history/prune`);
  } catch {
    throw new UsageError(`--url is not a URL: ${url}`);
  }
  const response = await send(target, { method: "POST", headers: { "X-Custom-Auth-Key": dataKey, "X-Admin-Key": adminKey } });
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      // not the standard body: shown as it is
    }
    throw new Error(`${target.href} answered ${response.status}: ${message}`);
  }
  return JSON.parse(text) as PruneSummary & { retentionDays: number };
}

/** Runs `history prune` (argv without the program name); resolves with the exit code (0 done, 1 failed, 2 usage or configuration). */
export async function runHistoryCommand(argv: readonly string[], options: HistoryCommandOptions = {}): Promise<number> {
  const { out, err, env } = commandIo(options.io);
  let close = async () => {};
  try {
    let parsed;
    try {
      parsed = parseArgs({
        args: [...argv],
        allowPositionals: true,
        options: STORE_COMMAND_OPTIONS,
      });
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const { values, positionals } = parsed;
    if (values.help) {
      out(USAGE);
      return 0;
    }
    if (positionals[1] !== "prune" || positionals.length > 2) throw new UsageError(`Unknown history command: ${positionals.slice(1).join(" ") || "(none)"}`);
    let result: PruneSummary & { retentionDays: number };
    let where: string;
    if (values.url !== undefined) {
      result = await pruneOverHttp(values.url, { keyFile: values["key-file"], env, dataDir: resolve(values.data) }, options.fetch ?? fetch);
      where = values.url;
    } else {
      // The audit entries it appends are signed with serve's key, as serve signs them.
      const config = parseConfig(await withServeAuditKey(env, values.data));
      const retentionDays = config.historyRetentionDays;
      if (retentionDays === undefined) throw new ConfigError(["HISTORY_RETENTION_DAYS: not set, so every version is kept (set it to the days versions are kept)"]);
      const storage = await storagePorts(config, resolve(values.data), options.runtimeStorage, { existing: true, command: "history prune" });
      close = storage.close;
      const { data, users, audit, clock } = storage.ports;
      const log = serviceAuditLog(audit, clock, { signer: auditKeys(config).signer, hash: nodeSha256Hex, maxDayBytes: config.maxAuditDayBytes, reserve: true });
      result = { retentionDays, ...(await pruneRetainedHistories({ data, holds: legalHoldStore(users), log, clock, actor: { kind: "admin" } }, retentionDays)) };
      where = storage.description;
    }
    if (values.json) {
      out(JSON.stringify(result, null, 2));
      return 0;
    }
    for (const { key, versions } of result.pruned) out(`${key}: pruned version(s) ${versions.join(", ")}`);
    for (const key of result.held) out(`${key}: on legal hold, kept whole`);
    out(`pruned ${result.pruned.length} of ${result.histories} histories (versions written before ${result.cutoff}, HISTORY_RETENTION_DAYS=${result.retentionDays}; ${where})`);
    return 0;
  } catch (error) {
    return commandFailure(error, err, {
      usage: USAGE,
      input: [ConfigError],
      otherLine: (message) => `${message}\nrun the command again to resume once this is fixed (what was pruned stays pruned)`,
    });
  } finally {
    await close();
  }
}
