/**
 * @module
 * Temporary files a stopped process left in a data folder: killed between writing one and
 * renaming it into place, it leaves `.{name}.{uuid}.tmp` (file-names.ts). Listings skip them,
 * so they only take disk space, an image's worth each for an upload cut short. `serve` removes
 * them once it holds the folder's lock (no other writer), in the background, and only those
 * older than its start: its own writes in flight are younger.
 */
import type { Dirent } from "node:fs";
import { lstat, readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { isTemporary } from "./file-names.ts";
import { codeOf } from "./file-driver.ts";

/** What a sweep did. */
export interface LeftoverSweep {
  /** Temporary files removed. */
  removed: number;
  /** Folders or files that could not be read or removed (left as they were). */
  failed: number;
}

/** Options of {@link removeLeftoverTemporaries}. */
export interface LeftoverSweepOptions {
  /** Only files last modified before this time (ms since the epoch) are removed. */
  olderThan: number;
  /** Asked before each folder: true ends the sweep early (the service is stopping). */
  stopped?: () => boolean;
}

/** Removes the temporary files under `dir` (every folder, symlinks not followed) older than `options.olderThan`. */
export async function removeLeftoverTemporaries(dir: string, options: LeftoverSweepOptions): Promise<LeftoverSweep> {
  const sweep: LeftoverSweep = { removed: 0, failed: 0 };
  const folders = [dir];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    if (options.stopped?.() === true) break;
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch (err) {
      // A folder removed meanwhile (a case deleted) held nothing to sweep.
      if (codeOf(err) !== "ENOENT") sweep.failed++;
      continue;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) folders.push(path);
      else if (entry.isFile() && isTemporary(entry.name)) await removeIfOlder(path, options.olderThan, sweep);
    }
  }
  return sweep;
}

async function removeIfOlder(path: string, olderThan: number, sweep: LeftoverSweep): Promise<void> {
  try {
    if ((await lstat(path)).mtimeMs >= olderThan) return;
    await unlink(path);
    sweep.removed++;
  } catch (err) {
    if (codeOf(err) !== "ENOENT") sweep.failed++;
  }
}
