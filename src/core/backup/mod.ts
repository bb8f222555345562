/**
 * @module
 * Backups of every store (docs/operations.md#backups): {@link writeBackup} writes one archive
 * while the service runs, {@link checkArchive} checks it offline, {@link restoreArchive} writes it
 * into the stores of a target (another backend, or the same after a loss).
 */
export { ArchiveDamaged, type ArchiveSink, type Sha256Factory, type Sha256Stream } from "./archive-format.ts";
export { type ArchiveProgress, type BackupOptions, writeBackup } from "./backup.ts";
export { type ArchiveVerdict, checkArchive, type CheckArchiveOptions, readArchive, type TrailVerification } from "./archive-check.ts";
export { backupStream, type RestoreLine, restoreLines } from "./streams.ts";
export { BACKUP_FORMAT, type BackupManifest } from "./manifest.ts";
export { countObjects, restoreArchive, RestoreRefusal, type RestoreOptions, type RestoreSummary, type RestoreTarget } from "./restore.ts";
export { type NamedStore, storesOf } from "./stores.ts";
