// The package bundled into a consumer's app by a bundler that honours `sideEffects` (rolldown,
// Vite's): the root entry loads the OpenAPI document generators when it is imported, so the
// manifest must list it as having side effects, or that call is dropped and a worker made from
// the root entry cannot document itself. Bundles the built package (dist, as npm ships it).
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rolldown } from "rolldown";

const root = fileURLToPath(new URL("..", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-consumer-"));
  await mkdir(join(dir, "node_modules/@forensic-annotation"), { recursive: true });
  await symlink(root, join(dir, "node_modules/@forensic-annotation/service"), "dir");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the package in a consumer's bundle", () => {
  it("a worker made from the root entry documents its routes after rolldown tree-shook the package", async () => {
    await writeFile(join(dir, "entry.mjs"), [
      'import { createDataWorker, createMemoryPorts, parseConfig } from "@forensic-annotation/service";',
      "const ports = createMemoryPorts();",
      'const worker = createDataWorker({ blobs: ports.data, audit: ports.audit, clock: ports.clock, config: parseConfig({ R2_KEY_SECRET: "k" }), users: ports.users });',
      'export const paths = Object.keys(worker.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } }).paths ?? {});',
    ].join("\n"));
    const bundle = await rolldown({ input: join(dir, "entry.mjs"), platform: "node", cwd: dir, logLevel: "silent" });
    await bundle.write({ file: join(dir, "out.mjs"), format: "esm" });
    await bundle.close();
    const { paths } = (await import(pathToFileURL(join(dir, "out.mjs")).href)) as { paths: string[] };
    expect(paths).toContain("/audit/verify");
  }, 60_000);
});
