/**
 * Comments point inside the repository: every `docs/<page>.md#<anchor>` named in the code or
 * the README must be a page of docs/ with a heading of that anchor (GitHub's slugs).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");

function anchorsOf(page: string, folder = join(root, "docs")): Set<string> {
  const text = readFileSync(join(folder, page), "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => slug(match[1]!)));
}

function sources(): string[] {
  const files = readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.parentPath.includes("fonts"))
    .map((entry) => join(entry.parentPath, entry.name));
  return [...files, join(root, "mod.ts"), join(root, "README.md")];
}

describe("docs links", () => {
  it("every docs/ page and anchor the code and README name exists", () => {
    const pages = new Map(readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => [name, anchorsOf(name)]));
    const broken: string[] = [];
    for (const file of sources()) {
      for (const match of readFileSync(file, "utf8").matchAll(/docs\/([\w-]+\.md)(?:#([\w-]+))?/g)) {
        const anchors = pages.get(match[1]!);
        if (anchors === undefined || (match[2] !== undefined && !anchors.has(match[2]))) broken.push(`${file.slice(root.length + 1)}: ${match[0]}`);
      }
    }
    expect([...new Set(broken)]).toEqual([]);
  });

  it("no comment points outside the repository or names an issue", () => {
    const outside: string[] = [];
    for (const file of sources().filter((path) => path.endsWith(".ts"))) {
      readFileSync(file, "utf8").split("\n").forEach((line, index) => {
        if (/\.\.\/shared|worker-api\.md|\bCONTRACT "|\bEXCHANGE\.md|\bREPORT\.md|\bspec \d|\b[Ii]ssue \d/.test(line)) outside.push(`${file.slice(root.length + 1)}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(outside).toEqual([]);
  });

  it("every relative link of the README, docs/ and the examples' README is a file of the repository (and a heading of it)", () => {
    const pages = [join(root, "README.md"), join(root, "examples/README.md"), ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => join(root, "docs", name))];
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const text = readFileSync(page, "utf8").replace(/```[\s\S]*?```/g, "");
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^(?:https?:|mailto:)/.test(target)) continue;
        checked++;
        const [path = "", anchor] = target.split("#");
        const file = path === "" ? page : resolve(dirname(page), path);
        const inside = file.startsWith(root + "/") && !file.includes("/node_modules/");
        const anchorFound = anchor === undefined || !file.endsWith(".md") || (existsSync(file) && anchorsOf(file.slice(dirname(file).length + 1), dirname(file)).has(anchor));
        if (!inside || !existsSync(file) || !anchorFound) broken.push(`${page.slice(root.length + 1)}: ${target}`);
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });
});
