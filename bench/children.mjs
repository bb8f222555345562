// Servers a bench started, stopped when the bench ends however it ends: an error, Ctrl-C, or
// its output cut off (`| head`), which left a `serve` running on the data folder before.
import os from "node:os";

const children = new Set();
let hooked = false;

/** Keeps `child` to be killed (SIGKILL) when this process exits before stopping it; answers `child`. */
export function track(child) {
  if (!hooked) {
    hooked = true;
    process.on("exit", () => {
      for (const kept of children) if (kept.exitCode === null && kept.signalCode === null) kept.kill("SIGKILL");
    });
    // A signal ends the process without its exit handlers: exit instead, so they run.
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => process.exit(128 + os.constants.signals[signal]));
  }
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}
