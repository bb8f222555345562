/**
 * @module
 * An unstorage driver for files that never leaves a half-written file: each write goes to
 * a temporary file in the same folder and is renamed over the target, which POSIX makes
 * atomic. unstorage's own fs driver writes in place. Used by the Node, Bun and Deno
 * adapters (all three run `node:fs`).
 */
import { readFile as readFileCallback } from "node:fs";
import { mkdir, readdir, rename, stat, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { randomUUID } from "node:crypto";
import { type Driver as UnstorageDriver, defineDriver } from "unstorage";

/**
 * unstorage's `Driver`, under its own name.
 * (`deno doc --lint` reads `node_modules` as local code, so naming the npm type directly
 * would make it demand JSDoc for the npm package's own declarations.)
 * @ignore
 */
type Driver = UnstorageDriver;

/** Temporary files are `.{name}.{uuid}.tmp`; listings skip them. */
const isTemporary = (name: string): boolean => name.startsWith(".") && name.endsWith(".tmp");

/** The file of a `/`- or `:`-separated key under `base`; refuses anything outside it. */
export function fileOfKey(base: string, key: string): string {
  const path = resolve(base, ...key.split(/[:/]/));
  if (!path.startsWith(base + sep)) throw new Error("storage key resolves outside the store");
  return path;
}

/** Writes `data` to `path` atomically (temporary file, then rename); `mode` for new files. */
export async function writeFileAtomic(path: string, data: Uint8Array | string, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);
  try {
    await writeFile(temporary, data, { mode });
    await rename(temporary, path);
  } catch (err) {
    await unlink(temporary).catch(() => undefined);
    throw err;
  }
}

const isMissing = (err: unknown): boolean =>
  typeof err === "object" && err !== null && "code" in err && (err.code === "ENOENT" || err.code === "ENOTDIR");

// Callback readFile: fs/promises' readFile reads in small chunks and was a quarter of a data GET.
const readFileOnce = (path: string) =>
  new Promise<Buffer>((resolve, reject) => readFileCallback(path, (err, data) => (err ? reject(err) : resolve(data))));

async function readOrNull(path: string): Promise<Buffer | null> {
  try {
    return await readFileOnce(path);
  } catch (err) {
    if (isMissing(err) || (typeof err === "object" && err !== null && "code" in err && err.code === "EISDIR")) {
      return null;
    }
    throw err;
  }
}

async function listFiles(dir: string, prefix: string[], out: string[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (isMissing(err)) return;
    throw err;
  }
  for (const entry of entries) {
    if (entry.isDirectory()) await listFiles(join(dir, entry.name), [...prefix, entry.name], out);
    else if (entry.isFile() && !isTemporary(entry.name)) out.push([...prefix, entry.name].join(":"));
  }
}

/** Options of {@link atomicFileDriver}. */
export interface AtomicFileDriverOptions {
  /** The store's folder. */
  base: string;
}

/** The unstorage driver: one file per key under `base`, replaced atomically. */
export const atomicFileDriver: (options: AtomicFileDriverOptions) => Driver = defineDriver((options: AtomicFileDriverOptions) => {
  const base = resolve(options.base);
  return {
    name: "fs-atomic",
    options,
    async hasItem(key) {
      try {
        return (await stat(fileOfKey(base, key))).isFile();
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
    },
    async getItem(key) {
      return (await readOrNull(fileOfKey(base, key)))?.toString("utf8") ?? null;
    },
    async getItemRaw(key) {
      return await readOrNull(fileOfKey(base, key));
    },
    async setItem(key, value) {
      await writeFileAtomic(fileOfKey(base, key), value);
    },
    async setItemRaw(key, value: Uint8Array) {
      await writeFileAtomic(fileOfKey(base, key), value);
    },
    async removeItem(key) {
      await unlink(fileOfKey(base, key)).catch((err: unknown) => {
        if (!isMissing(err)) throw err;
      });
    },
    async getKeys(prefix) {
      const start = prefix ? prefix.split(":").filter((part) => part !== "") : [];
      const out: string[] = [];
      await listFiles(start.length ? resolve(base, ...start) : base, start, out);
      return out;
    },
  };
});
