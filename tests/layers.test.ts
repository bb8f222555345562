/**
 * The layers of src/core point one way: a folder imports only from folders of a lower layer
 * (and from itself). The order is docs/architecture.md's "Layers" section; this test reads every
 * relative import of every file and names each upward or sideways one.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const core = join(root, "src/core");

/** Lowest first; one entry per layer, the folders (or root files) on it. */
export const LAYERS: readonly (readonly string[])[] = [
  ["ports.ts", "schemas"],
  ["errors.ts"],
  ["encoding"],
  ["storage", "rate-limit", "identity", "outbound"],
  ["encryption", "history"],
  ["config"],
  ["audit", "images", "mail", "captcha", "cases"],
  ["users"],
  ["pdf", "exchange", "review"],
  ["http", "backup"],
  ["workers"],
  ["service"],
];

/** The layer unit of a path under src/core: its top folder, or the root file itself. */
function unitOf(path: string): string {
  return relative(core, path).split(/[\\/]/)[0]!;
}

function layerOf(unit: string): number {
  const index = LAYERS.findIndex((layer) => layer.includes(unit));
  if (index === -1) throw new Error(`src/core/${unit} is on no layer: add it to LAYERS and the Layers section of docs/architecture.md`);
  return index;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

describe("layers of src/core", () => {
  it("every folder is on a layer, and no import points up or sideways", () => {
    const wrong: string[] = [];
    for (const file of filesUnder(core)) {
      const from = unitOf(file);
      const source = readFileSync(file, "utf8");
      for (const match of source.matchAll(IMPORT)) {
        const target = resolve(dirname(file), match[1] ?? match[2]!);
        if (!target.startsWith(core)) {
          wrong.push(`${relative(root, file)} imports ${match[1] ?? match[2]} outside src/core`);
          continue;
        }
        const to = unitOf(target);
        if (to === from) continue;
        if (layerOf(to) >= layerOf(from)) wrong.push(`${relative(root, file)} (${from}, layer ${layerOf(from)}) imports ${relative(root, target)} (${to}, layer ${layerOf(to)})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("the Layers section of docs/architecture.md lists the same order", () => {
    const readme = readFileSync(join(root, "docs/architecture.md"), "utf8");
    const section = /## Layers\n([\s\S]*?)(?:\n## |$)/.exec(readme)?.[1] ?? "";
    const listed = [...section.matchAll(/^\s*\d+\.\s+(.+)$/gm)].map((line) => [...line[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, "")));
    expect(listed).toEqual(LAYERS.map((layer) => [...layer]));
  });
});
