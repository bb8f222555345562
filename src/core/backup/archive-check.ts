/**
 * @module
 * Reading an archive back: every object's bytes against its SHA-256, the objects' lines, counts
 * and bytes against the manifest, the manifest's signature, and each user's audit trail verified
 * as `audit verify` verifies a stored one (one user's trail held at a time).
 */
import { createStorage } from "unstorage";
import type { BlobStore, Bytes } from "../ports.ts";
import { createBlobStore } from "../storage/unstorage-stores.ts";
import type { SignatureCheck, SignatureVerification } from "../exchange/package/signature.ts";
import { auditVerifyDays, verifyStoredTrail } from "../audit/trail.ts";
import type { AuditVerification } from "../audit/verify.ts";
import type { AuditJwk } from "../audit/head-signature.ts";
import type { SyncSha256 } from "../audit/chain.ts";
import { type ArchiveBegin, ARCHIVE_MAGIC, ArchiveDamaged, ArchiveReader, type ObjectHeader, recordLine, type Sha256Factory } from "./archive-format.ts";
import { type BackupManifest, checkBackupSignature, objectLine, readManifest } from "./manifest.ts";
import { auditUserOf } from "./audit-snapshot.ts";
import { kindOf } from "./stores.ts";
import type { ArchiveProgress } from "./backup.ts";

import { HISTORY_ROOT } from "../history/mod.ts";

const encoder = new TextEncoder();

// What no key the service stores holds (docs/storage.md#keys): a restore never writes outside a store's keys.
// deno-lint-ignore no-control-regex
const BAD_SEGMENT = /[\u0000-\u001f\u007f\\:?#]/;
/** The most bytes of an audit object (a day is at most 256 MiB by MAX_AUDIT_DAY_BYTES; heads are small). */
const MAX_AUDIT_OBJECT_BYTES = 300 * 1024 * 1024;

/**
 * Whether `key` is one a store may hold: `/`-separated segments, none empty, `.` or `..`, or with a
 * forbidden character; a history's keys begin with the one segment that holds `#` (docs/storage.md#record-history).
 */
function storableKey(key: string): boolean {
  const stored = key.startsWith(`${HISTORY_ROOT}/`) ? key.slice(HISTORY_ROOT.length + 1) : key;
  return key.length <= 2_000 && stored.split("/").every((segment) => segment !== "" && segment !== "." && segment !== ".." && !BAD_SEGMENT.test(segment));
}

/** What {@link readArchive} found once the whole archive was read. */
export interface ArchiveContents {
  /** The manifest, its counts matching the objects read. */
  manifest: BackupManifest;
}

/** Reads every record; `onObject` gets each object's pieces (what it leaves unread is skipped) and, after them, whether they matched. */
export async function readArchive(
  body: ReadableStream<Uint8Array>,
  sha256: Sha256Factory,
  onObject: (header: ObjectHeader, pieces: AsyncIterable<Bytes>, begin: ArchiveBegin) => Promise<void>,
  onProgress?: (progress: ArchiveProgress & { archiveBytes: number }) => void,
  onChecked?: (header: ObjectHeader, sha256: string, index: number) => void,
): Promise<ArchiveContents> {
  const reader = ArchiveReader.of(body);
  try {
    if ((await reader.line(64)) !== ARCHIVE_MAGIC.slice(0, -1)) throw new ArchiveDamaged("not a forensic-annotation backup (its first line is not the format's)");
    const opening = recordLine(await reader.line()).begin as Partial<ArchiveBegin> | undefined;
    if (opening === undefined || typeof opening.sealed !== "boolean" || typeof opening.createdAt !== "string") throw new ArchiveDamaged("the archive's opening record is missing");
    const begin: ArchiveBegin = { sealed: opening.sealed, createdAt: opening.createdAt };
    const counts: Record<string, number> = {};
    const stores = new Set<string>();
    const objectsHash = sha256();
    const progress = { objects: 0, bytes: 0 };
    for (;;) {
      const record = recordLine(await reader.line());
      if ("manifest" in record) {
        const manifest = readManifest(record.manifest);
        if (!(await reader.atEnd())) throw new ArchiveDamaged("bytes follow the manifest");
        if (manifest.sealed !== begin.sealed || manifest.createdAt !== begin.createdAt) throw new ArchiveDamaged("the manifest does not match the archive's opening record");
        const digest = objectsHash.digestHex();
        if (manifest.objects !== progress.objects || manifest.bytes !== progress.bytes || manifest.objectsSha256 !== digest) {
          throw new ArchiveDamaged(`the objects do not match the manifest (${progress.objects} objects of ${progress.bytes} bytes read; the manifest lists ${manifest.objects} of ${manifest.bytes}${manifest.objectsSha256 === digest ? "" : ", and another object list"})`);
        }
        const unlisted = [...stores].filter((name) => !Object.hasOwn(manifest.stores, name));
        if (unlisted.length > 0) throw new ArchiveDamaged(`objects of stores the manifest does not list: ${unlisted.join(", ")}`);
        const kinds = new Set([...Object.keys(counts), ...Object.keys(manifest.counts)]);
        for (const kind of kinds) {
          if ((counts[kind] ?? 0) !== (manifest.counts[kind] ?? 0)) throw new ArchiveDamaged(`${kind}: ${counts[kind] ?? 0} objects read, the manifest counts ${manifest.counts[kind] ?? 0}`);
        }
        return { manifest };
      }
      const { store, key, size } = record;
      if (typeof store !== "string" || typeof key !== "string" || key === "" || !Number.isSafeInteger(size) || (size as number) < 0) {
        throw new ArchiveDamaged("an object's header is not {store, key, size}");
      }
      if (!storableKey(key) || !/^[a-z][A-Za-z0-9_-]{0,63}$/.test(store)) throw new ArchiveDamaged(`an object's key or store name is not one a store holds (${JSON.stringify(key.slice(0, 80))})`);
      if (store === "audit" && (size as number) > MAX_AUDIT_OBJECT_BYTES) throw new ArchiveDamaged(`audit ${key}: larger than any audit object the service writes`);
      stores.add(store);
      const header: ObjectHeader = { store, key, size: size as number };
      const hasher = sha256();
      let consumed = 0;
      const source = reader.bytes(header.size);
      const pieces = (async function* () {
        for await (const piece of source) {
          hasher.update(piece);
          consumed += piece.length;
          yield piece;
        }
      })();
      await onObject(header, pieces, begin);
      // What the visitor left unread still counts toward the hash.
      for await (const _ of pieces) void _;
      if (consumed !== header.size) throw new ArchiveDamaged(`${store} ${key}: cut short`);
      const gap = await reader.line(0);
      const trailer = recordLine(await reader.line());
      if (gap !== "" || typeof trailer.sha256 !== "string") throw new ArchiveDamaged(`${store} ${key}: no SHA-256 after its bytes`);
      const digest = hasher.digestHex();
      if (trailer.sha256 !== digest) throw new ArchiveDamaged(`${store} ${key}: its bytes do not match their SHA-256 (changed since the backup)`);
      onChecked?.(header, digest, progress.objects);
      objectsHash.update(encoder.encode(objectLine(store, key, header.size, digest)));
      const kind = kindOf(store, key);
      counts[kind] = (counts[kind] ?? 0) + 1;
      progress.objects++;
      progress.bytes += header.size;
      onProgress?.({ ...progress, archiveBytes: reader.consumed });
    }
  } finally {
    await reader.cancel();
  }
}

/** How trails in an archive are verified. */
export interface TrailVerification {
  /** Public keys of the audit heads' signatures (`AUDIT_SIGNING_KEY`'s public half, `AUDIT_VERIFY_KEYS`). */
  publicKeys?: readonly AuditJwk[];
  /** A head without a signature is a failure. */
  requireSignature?: boolean;
  /** SHA-256 of entry hashes (the runtime's native one under the commands). */
  hash?: SyncSha256;
  /** Opens a sealed audit store (the archive's `sealed`): wraps the store one trail is checked in. */
  openAudit?: (store: BlobStore) => BlobStore;
  /** The day the verification takes as today. */
  now: Date;
}

/** Collects the audit objects of one user at a time and verifies each trail as soon as the next begins. */
export class TrailCollector {
  private user: string | undefined;
  private store: BlobStore = createBlobStore(createStorage());
  /** Every verdict, in user order. */
  readonly verdicts: AuditVerification[] = [];

  constructor(private readonly options: TrailVerification) {}

  /** Takes one archived audit object. */
  async add(key: string, bytes: Bytes): Promise<void> {
    const user = auditUserOf(key);
    if (user !== this.user) await this.flush();
    this.user = user;
    if (user !== undefined) await this.store.put(key, bytes);
  }

  /** Verifies the trail collected so far. */
  async flush(): Promise<void> {
    const user = this.user;
    this.user = undefined;
    if (user === undefined) return;
    const stored = this.store;
    this.store = createBlobStore(createStorage());
    const store = this.options.openAudit?.(stored) ?? stored;
    const days = await auditVerifyDays(store, user, undefined, undefined, this.options.now);
    this.verdicts.push(await verifyStoredTrail(store, user, days, {
      publicKeys: this.options.publicKeys ?? [],
      requireSignature: this.options.requireSignature ?? false,
      ...(this.options.hash === undefined ? {} : { hash: this.options.hash }),
    }));
  }
}

/** The verdict on an archive. */
export interface ArchiveVerdict {
  manifest: BackupManifest;
  /** The manifest's signature: valid, unsigned, or not valid and why. */
  signature: SignatureCheck;
  /** Each trail's verdict. */
  trails: AuditVerification[];
  /** True when every object, the manifest, the signature (when present or required) and every trail check out. */
  valid: boolean;
  /** The first problem, in words. */
  problem?: string;
}

/** Options of {@link checkArchive}. */
export interface CheckArchiveOptions extends TrailVerification {
  sha256: Sha256Factory;
  /** Keys the manifest may be signed with; `requireSignature` refuses an unsigned one. */
  signature?: SignatureVerification | undefined;
  /** Told as the archive is read. */
  onProgress?: (progress: ArchiveProgress & { archiveBytes: number }) => void;
  /** Told each object's SHA-256 once its bytes matched it. */
  onChecked?: (header: ObjectHeader, sha256: string, index: number) => void;
}

/** Reads the whole archive and checks it; a damaged archive throws {@link ArchiveDamaged}. */
export async function checkArchive(body: ReadableStream<Uint8Array>, options: CheckArchiveOptions): Promise<ArchiveVerdict> {
  const trails = new TrailCollector(options);
  let unchecked = false;
  const { manifest } = await readArchive(body, options.sha256, async (header, pieces, begin) => {
    if (header.store !== "audit") return;
    // Sealed entries verify only once opened: without the keys the trails are left unchecked (and said so).
    if (begin.sealed && options.openAudit === undefined) {
      unchecked = true;
      return;
    }
    const bytes = new Uint8Array(header.size);
    let at = 0;
    for await (const piece of pieces) {
      bytes.set(piece, at);
      at += piece.length;
    }
    await trails.add(header.key, bytes);
  }, options.onProgress, options.onChecked);
  await trails.flush();
  const signature = await checkBackupSignature(manifest, options.signature);
  const bad = trails.verdicts.find((verdict) => !verdict.valid);
  const problem = signature.valid === false
    ? `the manifest's signature: ${signature.reason ?? "not valid"}`
    : signature.valid === "unsigned" && options.signature?.requireSignature === true
    ? "the manifest is not signed"
    : unchecked
    ? "the archive is sealed (encryption at rest): its audit trails verify only with the DATA_ENCRYPTION_KEYS that sealed them"
    : bad !== undefined
    ? `the audit trail of ${bad.userId} does not verify: seq ${bad.firstBad?.seq} on ${bad.firstBad?.date}: ${bad.firstBad?.reason}: ${bad.firstBad?.message}`
    : undefined;
  return { manifest, signature, trails: trails.verdicts, valid: problem === undefined, ...(problem === undefined ? {} : { problem }) };
}
