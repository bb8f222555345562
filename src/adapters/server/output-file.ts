/**
 * @module
 * Where the commands write an export (`--out`): through a temporary file renamed into place, so
 * a failed export leaves nothing behind. A path that is something other than a regular file (a
 * symlink, a device such as `/dev/null`, a FIFO, a folder) is refused: the rename would replace
 * it with a file (as root, `/dev/null` itself) instead of writing where it points.
 */
import { lstat, open, rename, rm } from "node:fs/promises";
import { codeOf } from "./files/file-driver.ts";

/** `--out` names something an export may not replace. */
export class OutputPathError extends Error {}

/** What `path` is, when it is there and not a regular file. */
async function notAFile(path: string): Promise<string | undefined> {
  try {
    const found = await lstat(path);
    if (found.isFile()) return undefined;
    if (found.isSymbolicLink()) return "a symbolic link";
    if (found.isDirectory()) return "a folder";
    if (found.isFIFO()) return "a FIFO";
    if (found.isCharacterDevice() || found.isBlockDevice()) return "a device";
    return "not a regular file";
  } catch (err) {
    if (codeOf(err) === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * Writes what `produce` hands to its `write` into `path` (a new file, or a regular file it
 * replaces) and answers the number of bytes; an {@link OutputPathError} when `path` is anything else.
 */
export async function writeOutputFile(path: string, produce: (write: (chunk: Uint8Array) => Promise<void>) => Promise<void>): Promise<number> {
  const what = await notAFile(path);
  if (what !== undefined) throw new OutputPathError(`--out ${path} is ${what}: give the path of a regular file (new, or one to replace)`);
  const temporary = `${path}.partial-${crypto.randomUUID().slice(0, 8)}`;
  const handle = await open(temporary, "wx");
  let bytes = 0;
  try {
    await produce(async (chunk) => {
      for (let offset = 0; offset < chunk.length;) {
        const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset);
        offset += bytesWritten;
      }
      bytes += chunk.length;
    });
    await handle.sync();
    await handle.close();
    await rename(temporary, path);
    return bytes;
  } catch (err) {
    await handle.close().catch(() => {});
    await rm(temporary, { force: true });
    throw err;
  }
}
