/**
 * @module
 * `GET /data/backup` and `POST /data/restore` (docs/operations.md#backups-through-a-running-service):
 * the backup and restore of docs/operations.md#backups through a running service, for the
 * administrator (the data key and `X-Admin-Key`, as `POST /data/history/prune`). The archive is
 * the one `backup` writes (writeBackup), streamed; an uploaded one is spooled, then checked
 * whole and written by restoreArchive, which reads it twice.
 */
import * as z from "zod";
import { queryFlag } from "../schemas/query-flag.ts";
import type { Context } from "hono";
import type { BlobStore, Bytes, Clock } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { type AuditKeyConfig, auditKeys } from "../audit/signing-keys.ts";
import { exchangeSignatures } from "../exchange/signing-config.ts";
import { createRoute } from "../http/openapi-app.ts";
import { tagged } from "../http/openapi-tags.ts";
import { keyedSecurity } from "../http/credentials-doc.ts";
import { answerWith, errorResponses, type WorkerApp, type WorkerEnv } from "../http/worker-app.ts";
import { readQuery } from "../http/body.ts";
import { requireAdminKey } from "../http/administrator.ts";
import { ServiceError } from "../errors.ts";
import { encryptedBlobStore, type Keyring, openValue } from "../encryption/mod.ts";
import { spoolArchive, type SpooledArchive } from "../exchange/package/spooled-archive.ts";
import type { Sha256Factory } from "../backup/archive-format.ts";
import { storesOf } from "../backup/stores.ts";
import { backupStream, restoreLines } from "../backup/streams.ts";

/** What a service needs to back up and restore its stores over HTTP; `serve` passes it (docs/operations.md). */
export interface BackupPorts {
  /**
   * Every store as it holds objects (`raw`: sealed under encryption at rest) and as the service
   * reads them (`service`), the mail outbox among them; the same object twice without encryption.
   */
  stores: { raw: object; service: object };
  /** `DATA_ENCRYPTION_KEYS` when the stores are encrypted at rest: a backup stays sealed, heads are opened with it. */
  keyring?: Keyring | undefined;
  /** Incremental SHA-256 (the runtime's native one under `serve`). */
  sha256: Sha256Factory;
  /** Where an uploaded archive is kept while it is restored (never one of the stores restored into). */
  spool: BlobStore;
  /** The names of the keys `serve` generated (`secrets.json`), which no archive holds; told in `Generated-Secrets`. */
  generatedSecrets?: () => Promise<readonly string[]>;
}

/** What the routes need besides {@link BackupPorts}. */
export interface BackupRoutesDeps {
  backup: BackupPorts;
  config: Partial<Pick<ServiceConfig, "exportSigningKey" | "exportVerifyKeys" | "exportRequireSignature">> & AuditKeyConfig;
  clock: Clock;
  auditHash?: ((text: string) => string) | undefined;
}

const BackupQuery = z.object({ decrypt: queryFlag("`true`: objects of encrypted stores opened (plaintext), as `backup --decrypt`") });
const RestoreQuery = z.object({
  force: queryFlag("`true`: write into stores that hold data"),
  resume: queryFlag("`true`: finish an interrupted restore (objects there as archived are left alone)"),
});

const backupRoute = createRoute({
  tags: tagged("data"),
  method: "get",
  path: "/backup",
  summary: "A backup of every store (administrators only)",
  description:
    "The data key and `X-Admin-Key`. The archive `forensic-annotation backup` writes (docs/operations.md#the-archive-format), streamed as it is read from the stores while the service runs; sealed under encryption at rest unless `decrypt=true`; the manifest signed with `EXPORT_SIGNING_KEY` when set. A body that breaks off is a failed backup. `Generated-Secrets` names the keys serve generated, which the archive does not hold.",
  operationId: "backup",
  security: keyedSecurity("dataKey"),
  request: { query: BackupQuery },
  responses: {
    200: { description: "The archive", content: { "application/octet-stream": { schema: z.string().describe("The archive's bytes") } } },
    ...errorResponses({ 403: "Bad key, or not an administrator" }),
  },
});

const RestoreLineSchema = z.string().describe(
  'One JSON object a line: `{"phase":"checking"|"writing"|"verifying"}`, `{"objects":N,"bytes":N}` (progress), then one of `{"restored":{objects,written,alreadyThere,counts,trails:{verified,total}}}`, `{"refused":"why"}` (nothing written) or `{"failed":"why"}`',
);

const restoreRoute = createRoute({
  tags: tagged("data"),
  method: "post",
  path: "/restore",
  summary: "Restore an archive into the stores (administrators only)",
  description:
    "The data key and `X-Admin-Key`; the body is an archive of `forensic-annotation backup`. It is kept aside, checked whole (objects, manifest, signature, every audit trail) and written as `forensic-annotation restore` does: refused, writing nothing, when it does not verify or (without `force`/`resume`) when the stores hold data. The answer is 200 once the archive has arrived and tells the phases, the progress and the outcome as lines.",
  operationId: "restore",
  security: keyedSecurity("dataKey"),
  request: { query: RestoreQuery, body: { required: true, content: { "application/octet-stream": { schema: z.string().describe("The archive's bytes") } } } },
  responses: {
    200: { description: "The restore's lines", content: { "application/x-ndjson": { schema: RestoreLineSchema } } },
    ...errorResponses({ 400: "No body", 403: "Bad key, or not an administrator" }),
  },
});

/** The spooled archive read front to back in 1 MiB pieces. */
function readFromStart(archive: SpooledArchive): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (offset >= archive.size) return controller.close();
      const piece = new Uint8Array(Math.min(1024 * 1024, archive.size - offset));
      const read = await archive.read(offset, piece);
      offset += read;
      controller.enqueue(piece.subarray(0, read));
    },
  });
}

const day = (date: Date): string => date.toISOString().slice(0, 10);

/** Registers `GET /backup` and `POST /restore` on a data worker's app (after its access control). */
export function registerBackupRoutes(app: WorkerApp, deps: BackupRoutesDeps): void {
  const { backup, config, clock } = deps;
  let signatures: ReturnType<typeof exchangeSignatures> | undefined;
  const signaturesOf = () => signatures ??= exchangeSignatures({ signingKey: config.exportSigningKey, verifyKeys: config.exportVerifyKeys, requireSignature: config.exportRequireSignature });
  const keyring = backup.keyring;

  app.openapi(backupRoute, async (c) => {
    requireAdminKey(c, "A backup");
    const query = readQuery(c, BackupQuery);
    const sealed = keyring !== undefined && query.decrypt !== "true";
    const now = clock.now();
    const { signer } = await signaturesOf();
    const names = (await backup.generatedSecrets?.().catch(() => [])) ?? [];
    const body = backupStream(storesOf(sealed ? backup.stores.raw : backup.stores.service), {
      sha256: backup.sha256,
      now,
      sealed,
      ...(keyring === undefined ? {} : { openHead: (key: string, stored: Bytes) => openValue(keyring, key, stored) }),
      signer,
    });
    return answerWith(c as Context<WorkerEnv>, body, 200, "application/octet-stream", {
      "Content-Disposition": `attachment; filename="backup-${day(now)}.fab"`,
      "Cache-Control": "no-store",
      ...(names.length > 0 ? { "Generated-Secrets": names.join(", ") } : {}),
    }) as never;
  });

  app.openapi(restoreRoute, async (c) => {
    requireAdminKey(c, "A restore");
    const query = readQuery(c, RestoreQuery);
    const body = c.req.raw.body;
    if (body === null) throw ServiceError.validation("The body is the archive to restore");
    // No admin-key entry: the restore makes the audit store the archive's, and an entry of its own
    // would be one the archive lacks (written now, the target holds data; after, a --resume writes the archived trail over it).
    c.set("audited", true);
    const spooled = await spoolArchive(backup.spool, body, Number.MAX_SAFE_INTEGER);
    const { verification } = await signaturesOf();
    const lines = restoreLines(() => readFromStart(spooled), {
      raw: storesOf(backup.stores.raw),
      service: storesOf(backup.stores.service),
      encrypted: keyring !== undefined,
    }, {
      sha256: backup.sha256,
      signature: verification,
      publicKeys: await auditKeys(config).publicKeys(),
      requireSignature: false,
      ...(deps.auditHash === undefined ? {} : { hash: deps.auditHash }),
      now: clock.now(),
      ...(keyring === undefined ? {} : { openAudit: (store: BlobStore) => encryptedBlobStore(store, keyring, { appendLog: true, store: "audit" }) }),
      force: query.force === "true",
      resume: query.resume === "true",
    }, () => spooled.discard());
    return answerWith(c as Context<WorkerEnv>, lines, 200, "application/x-ndjson", { "Cache-Control": "no-store" }) as never;
  });
}
