/**
 * @module
 * `backup --url` and `restore --url` (docs/operations.md#backups-through-a-running-service): the
 * running service's `GET /data/backup` saved to `--out` (read through as it arrives, so a body
 * that breaks off or does not check out leaves no archive), and an archive sent to
 * `POST /data/restore`, whose lines are the restore's phases, progress and outcome.
 */
import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { ConfigError } from "../../core/config/mod.ts";
import { ArchiveDamaged, type ArchiveProgress, type BackupManifest, readArchive, type RestoreLine } from "../../core/backup/mod.ts";
import { nodeSha256 } from "./node-sha256.ts";
import { writeOutputFile } from "./output-file.ts";
import { type KeySources, serviceUrl, workerKey } from "./running-service.ts";

/** Where the command finds the service (`--url`) and its keys (as every --url command finds them). */
export interface ServiceTarget extends KeySources {
  /** `--url`. */
  url: string;
}

/** The base URL and the headers of the data key and the admin key; a ConfigError naming what is missing. */
async function reach(target: ServiceTarget): Promise<{ base: string; headers: Record<string, string> }> {
  const base = serviceUrl(target.url);
  const dataKey = await workerKey("R2_KEY_SECRET", target);
  const adminKey = target.env.ADMIN_AUTH;
  if (dataKey === undefined) throw new ConfigError(["R2_KEY_SECRET: the data worker's key is needed with --url (set it, or give --key-file)"]);
  if (adminKey === undefined || adminKey === "") throw new ConfigError(["ADMIN_AUTH: backup and restore --url need the admin key (the service backs up and restores for its administrator only)"]);
  return { base, headers: { "X-Custom-Auth-Key": dataKey, "X-Admin-Key": adminKey } };
}

/** A call that got no answer, or a refusal, in one line. */
async function called(base: string, path: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, init);
  } catch (err) {
    throw new Error(`no answer from ${base}: ${err instanceof Error ? err.message : String(err)} (is serve running there?)`);
  }
  if (response.ok) return response;
  const text = await response.text().catch(() => "");
  let message = text;
  try {
    message = (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    // not the standard body: shown as it is
  }
  const hint = response.status === 401 || response.status === 403 ? "; check R2_KEY_SECRET (or --key-file) and ADMIN_AUTH" : response.status === 404 ? " (a service without backups over HTTP: an older version, or not under serve)" : "";
  throw new Error(`${base}${path} answered ${response.status}: ${message}${hint}`);
}

/** What a backup through the service wrote. */
export interface FetchedBackup {
  manifest: BackupManifest;
  /** The keys the service generated, which the archive does not hold (its `Generated-Secrets`). */
  generatedSecrets: string[];
}

/** Saves the service's backup to `path`, reading it through as it arrives; no file when it breaks off or does not check out. */
export async function backupThroughService(target: ServiceTarget, path: string, options: { decrypt: boolean; onProgress: (progress: ArchiveProgress) => void }): Promise<FetchedBackup> {
  const { base, headers } = await reach(target);
  const response = await called(base, `/data/backup${options.decrypt ? "?decrypt=true" : ""}`, { headers });
  const body = response.body;
  if (body === null) throw new Error(`${base}/data/backup answered no archive`);
  const generatedSecrets = (response.headers.get("generated-secrets") ?? "").split(",").map((name) => name.trim()).filter((name) => name !== "");
  let manifest: BackupManifest | undefined;
  await writeOutputFile(path, async (write) => {
    // Each chunk goes to the file and to the reader that checks the framing and every object's hash.
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const checking = readArchive(readable, nodeSha256, async () => {}, options.onProgress);
    const checker = writable.getWriter();
    checking.catch(() => undefined);
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        await write(chunk);
        await checker.write(chunk);
      }
      await checker.close();
    } catch (err) {
      await checker.abort(err).catch(() => undefined);
      // The checker's own verdict first, when it is why the writes stopped.
      const verdict = await checking.then(() => undefined, (failure: unknown) => failure);
      throw verdict instanceof ArchiveDamaged ? verdict : err;
    }
    manifest = (await checking).manifest;
  }).catch((err: unknown) => {
    if (err instanceof ArchiveDamaged) throw new Error(`the service's archive does not check out (${err.message}): nothing was saved`);
    throw err;
  });
  return { manifest: manifest!, generatedSecrets };
}

/** What a restore through the service did. */
export type RestoredThroughService = Extract<RestoreLine, { restored: unknown }>["restored"];

/** A restore through the service refused the archive (nothing written). */
export class RemoteRestoreRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RemoteRestoreRefusal";
  }
}

/** Sends the archive at `path` to the service's restore and follows its lines to the outcome. */
export async function restoreThroughService(
  target: ServiceTarget,
  path: string,
  options: { force: boolean; resume: boolean; onPhase: (phase: string) => void; onProgress: (progress: ArchiveProgress) => void },
): Promise<RestoredThroughService> {
  const { base, headers } = await reach(target);
  const query = [options.force ? "force=true" : "", options.resume ? "resume=true" : ""].filter((part) => part !== "").join("&");
  const archive = Readable.toWeb(createReadStream(path, { highWaterMark: 1024 * 1024 })) as unknown as ReadableStream<Uint8Array>;
  const response = await called(base, `/data/restore${query === "" ? "" : `?${query}`}`, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/octet-stream" },
    body: archive,
    // A streamed request body (fetch needs it said).
    duplex: "half",
  } as RequestInit);
  const decoder = new TextDecoder();
  let pending = "";
  const take = (text: string): RestoredThroughService | undefined => {
    if (text.trim() === "") return undefined;
    const line = JSON.parse(text) as RestoreLine;
    if ("phase" in line) options.onPhase(line.phase);
    else if ("objects" in line) options.onProgress(line);
    else if ("refused" in line) throw new RemoteRestoreRefusal(line.refused);
    else if ("failed" in line) throw new Error(`the restore failed on ${base}: ${line.failed}`);
    else if ("restored" in line) return line.restored;
    return undefined;
  };
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = pending.indexOf("\n")) !== -1) {
      const done = take(pending.slice(0, end));
      pending = pending.slice(end + 1);
      if (done !== undefined) return done;
    }
  }
  const done = take(pending);
  if (done !== undefined) return done;
  throw new Error(`${base} ended the restore's answer without its outcome (the connection broke): run it again with --resume`);
}
