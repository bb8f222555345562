/**
 * The system tools some suites use (redis-server, poppler, LibreOffice, curl). A missing one fails
 * the test with the one command that installs them all, never a silent skip.
 */
import { spawnSync } from "node:child_process";

/** What to run when a tool is missing (scripts/provision.sh; `npm test` runs it first). */
export const PROVISION_COMMAND = "npm run provision";

/** True when `tool` is on PATH (it ran at all, whatever it answered). */
export function hasTool(tool: string): boolean {
  const result = spawnSync(tool, ["--version"], { stdio: "ignore", timeout: 60_000 });
  return (result.error as NodeJS.ErrnoException | undefined)?.code !== "ENOENT";
}

/** The error a suite fails with when `tool` (from the Debian package `debianPackage`) is missing. */
export function missingTool(tool: string, debianPackage: string): Error {
  return new Error(
    `${tool} is not installed (Debian package ${debianPackage}); run \`${PROVISION_COMMAND}\` (as root or with sudo), ` +
      "which installs redis-server, poppler-utils, LibreOffice Calc and curl for the tests",
  );
}

/** Throws {@link missingTool} unless `tool` is on PATH. */
export function requireTool(tool: string, debianPackage: string): void {
  if (!hasTool(tool)) throw missingTool(tool, debianPackage);
}
