/**
 * @module
 * `writeBackup`: every object of every store into one archive (docs/operations.md#backups),
 * read while the service runs. Each key's value is read once, as the store held it at that
 * moment; each user's audit trail as it stood when its head was read (audit-snapshot.ts), and
 * each data key's history and value as they stood when the history's head was read (history-snapshot.ts).
 */
import type { Bytes } from "../ports.ts";
import type { ManifestSigner } from "../exchange/package/signature.ts";
import { type ArchiveSink, ArchiveWriter, type Sha256Factory } from "./archive-format.ts";
import { dayAtEnd, groupAuditKeys, type TrailEnd, trailEndOf } from "./audit-snapshot.ts";
import { BACKUP_FORMAT, type BackupManifest, objectLine, signBackupManifest } from "./manifest.ts";
import { piecesOf } from "../storage/byte-stream.ts";
import { isCanary, kindOf, type NamedStore } from "./stores.ts";
import { groupHistoryKeys, type HistoryReader, historySnapshot } from "./history-snapshot.ts";

const encoder = new TextEncoder();

/** Progress of a backup or a restore. */
export interface ArchiveProgress {
  /** Objects done. */
  objects: number;
  /** Their bytes. */
  bytes: number;
}

/** Options of {@link writeBackup}. */
export interface BackupOptions {
  /** Incremental SHA-256 (the runtime's native one under the commands). */
  sha256: Sha256Factory;
  /** When the backup begins. */
  now: Date;
  /** The stores are read below encryption at rest: the objects stay sealed. */
  sealed: boolean;
  /**
   * Opens a sealed object: an audit head (where its trail ends), a history's head and its key's
   * value (which version they name); needed when `sealed` and the store is sealed.
   */
  openHead?: (key: string, stored: Bytes) => Promise<Bytes>;
  /** Signs the manifest (`EXPORT_SIGNING_KEY`). */
  signer?: ManifestSigner | undefined;
  /** Told after each object. */
  onProgress?: (progress: ArchiveProgress) => void;
}

/** Writes the archive of `stores` to `sink` and resolves with its manifest. */
export async function writeBackup(stores: readonly NamedStore[], sink: ArchiveSink, options: BackupOptions): Promise<BackupManifest> {
  const writer = new ArchiveWriter(sink);
  const counts: Record<string, number> = {};
  const objectsHash = options.sha256();
  const progress: ArchiveProgress = { objects: 0, bytes: 0 };
  const emit = async (store: string, key: string, body: Bytes | { size: number; body: ReadableStream<Uint8Array> }) => {
    const size = body instanceof Uint8Array ? body.length : body.size;
    const sha256 = await writer.object({ store, key, size }, body instanceof Uint8Array ? body : piecesOf(body.body, body.size), options.sha256());
    objectsHash.update(encoder.encode(objectLine(store, key, size, sha256)));
    const kind = kindOf(store, key);
    counts[kind] = (counts[kind] ?? 0) + 1;
    progress.objects++;
    progress.bytes += size;
    options.onProgress?.({ ...progress });
  };
  await writer.start({ createdAt: options.now.toISOString(), sealed: options.sealed });
  for (const named of stores) {
    const keys = (await named.store.list("")).filter((key) => !isCanary(named.kind, key)).sort();
    if (named.kind === "kv") {
      for (const key of keys) {
        const value = await named.store.get(key);
        // Deleted since it was listed: it is not part of the store any more.
        if (value !== null) await emit(named.name, key, encoder.encode(value) as Bytes);
      }
      continue;
    }
    const store = named.store;
    const read = async (key: string) => {
      if (store.getStream !== undefined) return await store.getStream(key);
      return await store.get(key);
    };
    if (named.name === "data") {
      // Each history as of its head, with its key's value (history-snapshot.ts); every other key as read.
      const { histories, others } = groupHistoryKeys(keys);
      const reader: HistoryReader = {
        get: (key) => store.get(key),
        open: async (key, stored) => (options.sealed && options.openHead !== undefined ? await options.openHead(key, stored) : stored),
        sha256: (bytes) => {
          const hash = options.sha256();
          hash.update(bytes);
          return hash.digestHex();
        },
        sealed: options.sealed,
      };
      for (const group of histories) for (const [key, value] of await historySnapshot(group, reader)) await emit(named.name, key, value);
      for (const key of others) {
        const value = await read(key);
        if (value !== null) await emit(named.name, key, value);
      }
      continue;
    }
    if (named.name !== "audit") {
      for (const key of keys) {
        const value = await read(key);
        if (value !== null) await emit(named.name, key, value);
      }
      continue;
    }
    const { users, others } = groupAuditKeys(keys);
    for (const [, trail] of users) {
      let end: TrailEnd | undefined;
      if (trail.head !== undefined) {
        const head = await store.get(trail.head);
        if (head !== null) {
          end = trailEndOf(options.sealed && options.openHead !== undefined ? await options.openHead(trail.head, head) : head);
          await emit(named.name, trail.head, head);
        }
      }
      const days = [...trail.days];
      // The head's own day, when its first entry came after the listing.
      const headDay = end === undefined ? undefined : days.find((day) => day.day === end.day && !day.legacy);
      if (end !== undefined && headDay === undefined && trail.head !== undefined) {
        days.push({ day: end.day, legacy: false, key: `audit-trails/${trail.head.slice("audit-heads/".length, -".json".length)}-${end.day}.json` });
      }
      days.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : Number(b.legacy) - Number(a.legacy)));
      for (const day of days) {
        const stored = await store.get(day.key);
        const kept = stored === null ? null : dayAtEnd(day, stored, end);
        if (kept !== null) await emit(named.name, day.key, kept);
      }
    }
    for (const key of others) {
      const value = await read(key);
      if (value !== null) await emit(named.name, key, value);
    }
  }
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    createdAt: options.now.toISOString(),
    sealed: options.sealed,
    stores: Object.fromEntries(stores.map((named) => [named.name, named.kind])),
    counts,
    objects: progress.objects,
    bytes: progress.bytes,
    objectsSha256: objectsHash.digestHex(),
  };
  const signed = options.signer === undefined ? manifest : await signBackupManifest(manifest, options.signer);
  await writer.finish(signed);
  return signed;
}
