/**
 * @module
 * Appending to an audit day on disk without rewriting the day: the new entry and the
 * closing bracket are written with one positioned write over the old `\n]`. A process
 * killed mid-append either wrote that one write or did not; a file torn some other way is
 * repaired (complete lines kept) on its next append. The caller (the blob store)
 * serializes appends per key, so this is lossless within one process. With `sync`, the
 * append is fsynced before it resolves, so an acknowledged entry survives power loss.
 */
import { encodeAppendedItem, encodeJsonArray, parseCheckedJsonArray } from "../../../core/storage/json-array.ts";
import { closeSync, fstatSync, writeSync } from "node:fs";
import { descriptors, type DocumentFiles, documentFiles } from "./file-driver.ts";
import type { AppendOptions } from "../../../core/ports.ts";
import type { DeferredSyncs } from "./deferred-syncs.ts";

interface KnownFile {
  path: string;
  ino: number;
  size: number;
  count: number;
}

const MAX_KNOWN_FILES = 10_000;

/**
 * Creates the append of `BlobStoreOptions.appendToJsonArray` for files under `base`. With
 * `options.sync`, each append (and a new day's file and folder) is fsynced before it resolves.
 */
export function createFileJsonArrayAppend(
  base: string,
  options: { sync?: boolean } = {},
): (key: string, item: unknown, atIndex?: number, appendOptions?: { skipped?: () => void }) => Promise<number> {
  const append = createDeferringJsonArrayAppend(base, options);
  return (key, item, atIndex, appendOptions) => append(key, item, atIndex, appendOptions?.skipped === undefined ? undefined : { skipped: appendOptions.skipped });
}

/**
 * {@link createFileJsonArrayAppend} whose in-place appends given `deferSync` leave their file
 * to `options.deferred` (with sync): flushed by the store's `syncJsonArray` (deferred-syncs.ts).
 */
export function createDeferringJsonArrayAppend(
  base: string,
  options: { sync?: boolean; deferred?: DeferredSyncs } = {},
): (key: string, item: unknown, atIndex?: number, appendOptions?: AppendOptions) => Promise<number> {
  const sync = options.sync ?? false;
  const deferred = sync ? options.deferred : undefined;
  const files = documentFiles(base, sync);
  // Item counts of files this process has appended to, so an append need not reread the day.
  const known = new Map<string, KnownFile>();
  const remember = (key: string, file: KnownFile): void => {
    known.delete(key);
    known.set(key, file);
    if (known.size > MAX_KNOWN_FILES) known.delete(known.keys().next().value ?? key);
  };

  return (key, item, atIndex, appendOptions) =>
    files.exclusive(key, async (document) => {
      // A new file (and its folder entry) or a rewrite is synced as ever: deferring covers the in-place write only.
      const later = appendOptions?.deferSync === true ? deferred : undefined;
      const opened = await document.open();
      if (opened === null) {
        await document.replace(encodeJsonArray([item]));
        known.delete(document.path);
        return 1;
      }
      const { fd, path } = opened;
      let kept = false;
      try {
        const { ino, size } = fstatSync(fd);
        let file = known.get(document.path);
        if (file === undefined || file.path !== path || file.ino !== ino || file.size !== size) {
          const parsed = parseCheckedJsonArray(await descriptors.readAll(fd));
          if (atIndex !== undefined && parsed.items.length > atIndex) {
            appendOptions?.skipped?.();
            return parsed.items.length;
          }
          if (!parsed.canonical) {
            // Not in the one-item-per-line form (written elsewhere, or torn): rewrite it once.
            const items = [...parsed.items, item];
            await document.replace(encodeJsonArray(items));
            known.delete(document.path);
            return items.length;
          }
          file = { path, ino, size, count: parsed.items.length };
          remember(document.path, file);
        }
        // Appended before (by this writer or another one finishing its work): nothing to write.
        if (atIndex !== undefined && file.count > atIndex) {
          appendOptions?.skipped?.();
          return file.count;
        }
        const appended = encodeAppendedItem(item);
        const offset = size - 2; // over the closing "\n]"
        const bytesWritten = writeSync(fd, appended, 0, appended.length, offset);
        if (bytesWritten !== appended.length) throw new Error(`short write appending to ${key}`);
        if (later !== undefined) {
          later.defer(path, fd);
          kept = true;
        } else if (sync) await descriptors.dataSync(fd);
        const next = { path, ino, size: offset + appended.length, count: file.count + 1 };
        remember(document.path, next);
        return next.count;
      } finally {
        if (!kept) closeSync(fd);
      }
    });
}

/**
 * `BlobStore.syncJsonArray` over a store's `files`: data-syncs the array's file when there is
 * one. A file `deferred` holds is flushed through its own descriptors, outside the file's lock
 * (the next append to it need not wait); another one (written by a process before) is opened.
 */
export function createFileJsonArraySync(files: DocumentFiles, deferred: DeferredSyncs): (key: string) => Promise<void> {
  return async (key) => {
    const pending = await files.exclusive(key, (document) => Promise.resolve(document.paths.filter((path) => deferred.isPending(path))));
    if (pending.length > 0) return deferred.flush(pending);
    deferred.throwIfFailed();
    await files.exclusive(key, async (document) => {
      const opened = await document.open();
      if (opened === null) return;
      try {
        await descriptors.dataSync(opened.fd);
      } finally {
        closeSync(opened.fd);
      }
    });
  };
}
