/**
 * @module
 * An unstorage driver for files that never leaves a half-written file: each write goes to
 * a temporary file in the same folder and is renamed over the target, which POSIX makes
 * atomic. unstorage's own fs driver writes in place. Used by the Node, Bun and Deno
 * adapters (all three run `node:fs`).
 *
 * Every key the key rules accept is storable: a document whose name is a folder too, or
 * whose name is longer than a file name may be, gets an escaped name (file-names.ts).
 * With `sync`, a write is on the disk (file and folder entry fsynced) before it resolves.
 */
import { close as closeCallback, closeSync, existsSync, fdatasync, fstat as fstatCallback, open as openCallback, openSync, read as readCallback, readFile as readFileCallback, readSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { type FileHandle, mkdir, open, readdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { KeyedMutex } from "../../../core/storage/keyed-mutex.ts";
import { type DocumentNames, documentNames, listedFile, temporaryName } from "./file-names.ts";

/**
 * The unstorage driver {@link atomicFileDriver} returns (pass it to `createStorage({ driver })`).
 * Declared here rather than as unstorage's `Driver`, so that the published types do not pull
 * in unstorage's, whose driver declarations need packages a consumer does not have.
 */
export interface FileDriver {
  /** `fs-atomic`. */
  name: string;
  /** The options it was made with. */
  options: AtomicFileDriverOptions;
  /** True when a file holds the key. */
  hasItem(key: string): Promise<boolean>;
  /** The file's text, or null. */
  getItem(key: string): Promise<string | null>;
  /** The file's bytes, or null. */
  getItemRaw(key: string): Promise<Uint8Array | null>;
  /** Replaces the file with the text. */
  setItem(key: string, value: string): Promise<void>;
  /** Replaces the file with the bytes. */
  setItemRaw(key: string, value: Uint8Array): Promise<void>;
  /** Removes the file. */
  removeItem(key: string): Promise<void>;
  /** Every key under the prefix (`:`-separated). */
  getKeys(prefix?: string): Promise<string[]>;
}

const encoder = new TextEncoder();

/** A Node system error's `code` (`ENOENT`, `EEXIST`...), or undefined for any other value. */
export const codeOf = (err: unknown): unknown => (typeof err === "object" && err !== null && "code" in err ? err.code : undefined);
/** The path, or a folder on its way, does not exist or is a file. */
const isMissing = (err: unknown): boolean => codeOf(err) === "ENOENT" || codeOf(err) === "ENOTDIR";
/** No file there: nothing at the path, or a folder. */
export const isAbsent = (err: unknown): boolean => isMissing(err) || codeOf(err) === "EISDIR";

// One lock per document path for the whole process: a document moving aside for a folder
// of its name must not cross a write of that document (every store over any folder).
const documentLocks = new KeyedMutex();
/** How many tasks are queued or running under each path's lock (paths with none are absent). */
const lockedPaths = new Map<string, number>();

/** Runs `task` under the lock of `path`, counted in {@link lockedPaths}. */
function underLock<T>(path: string, task: () => Promise<T>): Promise<T> {
  lockedPaths.set(path, (lockedPaths.get(path) ?? 0) + 1);
  const release = () => {
    const left = lockedPaths.get(path)! - 1;
    if (left === 0) lockedPaths.delete(path);
    else lockedPaths.set(path, left);
  };
  const result = documentLocks.run(path, task);
  result.then(release, release);
  return result;
}

/** fsyncs a folder so that a rename or a new entry in it survives power loss. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(dir, "r");
  } catch (err) {
    // Windows cannot open a folder for fsync; its renames are journaled by NTFS.
    if (codeOf(err) === "EISDIR" || codeOf(err) === "EPERM") return;
    throw err;
  }
  try {
    await handle.sync();
  } catch (err) {
    // Some filesystems refuse fsync on folders; they order their metadata themselves.
    if (codeOf(err) !== "EINVAL" && codeOf(err) !== "ENOTSUP" && codeOf(err) !== "EBADF") throw err;
  } finally {
    await handle.close();
  }
}

/**
 * Files up to this size are read and written (without fsync) in synchronous calls: from the
 * page cache they take microseconds, while each of the four or five thread-pool round trips
 * of an asynchronous read or write costs more than that, most of all when the server has
 * one core. Larger files, and writes that wait for the disk, stay asynchronous.
 */
const SMALL_FILE_BYTES = 256 * 1024;

/** A document's bytes already written in full to a temporary file, to be renamed into place. */
interface StagedFile {
  /** The temporary file's path (in the document's folder). */
  readonly staged: string;
}

/** What a document is replaced with: bytes, text, or a staged file. */
type Content = Uint8Array | string | StagedFile;

/**
 * The path of `name` (one file name, no separator) in the folder `dir`. An absolute `dir` (a
 * store's folders are resolved) is joined without `join`'s normalisation, which cost ~4,000
 * instructions a call on every write; any other (a relative or drive-relative one) takes `join`.
 */
function inFolder(dir: string, name: string): string {
  if (!isAbsolute(dir)) return join(dir, name);
  return dir.endsWith(sep) ? dir + name : dir + sep + name;
}

/**
 * Writes small `data` to `temporary` and renames it over `target`, in synchronous calls (from
 * the page cache they take microseconds, SMALL_FILE_BYTES); the temporary file is removed on failure.
 */
function replaceSmallNow(temporary: string, target: string, data: Uint8Array | string, mode: number): void {
  try {
    writeFileSync(temporary, data, { mode });
    renameSync(temporary, target);
  } catch (err) {
    // A missing folder (the first write under a new one) means no temporary file was made.
    if (!isMissing(err)) {
      try {
        unlinkSync(temporary);
      } catch {
        // Gone already, or not removable: the error that matters is the write's.
      }
    }
    throw err;
  }
}

/** Writes `name` in `dir` through a temporary file renamed over it (a staged file is renamed itself). */
async function replaceFile(dir: string, name: string, data: Content, mode: number, sync: boolean): Promise<void> {
  if (typeof data !== "string" && !(data instanceof Uint8Array)) {
    // Left in place on failure: the caller may rename it under another name, then removes it.
    await rename(data.staged, inFolder(dir, name));
    if (sync) await syncDirectory(dir);
    return;
  }
  const temporary = inFolder(dir, temporaryName(name));
  const target = inFolder(dir, name);
  if (!sync && data.length <= SMALL_FILE_BYTES) return replaceSmallNow(temporary, target, data, mode);
  try {
    if (sync) {
      const handle = await open(temporary, "wx", mode);
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
    } else {
      await writeFile(temporary, data, { mode });
    }
    await rename(temporary, target);
  } catch (err) {
    // A missing folder (the first write under a new one) means no temporary file was made.
    if (!isMissing(err)) await unlink(temporary).catch(() => undefined);
    throw err;
  }
  if (sync) await syncDirectory(dir);
}

/**
 * Writes `data` to `path` atomically (temporary file, then rename); `mode` for new files.
 * With `options.sync`, the file and its folder are fsynced before it resolves.
 */
export async function writeFileAtomic(
  path: string,
  data: Uint8Array | string,
  mode = 0o644,
  options: { sync?: boolean } = {},
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await replaceFile(dirname(path), basename(path), data, mode, options.sync ?? false);
}

/**
 * The whole file, read with callbacks (fs/promises' readFile reads in small chunks and was a
 * quarter of a data GET) into a buffer the script allocates: Deno's readFile answers memory its
 * JavaScript engine does not count, so no collection ran during an export of 200 MB of images
 * and the process grew by all of them (docs/exchange.md#over-http). A store's file is replaced
 * whole, never written in place, so its size read once holds.
 */
const readFileOnce = (path: string) =>
  new Promise<Buffer>((resolve, reject) => openCallback(path, "r", (err, fd) => {
    if (err) return reject(err);
    const settle = (error: Error | null, data?: Buffer) => closeCallback(fd, () => (error ? reject(error) : resolve(data!)));
    fstatCallback(fd, (err, stats) => {
      if (err) return settle(err);
      const buffer = Buffer.allocUnsafeSlow(stats.size);
      const readFrom = (filled: number): void => {
        if (filled === buffer.length) return settle(null, buffer);
        readCallback(fd, buffer, filled, buffer.length - filled, filled, (err, count) => {
          if (err) return settle(err);
          if (count === 0) return settle(null, buffer.subarray(0, filled));
          readFrom(filled + count);
        });
      };
      readFrom(0);
    });
  }));

/** Fills `into` with the file's bytes from `offset` on, off the event loop; answers how many (fewer only at its end). */
const readIntoOnce = (path: string, offset: number, into: Uint8Array) =>
  new Promise<number>((resolve, reject) => openCallback(path, "r", (err, fd) => {
    if (err) return reject(err);
    const settle = (error: Error | null, filled = 0) => closeCallback(fd, () => (error ? reject(error) : resolve(filled)));
    const readFrom = (filled: number): void => {
      if (filled === into.length) return settle(null, filled);
      readCallback(fd, into, filled, into.length - filled, offset + filled, (err, count) => {
        if (err) return settle(err);
        if (count === 0) return settle(null, filled);
        readFrom(filled + count);
      });
    };
    readFrom(0);
  }));

/**
 * Where small reads land before they are copied out: one buffer for the process (reads into
 * it are synchronous, so none overlap), one byte longer than a small file may be.
 */
const probe = Buffer.allocUnsafeSlow(SMALL_FILE_BYTES + 1);

/**
 * The bytes of a small file, null when it is absent or a folder, undefined when it is large.
 * Three system calls (open, read, close) and no fstat: a read of a regular file returns fewer
 * bytes than asked only at its end, so a read that does not fill {@link probe} has it all
 * (reading a folder fails with EISDIR; a file longer than a small one fills the probe).
 */
function readSmallOrNull(path: string): Buffer | null | undefined;
function readSmallOrNull(path: string, plain: true): Uint8Array<ArrayBuffer> | null | undefined;
function readSmallOrNull(path: string, plain = false): Buffer | Uint8Array<ArrayBuffer> | null | undefined {
  const fd = openToRead(path);
  if (fd === null) return null;
  try {
    let filled: number;
    try {
      filled = readSync(fd, probe, 0, probe.length, 0);
    } catch (err) {
      if (codeOf(err) === "EISDIR") return null;
      throw err;
    }
    if (filled > SMALL_FILE_BYTES) return undefined;
    // plain: a Uint8Array over an ArrayBuffer of its own, what a blob store hands out. Not zero-filled
    // (allocUnsafeSlow): the copy overwrites every byte; zeroing 2 KB cost ~2,000 instructions a data GET.
    const bytes = plain ? Buffer.allocUnsafeSlow(filled) : Buffer.allocUnsafe(filled);
    probe.copy(bytes, 0, 0, filled);
    return plain ? new Uint8Array(bytes.buffer, 0, filled) : bytes;
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether a name that may be absent is looked for (`existsSync`) before it is opened or
 * stated: in Deno's node:fs a call that finds nothing throws an error made from Deno's own,
 * ~10 us (a missing document's read cost twice a found one's), where a look answers in ~1 us
 * without one. In Node and Bun the failed call is cheap, so a found document pays no look.
 * A look also answers false for a folder on the way that cannot be searched (EACCES), which
 * the open would have reported; a document there cannot be read or written either way.
 */
const LOOK_FIRST = "Deno" in globalThis;

/**
 * Opens `path` to read; null when it is absent or a folder. A read of a missing document is
 * an answer like any other (`[]`, 404), and most of its cost was the error Node throws:
 * that error is made without a stack (5.7 -> 3.5 us a miss here). Any other failure is
 * opened again, so its error carries its stack.
 */
function openToRead(path: string): number | null {
  if (LOOK_FIRST && !existsSync(path)) return null;
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return openSync(path, "r");
  } catch (err) {
    if (isAbsent(err)) return null;
  } finally {
    Error.stackTraceLimit = limit;
  }
  return openSync(path, "r");
}

/**
 * Whether a document may be at `path`, the escaped name tried after the plain one: a stat
 * that finds nothing returns without an error (about 1 us, where a failed open costs 3.5).
 */
function mayBeFile(path: string): boolean {
  if (LOOK_FIRST && !existsSync(path)) return false;
  try {
    const found = statSync(path, { throwIfNoEntry: false });
    return found === undefined ? false : !found.isDirectory();
  } catch (err) {
    // A document where a folder of the path would be (`x.json` read as `x.json/y.json`) throws ENOTDIR: nothing there either.
    if (isMissing(err)) return false;
    throw err;
  }
}

/**
 * The rest of a read whose plain name gave `first` (null: absent, undefined: large): the large
 * file, else the escaped name, looked for first (it rarely exists).
 */
async function readAfter(paths: readonly string[], first: null | undefined): Promise<Buffer | null> {
  const found = first === undefined ? await readLargeOrNull(paths[0]!) : null;
  if (found !== null) return found;
  for (let i = 1; i < paths.length; i++) {
    const other = mayBeFile(paths[i]!) ? await readOrNull(paths[i]!) : null;
    if (other !== null) return other;
  }
  return null;
}

/** The bytes of a file, or null when it is absent or a folder. */
async function readOrNull(path: string): Promise<Buffer | null> {
  const small = readSmallOrNull(path);
  return small !== undefined ? small : await readLargeOrNull(path);
}

/** The bytes of a file read in one go (a large one), or null when it is absent or a folder. */
async function readLargeOrNull(path: string): Promise<Buffer | null> {
  try {
    return await readFileOnce(path);
  } catch (err) {
    if (isAbsent(err)) return null;
    throw err;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    // EISDIR (Linux), EPERM (macOS), ENOTEMPTY (Deno): the name is a folder, so no document is there.
    if (isMissing(err) || !(await isFile(path))) return;
    throw err;
  }
}

/** How many keys' places a store remembers (a few hundred KB at most). */
const MAX_REMEMBERED_PLACES = 4096;

/** Where one key's document lives. */
interface DocumentPlace {
  /** Its folder. */
  dir: string;
  /** Its key's folders, from the store's folder down. */
  folders: readonly string[];
  /** Its last key segment. */
  segment: string;
  /** Its possible file names. */
  names: DocumentNames;
  /** The path its plain name would have: the key of its lock. */
  path: string;
  /** The paths it may be read from, plain name first. */
  candidates: readonly string[];
}

/** A document file opened for reading and writing (synchronously: close it with `closeSync`), and where it is. */
export interface OpenDocument {
  /** The open file's descriptor. */
  fd: number;
  /** Its path. */
  path: string;
}

/**
 * Calls on a file open by descriptor. Its data sync runs off the event loop: the one call of
 * a synced write that waits for the disk. Opens, reads, writes and closes of a document are
 * synchronous calls: the page cache answers in microseconds, where a thread-pool round trip
 * costs more and waits behind the data syncs of other requests in the pool. An object, so a
 * test can count the data syncs.
 */
export const descriptors = {
  /** Data-syncs the file (fdatasync). */
  dataSync: (fd: number): Promise<void> => new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve()))),
  /** The whole file from its start (a fresh descriptor), off the event loop: for files of any size. */
  readAll: (fd: number): Promise<Buffer> => new Promise((resolve, reject) => readFileCallback(fd, (err, data) => (err ? reject(err) : resolve(data)))),
};

/** A document under its lock: what the in-place append needs. */
export interface LockedDocument {
  /** The path its plain name would have (stable per key). */
  readonly path: string;
  /** The paths the document may be at, its plain name first (file-names.ts). */
  readonly paths: readonly string[];
  /** Opens the existing document for reading and writing; null when there is none. */
  open(): Promise<OpenDocument | null>;
  /** Replaces (or creates) the document atomically. */
  replace(data: Uint8Array): Promise<void>;
}

/** The documents of one store folder: the file layout of file-names.ts, with writes locked per document. */
export interface DocumentFiles {
  /** The bytes of a key's document, or null. */
  read(key: string): Promise<Buffer | null>;
  /** {@link DocumentFiles.read} as a plain `Uint8Array` (not a `Buffer`), as a blob store hands bytes out. */
  readBytes(key: string): Promise<Uint8Array<ArrayBuffer> | null>;
  /** Fills `into` with a key's bytes from `offset` on (no buffer of its own); answers how many, or null when absent. */
  readInto(key: string, offset: number, into: Uint8Array): Promise<number | null>;
  /** True when a key's document exists. */
  has(key: string): Promise<boolean>;
  /** Replaces (or creates) a key's document atomically. */
  write(key: string, data: Uint8Array | string): Promise<void>;
  /**
   * Replaces (or creates) a key's document atomically with the `size` bytes of `pieces`,
   * written to a temporary file as they come, then renamed into place.
   */
  writeStream(key: string, size: number, pieces: AsyncIterable<Uint8Array>): Promise<void>;
  /** Removes a key's document; absent is fine. */
  remove(key: string): Promise<void>;
  /** The keys (`:`-separated) under a `:`-separated prefix of folders. */
  list(prefix: string): Promise<string[]>;
  /** Runs `task` holding the document's lock (no write, move or removal of it meanwhile). */
  exclusive<T>(key: string, task: (document: LockedDocument) => Promise<T>): Promise<T>;
}

/** The documents under `base`; `sync` fsyncs every write before it resolves. */
export function documentFiles(base: string, sync = false): DocumentFiles {
  const root = resolve(base);

  const findPlace = (key: string): DocumentPlace => {
    const parts = key.split(/[:/]/);
    const segment = parts.pop() ?? "";
    const dir = resolve(root, ...parts);
    if (segment === "" || segment === "." || segment === ".." || (dir !== root && !dir.startsWith(root + sep))) {
      throw new Error("storage key resolves outside the store");
    }
    const folders = dir === root ? [] : dir.slice(root.length + 1).split(sep);
    const names = documentNames(segment);
    const candidates = names.plain === undefined ? [join(dir, names.escaped)] : [join(dir, names.plain), join(dir, names.escaped)];
    return { dir, folders, segment, names, path: join(dir, segment), candidates };
  };
  // A key's place is a pure function of the key: the keys read and written most often skip
  // the path arithmetic (split, resolve, join) on every request. Bounded; emptied when full.
  const places = new Map<string, DocumentPlace>();
  const placeOf = (key: string): DocumentPlace => {
    let place = places.get(key);
    if (place === undefined) {
      place = findPlace(key);
      if (places.size >= MAX_REMEMBERED_PLACES) places.clear();
      places.set(key, place);
    }
    return place;
  };

  /** Moves the document at `path` to its escaped name, so that a folder can take its name. */
  async function moveAside(path: string): Promise<void> {
    const dir = dirname(path);
    const names = documentNames(basename(path));
    if (names.record !== undefined) await replaceFile(dir, names.record, basename(path), 0o644, sync);
    await rename(path, join(dir, names.escaped));
    if (sync) await syncDirectory(dir);
  }

  /** Makes `path` a folder; a document of that name moves aside (both keys are storable: docs/storage.md). */
  async function ensureFolder(path: string): Promise<void> {
    try {
      await mkdir(path);
      if (sync) await syncDirectory(dirname(path));
      return;
    } catch (err) {
      if (codeOf(err) !== "EEXIST") throw err;
    }
    if (await isFolder(path)) return;
    await underLock(path, async () => {
      if (await isFile(path)) await moveAside(path);
      await mkdir(path).catch((err: unknown) => {
        if (codeOf(err) !== "EEXIST") throw err;
      });
      if (sync) await syncDirectory(dirname(path));
    });
  }

  // Folders this store made or found (the service never removes one): a new document's folders
  // are made from the first one not known (a new case: one mkdir, not four calls and an error).
  // Bounded; emptied when full.
  const knownFolders = new Set<string>();
  const knowFolder = (path: string) => {
    if (knownFolders.size >= MAX_REMEMBERED_PLACES) knownFolders.clear();
    knownFolders.add(path);
  };

  async function ensureFolders(place: DocumentPlace): Promise<void> {
    try {
      await makeFolders(place, true);
    } catch (err) {
      // A known folder was removed (or made a file) behind this store's back: forget them all, make the whole way.
      if (!isMissing(err)) throw err;
      knownFolders.clear();
      await makeFolders(place, false);
    }
  }

  async function makeFolders(place: DocumentPlace, skipKnown: boolean): Promise<void> {
    if (!skipKnown || !knownFolders.has(root)) {
      // The store's own folder is made whole: it is ours, no document can hold its name.
      const made = await mkdir(root, { recursive: true });
      for (let dir = root; made !== undefined && sync; dir = dirname(dir)) {
        await syncDirectory(dirname(dir)); // each new folder's entry is in its parent
        if (dir === made) break;
      }
      knowFolder(root);
    }
    let path = root;
    for (const folder of place.folders) {
      path = join(path, folder);
      if (skipKnown && knownFolders.has(path)) continue;
      await ensureFolder(path);
      knowFolder(path);
    }
  }

  /** Writes one file of the document's folder, creating the folders on the way when missing. */
  async function writeInFolder(place: DocumentPlace, name: string, data: Content, folderMissing = false): Promise<void> {
    if (!folderMissing) {
      try {
        return await replaceFile(place.dir, name, data, 0o644, sync);
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    }
    // The write found its folder missing: it is known no more (ensureFolders sees to any gone above it).
    knownFolders.delete(place.dir);
    await ensureFolders(place);
    await replaceFile(place.dir, name, data, 0o644, sync);
  }

  /** Writes the document under its escaped name; a hashed name gets its side record first. */
  async function writeEscaped(place: DocumentPlace, data: Content): Promise<void> {
    if (place.names.record !== undefined) await writeInFolder(place, place.names.record, encoder.encode(place.segment));
    await writeInFolder(place, place.names.escaped, data);
  }

  /** Writes under the plain name unless a folder has it or it does not fit. Caller holds the lock. */
  async function writeUnlocked(place: DocumentPlace, data: Content, folderMissing = false): Promise<void> {
    if (place.names.plain === undefined) return writeEscaped(place, data);
    try {
      await writeInFolder(place, place.names.plain, data, folderMissing);
    } catch (err) {
      // A folder has the name (EISDIR on Linux; other systems say ENOTEMPTY or EEXIST).
      if (!(await isFolder(join(place.dir, place.names.plain)))) throw err;
      await writeEscaped(place, data);
    }
  }

  /** Writes `pieces` to a new temporary file in the document's folder; its path. */
  async function stage(place: DocumentPlace, size: number, pieces: AsyncIterable<Uint8Array>): Promise<StagedFile> {
    await ensureFolders(place);
    const staged = join(place.dir, temporaryName(place.segment));
    try {
      const handle = await open(staged, "wx", 0o644);
      try {
        let written = 0;
        for await (const piece of pieces) {
          written += piece.length;
          if (written > size) throw new Error(`the stream holds more than the ${size} bytes announced`);
          await handle.writeFile(piece);
        }
        if (written !== size) throw new Error(`the stream ended after ${written} of the ${size} bytes announced`);
        if (sync) await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (err) {
      await unlink(staged).catch(() => undefined);
      throw err;
    }
    return { staged };
  }

  /** The candidate paths of a document, plain first. */
  const candidates = (place: DocumentPlace): readonly string[] => place.candidates;

  function openExistingNow(place: DocumentPlace): OpenDocument | null {
    for (const path of candidates(place)) {
      try {
        return { fd: openSync(path, "r+"), path };
      } catch (err) {
        if (!isAbsent(err)) throw err;
      }
    }
    return null;
  }

  /** The first candidate that opens, as a promise (a failure as a rejection, never a throw). */
  function openExisting(place: DocumentPlace): Promise<OpenDocument | null> {
    try {
      return Promise.resolve(openExistingNow(place));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async function listFolder(dir: string, prefix: string[], out: Set<string>): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    for (const entry of entries) {
      if (entry.isDirectory()) {
        await listFolder(join(dir, entry.name), [...prefix, entry.name], out);
        continue;
      }
      if (!entry.isFile()) continue;
      const listed = listedFile(entry.name);
      if (listed.kind === "document") out.add([...prefix, listed.segment].join(":"));
      if (listed.kind === "hashed") {
        // The real name is in the side record; without one the file is not (yet) a document.
        const segment = await readFile(join(dir, listed.record), "utf8").catch((err: unknown) => {
          if (isMissing(err)) return null;
          throw err;
        });
        if (segment !== null) out.add([...prefix, segment].join(":"));
      }
    }
  }

  return {
    read(key) {
      // The plain name is opened at once: a small document found there is handed back without
      // an async step of its own (each one is a promise and a turn of the microtask queue).
      let paths: readonly string[];
      let small: Buffer | null | undefined;
      try {
        paths = candidates(placeOf(key));
        small = readSmallOrNull(paths[0]!);
      } catch (err) {
        return Promise.reject(err);
      }
      return small !== null && small !== undefined ? Promise.resolve(small) : readAfter(paths, small);
    },
    readBytes(key) {
      let paths: readonly string[];
      let small: Uint8Array<ArrayBuffer> | null | undefined;
      try {
        paths = candidates(placeOf(key));
        small = readSmallOrNull(paths[0]!, true);
      } catch (err) {
        return Promise.reject(err);
      }
      if (small !== null && small !== undefined) return Promise.resolve(small);
      return readAfter(paths, small).then((found) => (found === null ? null : plainBytes(found)));
    },
    async readInto(key, offset, into) {
      for (const path of candidates(placeOf(key))) {
        try {
          return await readIntoOnce(path, offset, into);
        } catch (err) {
          if (!isAbsent(err)) throw err;
        }
      }
      return null;
    },
    async has(key) {
      for (const path of candidates(placeOf(key))) {
        if (await isFile(path)) return true;
      }
      return false;
    },
    write(key, data) {
      const place = placeOf(key);
      // Nothing queued or running under the document's lock: a write of its plain name ends in
      // synchronous calls before any other task can start, as if it had taken the lock, without
      // the lock's promises. A failure takes the locked way, which decides (a missing folder is
      // made there without trying the write again first; a folder of that name; or the error again).
      let folderMissing = false;
      if (!sync && place.names.plain !== undefined && data.length <= SMALL_FILE_BYTES && !lockedPaths.has(place.path)) {
        // Its error is never passed on (the locked way throws its own): made without a stack.
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0;
        try {
          replaceSmallNow(inFolder(place.dir, temporaryName(place.names.plain)), inFolder(place.dir, place.names.plain), data, 0o644);
          return Promise.resolve();
        } catch (err) {
          folderMissing = isMissing(err);
        } finally {
          Error.stackTraceLimit = limit;
        }
      }
      return underLock(place.path, () => writeUnlocked(place, data, folderMissing));
    },
    async writeStream(key, size, pieces) {
      const place = placeOf(key);
      // Staged outside the lock: only the rename into place must not cross another write.
      const staged = await stage(place, size, pieces);
      try {
        await underLock(place.path, () => writeUnlocked(place, staged));
      } finally {
        await unlink(staged.staged).catch(() => undefined);
      }
    },
    remove(key) {
      const place = placeOf(key);
      return underLock(place.path, async () => {
        for (const path of candidates(place)) await unlinkIfPresent(path);
        if (place.names.record !== undefined) await unlinkIfPresent(join(place.dir, place.names.record));
      });
    },
    async list(prefix) {
      const start = prefix.split(":").filter((part) => part !== "");
      const out = new Set<string>();
      await listFolder(start.length ? resolve(root, ...start) : root, start, out);
      return [...out];
    },
    exclusive(key, task) {
      const place = placeOf(key);
      return underLock(place.path, () =>
        task({
          path: place.path,
          paths: candidates(place),
          open: () => openExisting(place),
          replace: (data) => writeUnlocked(place, data),
        })
      );
    },
  };
}

/** A Buffer's bytes as a plain `Uint8Array` over the same memory (a copy only if it is not an `ArrayBuffer`'s). */
function plainBytes(buffer: Buffer): Uint8Array<ArrayBuffer> {
  return buffer.buffer instanceof ArrayBuffer ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength) : new Uint8Array(buffer);
}

/** Options of {@link atomicFileDriver}. */
export interface AtomicFileDriverOptions {
  /** The store's folder. */
  base: string;
  /** fsync every write (file and folder) before it resolves; default false. */
  sync?: boolean;
}

/** The unstorage driver: one file per key under `base`, replaced atomically. */
export function atomicFileDriver(options: AtomicFileDriverOptions): FileDriver {
  const files = documentFiles(options.base, options.sync ?? false);
  return {
    name: "fs-atomic",
    options,
    hasItem: (key) => files.has(key),
    async getItem(key) {
      return (await files.read(key))?.toString("utf8") ?? null;
    },
    getItemRaw: (key) => files.read(key),
    setItem: (key, value) => files.write(key, value),
    setItemRaw: (key, value) => files.write(key, value),
    removeItem: (key) => files.remove(key),
    getKeys: (prefix) => files.list(prefix ?? ""),
  };
}
