// Servers a bench started, stopped when the bench ends however it ends: an error, Ctrl-C, or
// its output cut off (`| head`), which left a `serve` running on the data folder before.
// Importing this makes Ctrl-C, SIGTERM and SIGHUP end the bench through its exit handlers
// (a signal's default ends the process without them), so a bench's own cleanup runs too.
import os from "node:os";

const children = new Set();
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => process.exit(128 + os.constants.signals[signal]));

/** Keeps `child` to be killed (SIGKILL) when this process exits before stopping it; answers `child`. */
export function track(child) {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}
