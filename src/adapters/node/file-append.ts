/**
 * @module
 * Appending to an audit day on disk without rewriting the day: the new entry and the
 * closing bracket are written with one positioned write over the old `\n]`. A process
 * killed mid-append either wrote that one write or did not; a file torn some other way is
 * repaired (complete lines kept) on its next append. The caller (the blob store)
 * serializes appends per key, so this is lossless within one process.
 */
import { open } from "node:fs/promises";
import { resolve } from "node:path";
import { encodeAppendedItem, encodeJsonArray, parseJsonArray } from "../../core/storage/json-array.ts";
import { fileOfKey, writeFileAtomic } from "./file-driver.ts";

interface KnownFile {
  ino: number;
  size: number;
  count: number;
}

const MAX_KNOWN_FILES = 10_000;

/** Creates the append of `BlobStoreOptions.appendToJsonArray` for files under `base`. */
export function createFileJsonArrayAppend(base: string): (key: string, item: unknown) => Promise<number> {
  const root = resolve(base);
  // Item counts of files this process has appended to, so an append need not reread the day.
  const known = new Map<string, KnownFile>();
  const remember = (path: string, file: KnownFile): void => {
    known.delete(path);
    known.set(path, file);
    if (known.size > MAX_KNOWN_FILES) known.delete(known.keys().next().value ?? path);
  };

  return async (key, item) => {
    const path = fileOfKey(root, key);
    const handle = await open(path, "r+").catch((err: unknown) => {
      if (typeof err === "object" && err !== null && "code" in err && err.code === "ENOENT") return null;
      throw err;
    });
    if (handle === null) {
      const bytes = encodeJsonArray([item]);
      await writeFileAtomic(path, bytes);
      known.delete(path);
      return 1;
    }
    try {
      const { ino, size } = await handle.stat();
      let file = known.get(path);
      if (file === undefined || file.ino !== ino || file.size !== size) {
        const parsed = parseJsonArray(await handle.readFile());
        if (!parsed.canonical) {
          // Not in the one-item-per-line form (written elsewhere, or torn): rewrite it once.
          const items = [...parsed.items, item];
          await writeFileAtomic(path, encodeJsonArray(items));
          known.delete(path);
          return items.length;
        }
        file = { ino, size, count: parsed.items.length };
      }
      const appended = encodeAppendedItem(item);
      const offset = size - 2; // over the closing "\n]"
      const { bytesWritten } = await handle.write(appended, 0, appended.length, offset);
      if (bytesWritten !== appended.length) throw new Error(`short write appending to ${key}`);
      const next = { ino, size: offset + appended.length, count: file.count + 1 };
      remember(path, next);
      return next.count;
    } finally {
      await handle.close();
    }
  };
}
