import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (file: string) => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), "utf8"));

describe("package manifests", () => {
  it("npm and JSR export the same entry points, from the same sources", () => {
    const npm = read("package.json") as { name: string; version: string; exports: Record<string, { types: string; default: string }> };
    const jsr = read("deno.json") as { name: string; version: string; exports: Record<string, string> };
    expect(jsr.name).toBe(npm.name);
    expect(jsr.version).toBe(npm.version);
    expect(Object.keys(jsr.exports).sort()).toEqual(Object.keys(npm.exports).sort());
    for (const [entry, source] of Object.entries(jsr.exports)) {
      const built = source.replace(/^\.\//, "./dist/").replace(/\.ts$/, ".js");
      expect(npm.exports[entry]!.default, entry).toBe(built);
      expect(npm.exports[entry]!.types, entry).toBe(built.replace(/\.js$/, ".d.ts"));
    }
  });

  it("the JSR import map pins the same ranges as package.json", () => {
    const npm = read("package.json") as { dependencies: Record<string, string> };
    const jsr = read("deno.json") as { imports: Record<string, string> };
    for (const [name, range] of Object.entries(npm.dependencies)) {
      const mapped = jsr.imports[name];
      if (mapped === undefined) continue; // not imported by the published sources
      expect(mapped, name).toBe(`npm:${name}@${range}`);
    }
  });
});
