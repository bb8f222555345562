/**
 * @module
 * Secrets `serve` generates when they are not configured (CONTRACT "Starting it"): made
 * once, kept in `DATA/secrets.json` (mode 600) so they survive restarts, printed only on
 * the start that made them. A configured value always wins and is never printed.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { GENERATED_SECRETS } from "../../core/config.ts";
import { writeFileAtomic } from "./file-driver.ts";

/** The environment with every generated secret filled in, and the names made just now. */
export interface SecretsResult {
  env: Record<string, string>;
  generated: string[];
}

function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Fills unset secrets from `DATA/secrets.json`, generating and storing missing ones. */
export async function ensureSecrets(dataDir: string, env: Readonly<Record<string, string>>): Promise<SecretsResult> {
  const file = join(dataDir, "secrets.json");
  let stored: Record<string, string> = {};
  try {
    const parsed: unknown = JSON.parse(await readFile(file, "utf8"));
    if (parsed !== null && typeof parsed === "object") {
      stored = Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] =>
        typeof entry[1] === "string"
      ));
    }
  } catch (err) {
    if (!(typeof err === "object" && err !== null && "code" in err && err.code === "ENOENT")) throw err;
  }
  const result: Record<string, string> = { ...env };
  const generated: string[] = [];
  for (const name of GENERATED_SECRETS) {
    if (result[name]) continue;
    if (stored[name] === undefined) {
      stored[name] = newSecret();
      generated.push(name);
    }
    result[name] = stored[name];
  }
  if (generated.length > 0) {
    await writeFileAtomic(file, `${JSON.stringify(stored, null, 2)}\n`, 0o600);
  }
  return { env: result, generated };
}
