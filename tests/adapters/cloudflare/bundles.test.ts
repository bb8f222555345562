// The Cloudflare module workers stay within their size budgets, each entry bundled as
// wrangler bundles it (esbuild, ESM, workerd conditions) and minified as the wrangler files
// of examples/cloudflare ask ("minify": true), then gzipped as the upload is.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ESM script without types
import { bundleWorker } from "../../../scripts/start-workerd.mjs";

const KIB = 1024;
/** Gzipped budget per entry: the PDF worker carries pdf-lib and two font subsets; every other worker 100 KiB. */
const BUDGETS: Record<string, number> = {
  pdf: 600 * KIB,
  // Every worker in one: the PDF worker's weight plus the /docs page's Swagger UI assets (about 500 KiB),
  // and since the exchange and review workers, histories and holds, 1165 KiB (Workers' free plan allows 3 MiB).
  all: 1200 * KIB,
  // The data worker carries the record histories since they landed (105 KiB then), and since
  // the log layout both ways of ordering a history's writes (119.5 KiB before it, 121.3 after).
  data: 125 * KIB,
  // The review worker carries the record histories as the data worker does, jose, and since the signing fixes of
  // 2026-12-03 the confirmation seal, the signings under way and the character rules (97.7 KiB before, 100.5 after).
  review: 120 * KIB,
  // The exchange worker carries the ZIP writer and reader (fflate), jose for signatures and the XLSX writer (125 KiB when added).
  exchange: 150 * KIB,
};
const DEFAULT_BUDGET = 100 * KIB;

const entries = join(import.meta.dirname, "../../../src/adapters/cloudflare/entries");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-bundles-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("Cloudflare worker bundles", () => {
  it("every entry, minified and gzipped, is within its budget (PDF 600 KiB, all 1200 KiB, exchange 150 KiB, data 125 KiB, review 120 KiB, others 100 KiB)", async () => {
    const names = (await readdir(entries)).filter((file) => file.endsWith(".ts")).map((file) => file.slice(0, -3)).sort();
    expect(names).toEqual(["all", "audit", "captcha", "data", "exchange", "image", "keys", "pdf", "review", "user"]);
    const sizes: Record<string, number> = {};
    for (const name of names) {
      const file = await (bundleWorker as (entry: string, out: string, minify: boolean) => Promise<string>)(name, join(dir, `${name}.js`), true);
      sizes[name] = gzipSync(await readFile(file)).length;
    }
    for (const name of names) {
      const budget = BUDGETS[name] ?? DEFAULT_BUDGET;
      expect(sizes[name], `${name}: ${((sizes[name] ?? 0) / KIB).toFixed(1)} KiB gzipped, budget ${budget / KIB} KiB`).toBeLessThanOrEqual(budget);
    }
  }, 120_000);

  it("a worker that renders no report carries neither pdf-lib nor the fonts nor the OpenAPI generators, and no worker carries all of zod", async () => {
    for (const name of ["data", "keys", "user", "review"]) {
      const code = await readFile(await (bundleWorker as (entry: string, out: string) => Promise<string>)(name, join(dir, `${name}-plain.js`)), "utf8");
      expect(code, name).not.toContain("DEJAVU_SANS");
      expect(code, name).not.toContain("node_modules/pdf-lib/");
      // zod's other locales (English is its default) and JSON Schema conversion come only with its whole namespace object.
      expect(code, name).toContain("node_modules/zod/v4/locales/en.js");
      expect(code, name).not.toMatch(/node_modules\/zod\/v4\/locales\/(?!en\.js)/);
      expect(code, name).not.toContain("node_modules/zod/v4/classic/from-json-schema.js");
      // It serves no OpenAPI document: the generators stay out (src/core/http/openapi-document.ts).
      expect(code, name).not.toContain("OpenApiGeneratorV31");
    }
    const pdf = await readFile(await (bundleWorker as (entry: string, out: string) => Promise<string>)("pdf", join(dir, "pdf-plain.js")), "utf8");
    expect(pdf).toContain("node_modules/pdf-lib/");
    expect(pdf).not.toContain("node_modules/@pdf-lib/fontkit/");
    expect(pdf).not.toMatch(/node_modules\/zod\/v4\/locales\/(?!en\.js)/);
    expect(pdf).not.toContain("OpenApiGeneratorV31");
    // The whole service serves /openapi.json: its bundle has them.
    expect(await readFile(await (bundleWorker as (entry: string, out: string) => Promise<string>)("all", join(dir, "all-plain.js")), "utf8")).toContain("OpenApiGeneratorV31");
  }, 120_000);
});
