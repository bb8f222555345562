/**
 * @module
 * `restoreArchive`: an archive written back into the stores of a target
 * (docs/operations.md#restore). The archive is read twice: first checked whole (objects,
 * manifest, signature, every audit trail), writing nothing when it does not check out; then
 * written. With `resume`, an object the target already holds as archived is not written again,
 * so a restore cut short anywhere (the process killed) finishes by running it again.
 */
import type { Bytes } from "../ports.ts";
import { auditVerifyDays, verifyStoredTrail } from "../audit/trail.ts";
import type { AuditVerification } from "../audit/verify.ts";
import { sameBytes } from "../encoding/same-bytes.ts";
import { ArchiveDamaged } from "./archive-format.ts";
import { type ArchiveVerdict, checkArchive, type CheckArchiveOptions, readArchive } from "./archive-check.ts";
import type { BackupManifest } from "./manifest.ts";
import { isCanary, kindOf, type NamedStore } from "./stores.ts";
import type { ArchiveProgress } from "./backup.ts";

const decoder = new TextDecoder();

/** Objects above this size are written as a stream (where the store takes one) and compared by hash on resume. */
const WHOLE_OBJECT_BYTES = 8 * 1024 * 1024;
/** Small objects written at once (so at most this many times WHOLE_OBJECT_BYTES held). */
const WRITES_IN_FLIGHT = 16;

/** A restore that writes nothing: the archive does not verify, or the target is not fit for it. */
export class RestoreRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreRefusal";
  }
}

/** Where a restore writes. */
export interface RestoreTarget {
  /** The stores as they are (a sealed archive is written here, as it was read). */
  raw: readonly NamedStore[];
  /** The stores as the service uses them (a plain archive is written here: sealed when the target encrypts); trails are checked here. */
  service: readonly NamedStore[];
  /** The target opens sealed objects (`DATA_ENCRYPTION_KEYS` set). */
  encrypted: boolean;
}

/** Options of {@link restoreArchive}. */
export interface RestoreOptions extends CheckArchiveOptions {
  /** Writes into a target that holds data. */
  force?: boolean;
  /** Finishes an interrupted restore: objects already there as archived are left alone. */
  resume?: boolean;
  /** Told which phase begins (`checking`, `writing`, `verifying`). */
  onPhase?: (phase: "checking" | "writing" | "verifying") => void;
  /** Told after each object written or found there. */
  onWritten?: (progress: ArchiveProgress & { archiveBytes: number }) => void;
}

/** What a restore did. */
export interface RestoreSummary {
  manifest: BackupManifest;
  /** Objects written. */
  written: number;
  /** Objects found in the target as archived (with `resume`). */
  alreadyThere: number;
  /** Objects per kind in the target afterwards. */
  counts: Record<string, number>;
  /** Each trail of the archive, verified on the target. */
  trails: AuditVerification[];
}

/** Objects per kind in `stores` (canaries left out). */
export async function countObjects(stores: readonly NamedStore[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const named of stores) {
    for (const key of await named.store.list("")) {
      if (isCanary(named.kind, key)) continue;
      const kind = kindOf(named.name, key);
      counts[kind] = (counts[kind] ?? 0) + 1;
    }
  }
  return counts;
}

/** The first store of `stores` that holds an object (canaries aside), or undefined when all are empty. */
async function firstNonEmpty(stores: readonly NamedStore[]): Promise<string | undefined> {
  for (const named of stores) {
    const keys = (await named.store.list("")).filter((key) => !isCanary(named.kind, key));
    if (keys.length > 0) return `${named.name} holds ${keys.length} object${keys.length === 1 ? "" : "s"}`;
  }
  return undefined;
}

async function joined(pieces: AsyncIterable<Bytes>, size: number): Promise<Bytes> {
  const out = new Uint8Array(size);
  let at = 0;
  for await (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/** Checks the archive from `open()` and writes it into `target`; refuses (writing nothing) when it does not check out. */
export async function restoreArchive(open: () => ReadableStream<Uint8Array>, target: RestoreTarget, options: RestoreOptions): Promise<RestoreSummary> {
  options.onPhase?.("checking");
  const largeHashes = new Map<number, string>();
  let verdict: ArchiveVerdict;
  try {
    verdict = await checkArchive(open(), {
      ...options,
      onChecked: (header, sha256, index) => {
        if (header.size > WHOLE_OBJECT_BYTES) largeHashes.set(index, sha256);
      },
    });
  } catch (err) {
    if (err instanceof ArchiveDamaged) throw new RestoreRefusal(`the archive does not verify: ${err.message}`);
    throw err;
  }
  if (!verdict.valid) throw new RestoreRefusal(`the archive does not verify: ${verdict.problem}`);
  const { manifest } = verdict;
  if (manifest.sealed && !target.encrypted) {
    throw new RestoreRefusal("the archive is sealed (encryption at rest): the target needs DATA_ENCRYPTION_KEYS holding the keys that sealed it");
  }
  const stores = new Map((manifest.sealed ? target.raw : target.service).map((named) => [named.name, named]));
  const missing = Object.keys(manifest.stores).filter((name) => stores.get(name)?.kind !== manifest.stores[name]);
  if (missing.length > 0) throw new RestoreRefusal(`the target has no ${missing.join(", ")} store of the archive's kind`);
  if (options.force !== true && options.resume !== true) {
    const holding = await firstNonEmpty(target.raw);
    if (holding !== undefined) throw new RestoreRefusal(`the target holds data (${holding}): restore into empty stores, or pass --force to write over it (--resume to finish an interrupted restore)`);
  }

  options.onPhase?.("writing");
  let written = 0;
  let alreadyThere = 0;
  let index = 0;
  // Small objects are written several at a time (each key is written once, so their order does not matter).
  const writing = new Set<Promise<void>>();
  let failed: { error: unknown } | undefined;
  const settle = async (upTo: number) => {
    while (writing.size > upTo) await Promise.race(writing);
    if (failed !== undefined) throw failed.error;
  };
  const inFlight = (write: () => Promise<void>) => {
    const done: Promise<void> = write().catch((error: unknown) => void (failed ??= { error })).finally(() => writing.delete(done));
    writing.add(done);
  };
  await readArchive(open(), options.sha256, async (header, pieces) => {
    const at = index++;
    const named = stores.get(header.store)!;
    if (named.kind === "kv") {
      const text = decoder.decode(await joined(pieces, header.size));
      await settle(WRITES_IN_FLIGHT - 1);
      inFlight(async () => {
        if (options.resume === true && (await named.store.get(header.key)) === text) alreadyThere++;
        else {
          await named.store.put(header.key, text);
          written++;
        }
      });
      return;
    }
    const store = named.store;
    if (header.size <= WHOLE_OBJECT_BYTES) {
      const bytes = await joined(pieces, header.size);
      await settle(WRITES_IN_FLIGHT - 1);
      inFlight(async () => {
        const current = options.resume === true ? await store.get(header.key) : null;
        if (current !== null && sameBytes(current, bytes)) alreadyThere++;
        else {
          await store.put(header.key, bytes);
          written++;
        }
      });
      return;
    }
    await settle(0);
    if (options.resume === true) {
      const current = await store.get(header.key);
      if (current !== null && current.length === header.size) {
        const hasher = options.sha256();
        hasher.update(current);
        if (hasher.digestHex() === largeHashes.get(at)) {
          alreadyThere++;
          return;
        }
      }
    }
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await pieces[Symbol.asyncIterator]().next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
    });
    if (store.putStream !== undefined) await store.putStream(header.key, header.size, body);
    else await store.put(header.key, await joined(pieces, header.size));
    written++;
  }, options.onWritten).finally(() => Promise.allSettled(writing));
  await settle(0);

  options.onPhase?.("verifying");
  const service = new Map(target.service.map((named) => [named.name, named]));
  const counts = await countObjects([...service.values()].filter((named) => named.name in manifest.stores));
  if (options.force !== true) {
    const kinds = new Set([...Object.keys(counts), ...Object.keys(manifest.counts)]);
    for (const kind of kinds) {
      if ((counts[kind] ?? 0) !== (manifest.counts[kind] ?? 0)) throw new Error(`after the restore the target holds ${counts[kind] ?? 0} ${kind}, the archive ${manifest.counts[kind] ?? 0}`);
    }
  }
  const audit = service.get("audit");
  const trails: AuditVerification[] = [];
  if (audit?.kind === "blob") {
    for (const archived of verdict.trails) {
      const days = await auditVerifyDays(audit.store, archived.userId, undefined, undefined, options.now);
      trails.push(await verifyStoredTrail(audit.store, archived.userId, days, {
        publicKeys: options.publicKeys ?? [],
        requireSignature: options.requireSignature ?? false,
        ...(options.hash === undefined ? {} : { hash: options.hash }),
      }));
    }
  }
  const bad = trails.find((trail) => !trail.valid);
  if (bad !== undefined) throw new Error(`after the restore the audit trail of ${bad.userId} does not verify on the target: ${bad.firstBad?.reason}: ${bad.firstBad?.message}`);
  return { manifest, written, alreadyThere, counts, trails };
}
