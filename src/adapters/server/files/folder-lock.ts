/**
 * @module
 * One process writes a `--data` folder at a time. The file store serializes each key within its
 * own process only (docs/storage.md), so a second writer on the same folder (a `keys rotate`,
 * an `import` or an `export` beside `serve`) loses audit entries and writes: `serve` and the
 * commands that write hold `DIR/.lock`, naming their process and host; another writer is
 * refused with that name, and a lock whose process is gone on this host (a crash, `kill -9`)
 * is taken over, by one process at a time.
 */
import { mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { resolve } from "node:path";
import process from "node:process";
import { ConfigError } from "../../../core/config/mod.ts";
import { codeOf } from "./file-driver.ts";

/** The lock file in a data folder. */
export const LOCK_FILE = ".lock";

/** A lock held: released once by each holder. */
export interface FolderLock {
  /** Whether this call took the lock, where false means this process held it already (another holder here may be writing). */
  readonly fresh: boolean;
  /** Gives the lock up (the file goes when the process's last holder releases it). */
  release(): void;
}

/** What a lock file says of its holder. */
interface Holder {
  pid: number;
  host: string;
  command: string;
  since: string;
  /** Names this one taking of the lock: a release or a takeover removes only the lock it read. */
  token: string;
}

/** A lock this process holds: its file, how many times it is held, and its token. */
interface Held {
  count: number;
  token: string;
}

// Per lock file (resolved), what this process holds (a process may open its folder more than once).
const held = new Map<string, Held>();

/** The holder a lock file names; undefined when it names none that can be read. */
function holderOf(path: string): Holder | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof value !== "object" || value === null) return undefined;
    const { pid, host, command, since, token } = value as Record<string, unknown>;
    if (!Number.isSafeInteger(pid) || typeof command !== "string") return undefined;
    const text = (field: unknown) => (typeof field === "string" ? field : "?");
    return { pid: pid as number, host: text(host), command, since: text(since), token: text(token) };
  } catch {
    return undefined;
  }
}

/**
 * Whether the holder's process is gone: only on this host (another host's pids cannot be
 * asked), and only when the system says there is no such process; this process's own pid
 * names an earlier run of it (a container restarted) unless it is the lock this process holds.
 */
function gone(holder: Holder): boolean {
  if (holder.host !== hostname()) return false;
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (err) {
    return codeOf(err) === "ESRCH";
  }
}

/** Sleeps `ms` without giving the event loop a turn (the lock is taken in synchronous calls). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A takeover left by a process that died in it is this old. */
const STALE_TAKEOVER_MS = 10_000;

/**
 * Replaces the lock of the gone `holder` with `mine`, one process at a time (`.lock.takeover`,
 * made with O_EXCL): the lock is re-read there and removed only if it is still that holder's,
 * so two processes finding one stale lock cannot both take it. False when another took it.
 */
function takeOver(path: string, holder: Holder, mine: string): boolean {
  const guard = `${path}.takeover`;
  try {
    writeFileSync(guard, String(process.pid), { flag: "wx" });
  } catch (err) {
    if (codeOf(err) !== "EEXIST") throw err;
    try {
      if (Date.now() - statSync(guard).mtimeMs > STALE_TAKEOVER_MS) unlinkSync(guard);
    } catch {
      // Gone meanwhile: the next attempt takes it.
    }
    return false;
  }
  try {
    if (holderOf(path)?.token !== holder.token) return false;
    unlinkSync(path);
    writeFileSync(path, mine, { flag: "wx", mode: 0o600 });
    return true;
  } finally {
    unlinkSync(guard);
  }
}

function heldBy(path: string, fresh: boolean): FolderLock {
  let released = false;
  return {
    fresh,
    release() {
      if (released) return;
      released = true;
      const mine = held.get(path);
      if (mine === undefined) return;
      if (--mine.count > 0) return;
      held.delete(path);
      // Only the lock this process took: one taken over meanwhile (it was removed by hand) stays.
      if (holderOf(path)?.token !== mine.token) return;
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
  const mine = held.get(path);
  if (mine !== undefined) {
    mine.count++;
    return heldBy(path, false);
  }
  mkdirSync(dataDir, { recursive: true });
  const token = crypto.randomUUID();
  const line = `${JSON.stringify({ pid: process.pid, host: hostname(), command, since: new Date().toISOString(), token })}\n`;
  const took = (): FolderLock => {
    held.set(path, { count: 1, token });
    return heldBy(path, true);
  };
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      writeFileSync(path, line, { flag: "wx", mode: 0o600 });
      return took();
    } catch (err) {
      if (codeOf(err) !== "EEXIST") throw err;
    }
    const holder = holderOf(path);
    if (holder !== undefined && !gone(holder)) {
      const where = holder.host === hostname() ? "" : ` on ${holder.host}`;
      throw new ConfigError([
        `--data ${dataDir} is in use by ${holder.command} (pid ${holder.pid}${where}, since ${holder.since}): with the file store one process writes a data folder at a time; stop it first, or use STORAGE=redis or s3, which take writers side by side (a lock left by a process that is gone is taken over; if none runs, remove ${path})`,
      ]);
    }
    if (holder !== undefined && takeOver(path, holder, line)) return took();
    // Being written or taken over by another process: look again shortly.
    pause(10);
  }
  throw new ConfigError([`--data ${dataDir}: its lock ${path} could not be taken; if no serve or command uses the folder, remove the file`]);
}

/** Whether this process still holds the folder's lock: the lock file names the token it took (`/ready`). */
export function holdsDataFolder(dir: string): boolean {
  const path = resolve(dir, LOCK_FILE);
  const mine = held.get(path);
  return mine !== undefined && holderOf(path)?.token === mine.token;
}
