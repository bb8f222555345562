/**
 * @module
 * The environment of the commands (`serve`, `export`, `import`): a `.env` file in the working
 * directory under the process environment (docs/configuration.md).
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseEnv } from "node:util";

/** The environment: `.env` of the working directory under the process environment. */
export function readEnvironment(): Record<string, string | undefined> {
  const file = resolve(".env");
  const fromFile = existsSync(file) ? parseEnv(readFileSync(file, "utf8")) : {};
  return { ...fromFile, ...process.env };
}
