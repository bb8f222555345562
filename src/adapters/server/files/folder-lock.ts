/**
 * @module
 * One process writes a `--data` folder at a time. The file store serializes each key within its
 * own process only (docs/storage.md), so a second writer on the same folder (a `keys rotate`,
 * an `import` or an `export` beside `serve`) loses audit entries and writes: `serve` and the
 * commands that write hold `DIR/.lock`, naming their process; another writer is refused with
 * that name, and a lock whose process is gone (a crash, `kill -9`) is taken over.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import process from "node:process";
import { ConfigError } from "../../../core/config/mod.ts";

/** The lock file in a data folder. */
export const LOCK_FILE = ".lock";

/** A lock held: released once by each holder. */
export interface FolderLock {
  /** Gives the lock up (the file goes when the process's last holder releases it). */
  release(): void;
}

/** What a lock file says of its holder. */
interface Holder {
  pid: number;
  command: string;
  since: string;
}

// Per lock file, how many holders this process has (a process may open its folder more than once).
const holders = new Map<string, number>();

function codeOf(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String(err.code) : undefined;
}

/** The holder a lock file names; undefined when it names none that can be read. */
function holderOf(path: string): Holder | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof value !== "object" || value === null) return undefined;
    const { pid, command, since } = value as Record<string, unknown>;
    if (!Number.isSafeInteger(pid) || typeof command !== "string") return undefined;
    return { pid: pid as number, command, since: typeof since === "string" ? since : "?" };
  } catch {
    return undefined;
  }
}

/** Whether a process with this id runs (one of another user counts: it cannot be signalled, but it is there). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return codeOf(err) === "EPERM";
  }
}

function heldBy(path: string): FolderLock {
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      const count = (holders.get(path) ?? 1) - 1;
      if (count > 0) return void holders.set(path, count);
      holders.delete(path);
      try {
        unlinkSync(path);
      } catch {
        // Gone already (removed by hand): nothing is held.
      }
    },
  };
}

/**
 * Takes the write lock of the data folder `dataDir` for `command` (`serve`, `import`...); a
 * `ConfigError` naming the holder when another running process holds it.
 */
export function lockDataFolder(dataDir: string, command: string): FolderLock {
  // Resolved: one folder named two ways (relative, absolute) is one lock.
  const path = resolve(dataDir, LOCK_FILE);
  const count = holders.get(path);
  if (count !== undefined) {
    holders.set(path, count + 1);
    return heldBy(path);
  }
  mkdirSync(dataDir, { recursive: true });
  const mine: Holder = { pid: process.pid, command, since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify(mine)}\n`, { flag: "wx", mode: 0o600 });
      holders.set(path, 1);
      return heldBy(path);
    } catch (err) {
      if (codeOf(err) !== "EEXIST") throw err;
    }
    const holder = holderOf(path);
    if (holder !== undefined && holder.pid !== process.pid && running(holder.pid)) {
      throw new ConfigError([
        `--data ${dataDir} is in use by ${holder.command} (pid ${holder.pid}, since ${holder.since}): with the file store one process writes a data folder at a time; stop it first, or use STORAGE=redis or s3, which take writers side by side (a lock left by a process that is gone is taken over; ${path})`,
      ]);
    }
    // Its process is gone (or the file was being written as it was read): taken over.
    if (holder !== undefined) {
      try {
        unlinkSync(path);
      } catch {
        // Another process took it over first: the next attempt sees its lock.
      }
    }
  }
  throw new ConfigError([`--data ${dataDir}: its lock ${path} could not be taken; if no serve or command uses the folder, remove the file`]);
}
