/**
 * An export written with --out replaces a regular file or makes a new one; anything else at
 * that path (a symlink, a FIFO, a folder, a device) is refused and left as it was, where the
 * rename used to replace it with a file. Runs under Node, Bun and Deno.
 */
import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OutputPathError, writeOutputFile } from "../../../src/adapters/server/output-file.ts";

const dir = mkdtempSync(join(tmpdir(), "fa-out-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const bytes = new TextEncoder().encode("export");
const write = (path: string) => writeOutputFile(path, (put) => put(bytes));

describe("writeOutputFile", () => {
  it("makes a new file, and replaces a regular one", async () => {
    const path = join(dir, "new.zip");
    expect(await write(path)).toBe(bytes.length);
    writeFileSync(join(dir, "old.zip"), "before");
    await write(join(dir, "old.zip"));
    expect(readFileSync(path, "utf8")).toBe("export");
    expect(readFileSync(join(dir, "old.zip"), "utf8")).toBe("export");
  });

  it("refuses a symlink, a FIFO and a folder, leaving each as it was and no temporary file", async () => {
    writeFileSync(join(dir, "target.txt"), "kept");
    symlinkSync(join(dir, "target.txt"), join(dir, "link.zip"));
    mkdirSync(join(dir, "folder.zip"));
    const paths: [string, string][] = [[join(dir, "link.zip"), "a symbolic link"], [join(dir, "folder.zip"), "a folder"]];
    if (spawnSync("mkfifo", [join(dir, "fifo.zip")]).status === 0) paths.push([join(dir, "fifo.zip"), "a FIFO"]);
    // No device here: were the check ever lost, a run as root would replace /dev/null itself.
    for (const [path, what] of paths) {
      const before = lstatSync(path);
      await expect(write(path), path).rejects.toThrow(OutputPathError);
      await expect(write(path)).rejects.toThrow(`--out ${path} is ${what}: give the path of a regular file (new, or one to replace)`);
      const after = lstatSync(path);
      expect([after.ino, after.mode], path).toEqual([before.ino, before.mode]);
    }
    expect(readFileSync(join(dir, "target.txt"), "utf8")).toBe("kept");
    expect(readdirSync(dir).filter((name) => name.includes(".partial-"))).toEqual([]);
  });
});
