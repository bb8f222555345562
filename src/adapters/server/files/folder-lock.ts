/**
 * @module
 * One process writes a `--data` folder at a time. The file store serializes each key within its
 * own process only (docs/storage.md), so a second writer on the same folder (a `keys rotate`,
 * an `import` or an `export` beside `serve`) loses audit entries and writes: `serve` and the
 * commands that write hold `DIR/.lock`, naming their process and host; another writer is
 * refused with that name, and a lock whose process is gone or dying on this host (a crash,
 * `kill -9`, a zombie not yet reaped, a pid now used by another process) is taken over, by one
 * process at a time. A lock file is linked into place whole: a full disk or a crash leaves none
 * half written.
 */
import { linkSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { ConfigError } from "../../../core/config/mod.ts";
import { ServiceError } from "../../../core/errors.ts";
import { codeOf } from "./file-driver.ts";
import { temporaryName } from "./file-names.ts";

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
  /** When the process started, as Linux counts it (`/proc/PID/stat`): another process under the same pid differs. */
  started?: string;
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
    const { pid, host, command, since, token, started } = value as Record<string, unknown>;
    if (!Number.isSafeInteger(pid) || typeof command !== "string") return undefined;
    const text = (field: unknown) => (typeof field === "string" ? field : "?");
    const holder: Holder = { pid: pid as number, host: text(host), command, since: text(since), token: text(token) };
    return typeof started === "string" ? { ...holder, started } : holder;
  } catch {
    return undefined;
  }
}

/** What Linux says of a process (`/proc/PID/stat` and `status`); undefined elsewhere or when it cannot be read. */
interface ProcessState {
  /** `/proc/PID/stat` field 22, the start time in clock ticks since boot. */
  started: string;
  /** A zombie or dead, exiting (PF_EXITING), or a SIGKILL pending: it writes nothing more. */
  dying: boolean;
}

// PF_EXITING in /proc/PID/stat's flags: the process is in exit (after kill -9, before it is a zombie).
const PF_EXITING = 0x4;
// SIGKILL (9) in a /proc/PID/status signal mask: killed, not yet exiting.
const SIGKILL_BIT = 1n << 8n;

function processState(pid: number | "self"): ProcessState | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 2, the command name, is in parentheses and may hold spaces: fields 3 on follow the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const state = fields[0] ?? "";
    const flags = Number(fields[6]);
    const started = fields[19] ?? "";
    let killed = false;
    if (pid !== "self") {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      killed = [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].some((mask) => (BigInt(`0x${mask[1]}`) & SIGKILL_BIT) !== 0n);
    }
    return { started, dying: state === "Z" || state === "X" || (flags & PF_EXITING) !== 0 || killed };
  } catch {
    return undefined;
  }
}

/**
 * Whether the holder's process is gone or dying: only on this host (another host's pids cannot
 * be asked), when the system says there is no such process, or (Linux) that it is a zombie,
 * exiting or killed, or another process started since under its pid. This process's own pid
 * names an earlier run of it (a container restarted) unless it is the lock this process holds.
 */
function ended(holder: Holder): boolean {
  if (holder.host !== hostname()) return false;
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    return codeOf(err) === "ESRCH";
  }
  const state = processState(holder.pid);
  if (state === undefined) return false;
  return state.dying || (holder.started !== undefined && holder.started !== state.started);
}

/** The full disk (or quota) that stops a lock file being written, said in one line naming the folder; other errors as they are. */
function lockWriteError(err: unknown, path: string): unknown {
  const code = codeOf(err);
  if (code !== "ENOSPC" && code !== "EDQUOT") return err;
  const reason = code === "ENOSPC" ? "no space left on the disk" : "the disk quota is used up";
  return new ServiceError("unavailable", `--data ${dirname(path)}: ${reason} (${String(code)}), so its lock ${path} cannot be written: free space and start again`);
}

// Filesystems without hard links (FAT, some network mounts) answer these to link: the lock is written in place there.
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"]);

/**
 * Makes `path` hold `text` if nothing is there (false when something is), whole or not at all:
 * `text` is written to a temporary file beside it first, then linked into place.
 */
function createWhole(path: string, text: string): boolean {
  const temporary = join(dirname(path), temporaryName(basename(path)));
  try {
    writeFileSync(temporary, text, { flag: "wx", mode: 0o600 });
    try {
      linkSync(temporary, path);
      return true;
    } catch (err) {
      if (codeOf(err) === "EEXIST") return false;
      if (!NO_LINKS.has(String(codeOf(err)))) throw err;
    }
    return createInPlace(path, text);
  } catch (err) {
    throw lockWriteError(err, path);
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      // Never written (a full disk): nothing to remove.
    }
  }
}

/** {@link createWhole} where links are not supported: a write that fails removes the file it made. */
function createInPlace(path: string, text: string): boolean {
  try {
    writeFileSync(path, "", { flag: "wx", mode: 0o600 });
  } catch (err) {
    if (codeOf(err) === "EEXIST") return false;
    throw err;
  }
  try {
    writeFileSync(path, text, { flag: "r+" });
    return true;
  } catch (err) {
    unlinkSync(path);
    throw err;
  }
}

/** Sleeps `ms` without giving the event loop a turn (the lock is taken in synchronous calls). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A takeover file is stale this old whoever made it (one of another host, or one that cannot be read). */
const STALE_TAKEOVER_MS = 10_000;

/**
 * Replaces the lock of the ended `holder` with `mine`, one process at a time (`.lock.takeover`,
 * made whole like the lock): the lock is re-read there and removed only if it is still that
 * holder's, so two processes finding one stale lock cannot both take it. False when another
 * took it, or is taking it.
 */
function takeOver(path: string, holder: Holder, mine: string, guardLine: string): boolean {
  const guard = `${path}.takeover`;
  if (!createWhole(guard, guardLine)) {
    removeStaleGuard(guard);
    return false;
  }
  try {
    if (holderOf(path)?.token !== holder.token) return false;
    unlinkSync(path);
    return createWhole(path, mine);
  } finally {
    try {
      unlinkSync(guard);
    } catch {
      // Removed as stale by another process (its holder looked ended): nothing left to remove.
    }
  }
}

/**
 * Removes a takeover file whose process ended in it (killed while taking over a lock) at once,
 * and any once it is {@link STALE_TAKEOVER_MS} old. It is moved aside first and read again
 * there: a takeover file made meanwhile by a live process is put back.
 */
function removeStaleGuard(guard: string): void {
  const owner = holderOf(guard);
  try {
    if (!(owner !== undefined && ended(owner)) && Date.now() - statSync(guard).mtimeMs <= STALE_TAKEOVER_MS) return;
    const aside = join(dirname(guard), temporaryName(".lock.takeover"));
    renameSync(guard, aside);
    if (owner !== undefined && holderOf(aside)?.token !== owner.token) {
      try {
        linkSync(aside, guard);
      } catch {
        // Another took its place meanwhile: that one guards.
      }
    }
    unlinkSync(aside);
  } catch {
    // Gone meanwhile: the next attempt takes it.
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
  const started = processState("self")?.started;
  const lineOf = (what: string, id: string) => `${JSON.stringify({ pid: process.pid, host: hostname(), command: what, since: new Date().toISOString(), token: id, ...(started === undefined ? {} : { started }) })}\n`;
  const line = lineOf(command, token);
  const took = (): FolderLock => {
    held.set(path, { count: 1, token });
    return heldBy(path, true);
  };
  for (let attempt = 0; attempt < 50; attempt++) {
    if (createWhole(path, line)) return took();
    const holder = holderOf(path);
    if (holder !== undefined && !ended(holder)) {
      const where = holder.host === hostname() ? "" : ` on ${holder.host}`;
      throw new ConfigError([
        `--data ${dataDir} is in use by ${holder.command} (pid ${holder.pid}${where}, since ${holder.since}): with the file store one process writes a data folder at a time; stop it first, or use STORAGE=redis or s3, which take writers side by side (a lock left by a process that is gone is taken over; if none runs, remove ${path})`,
      ]);
    }
    if (holder !== undefined && takeOver(path, holder, line, lineOf("takeover", crypto.randomUUID()))) return took();
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
