/**
 * @module
 * The backup manifest (docs/operations.md#the-archive-format): counts per kind, the objects'
 * number and bytes, the SHA-256 over every object's line (store, key, size, SHA-256), and a
 * signature over the manifest's hash with the export signing key, made as the exchange
 * packages' (exchange/package/signature.ts).
 */
import { canonicalJson } from "../encoding/canonical-json.ts";
import { sha256Hex } from "../encoding/digest.ts";
import type { ManifestSignature } from "../exchange/shapes.ts";
import { type ManifestSigner, type SignatureCheck, type SignatureVerification, signManifestHash, verifyManifestSignature } from "../exchange/package/signature.ts";
import { ArchiveDamaged } from "./archive-format.ts";

/** The manifest's format name. */
export const BACKUP_FORMAT = "forensic-annotation/backup@1";

/** The last record of an archive. */
export interface BackupManifest {
  /** {@link BACKUP_FORMAT}. */
  format: typeof BACKUP_FORMAT;
  /** When the backup began (ISO 8601). */
  createdAt: string;
  /** The objects are as the stores held them under encryption at rest (sealed), not opened. */
  sealed: boolean;
  /** Each store's name and whether it holds bytes (`blob`) or strings (`kv`). */
  stores: Record<string, "blob" | "kv">;
  /** Objects per kind (`data/cases`, `audit/days`, ...). */
  counts: Record<string, number>;
  /** Objects in all. */
  objects: number;
  /** Their bytes in all. */
  bytes: number;
  /** SHA-256 of every object's line `["store","key",size,"sha256"]\n`, in archive order. */
  objectsSha256: string;
  /** The export signing key's detached JWS over {@link manifestHash}. */
  signature?: ManifestSignature;
}

/** One object's line as the manifest's `objectsSha256` covers it. */
export const objectLine = (store: string, key: string, size: number, sha256: string): string => `${JSON.stringify([store, key, size, sha256])}\n`;

/** The hash the signature covers: SHA-256 of the manifest's canonical JSON without `signature`. */
export function manifestHash(manifest: BackupManifest): Promise<string> {
  return sha256Hex(canonicalJson(manifest, "signature"));
}

/** The manifest signed with `signer`. */
export async function signBackupManifest(manifest: BackupManifest, signer: ManifestSigner): Promise<BackupManifest> {
  return { ...manifest, signature: await signManifestHash(await manifestHash(manifest), signer) };
}

/** The manifest's signature checked against `verification`'s keys. */
export async function checkBackupSignature(manifest: BackupManifest, verification: SignatureVerification | undefined): Promise<SignatureCheck> {
  return verifyManifestSignature(await manifestHash(manifest), manifest.signature, verification);
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** A manifest record's value checked for shape; damaged when it is not one. */
export function readManifest(value: unknown): BackupManifest {
  const m = value as Partial<BackupManifest> | null;
  const ok = m !== null && typeof m === "object" && m.format === BACKUP_FORMAT && typeof m.createdAt === "string" &&
    typeof m.sealed === "boolean" && isCount(m.objects) && isCount(m.bytes) && typeof m.objectsSha256 === "string" &&
    m.stores !== null && typeof m.stores === "object" && Object.values(m.stores).every((kind) => kind === "blob" || kind === "kv") &&
    m.counts !== null && typeof m.counts === "object" && Object.values(m.counts).every(isCount);
  if (!ok) throw new ArchiveDamaged(`the manifest is not a ${BACKUP_FORMAT} manifest`);
  return m as BackupManifest;
}
