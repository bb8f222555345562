/**
 * The adapters point one way: `s3/` (fetch only) below `server/` (what Node, Bun and Deno
 * share), below the per-runtime folders; no runtime's folder reaches into another's, and
 * `cloudflare/` uses neither `server/` nor `node:`. This test reads every import of
 * src/adapters and fails on one that breaks that.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const adapters = join(root, "src/adapters");

/** Which adapter folders each may import from (besides itself and src/core). */
const ALLOWED: Record<string, readonly string[]> = {
  s3: [],
  server: ["s3"],
  node: ["server"],
  bun: ["server"],
  deno: ["server"],
  cloudflare: [],
};

/** Folders whose code runs on every runtime: no node: module. */
const RUNTIME_NEUTRAL = new Set(["s3", "cloudflare"]);

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const pattern = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"|(?:^|\n)\s*import\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g;
  return [...text.matchAll(pattern)].map((match) => match[1] ?? match[2] ?? match[3] ?? "");
}

function folderOf(file: string): string {
  return relative(adapters, file).split("/")[0] ?? "";
}

describe("src/adapters layout", () => {
  it("every folder of src/adapters is on the list", () => {
    const folders = readdirSync(adapters, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders.sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  it("reads the imports it checks", () => {
    expect(importsOf(join(adapters, "server/start.ts"))).toContain("../s3/s3-ports.ts");
    expect(importsOf(join(adapters, "server/node-http-listen.ts"))).toContain("node:net");
  });

  it("each folder imports only itself, src/core and the folders below it; s3/ and cloudflare/ use no node: module", () => {
    const broken: string[] = [];
    for (const file of sourceFiles(adapters)) {
      const from = folderOf(file);
      for (const specifier of importsOf(file)) {
        if (specifier.startsWith("node:")) {
          if (RUNTIME_NEUTRAL.has(from)) broken.push(`${relative(root, file)} imports ${specifier}`);
          continue;
        }
        if (!specifier.startsWith(".")) continue;
        const target = resolve(dirname(file), specifier);
        if (!target.startsWith(adapters + "/")) continue;
        const to = folderOf(target);
        if (to !== from && !(ALLOWED[from] ?? []).includes(to)) broken.push(`${relative(root, file)} imports ${specifier}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
