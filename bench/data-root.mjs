// Where a bench keeps the files of the stores it measures (--data-root, default the system's
// temporary folder), and which filesystem that is, printed with the figures: a file PUT or a
// data sync costs several times more on one filesystem than another (on ext4 without a
// journal, a new file's inode is found by skipping every inode freed in the last seconds;
// bench/README.md#the-filesystem-under-the-data).
import { execFileSync } from "node:child_process";
import { readFileSync, readlinkSync, statSync } from "node:fs";
import os from "node:os";
import { basename, resolve } from "node:path";

/** The folder for a bench's stores (`option`, else the system's temporary folder) and a line that says what filesystem holds it. */
export function dataRoot(option) {
  const dir = resolve(option ?? os.tmpdir());
  let stat;
  try {
    stat = statSync(dir);
  } catch {
    throw new Error(`--data-root ${dir}: no such folder`);
  }
  if (!stat.isDirectory()) throw new Error(`--data-root ${dir}: not a folder`);
  return { dir, description: `${dir} (${filesystemOf(dir, stat)})` };
}

/** {@link dataRoot}, or the reason on stderr and exit code 2 (a usage error) when the folder is not one. */
export function dataRootOrExit(option) {
  try {
    return dataRoot(option);
  } catch (err) {
    console.error(err.message);
    process.exit(2);
  }
}

/** "ext4 on /dev/vda, no journal; rw,relatime,discard" where Linux says so; what is known elsewhere. */
function filesystemOf(dir, stat) {
  let source = "?";
  let type = "?";
  let mountOptions = "";
  try {
    [source = "?", type = "?", mountOptions = ""] = execFileSync("findmnt", ["-n", "-o", "SOURCE,FSTYPE,OPTIONS", "-T", dir], { encoding: "utf8" }).trim().split(/\s+/);
  } catch {
    return `${os.platform()}; filesystem unknown (no findmnt)`;
  }
  const journal = type === "ext4" ? ext4Journal(stat.dev) : undefined;
  return `${type} on ${source}${journal === undefined ? "" : `, ${journal}`}; ${mountOptions}`;
}

/** Whether the ext4 filesystem of device number `dev` has a journal, from /sys/fs/ext4/{device}/journal_task ("<none>" without one). */
function ext4Journal(dev) {
  // Linux's encoding of a device number (glibc's gnu_dev_major and gnu_dev_minor).
  const number = BigInt(dev);
  const major = Number(((number >> 8n) & 0xfffn) | ((number >> 32n) & ~0xfffn));
  const minor = Number((number & 0xffn) | ((number >> 12n) & ~0xffn));
  try {
    const name = basename(readlinkSync(`/sys/dev/block/${major}:${minor}`));
    return readFileSync(`/sys/fs/ext4/${name}/journal_task`, "utf8").trim() === "<none>" ? "no journal" : "journal";
  } catch {
    return undefined;
  }
}
