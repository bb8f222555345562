/**
 * The public API stays small enough to hold in one's head: the root entry exports at most 63
 * names, and each of them is used by an example or an adapter, or named in the README, docs/library.md or docs/service.md. The
 * resource types are written out as interfaces (JSR documents no inferred types); these
 * checks keep them and the zod schemas that validate the same shapes equal.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, expectTypeOf, it } from "vitest";
import type * as Root from "../mod.ts";
import type * as Schemas from "../src/core/schemas/index.ts";
import type * as ExchangeEntry from "../src/core/exchange/mod.ts";
import { ERROR_CODES } from "../src/core/schemas/error.ts";
import { RATE_LIMIT_ROUTES } from "../src/core/rate-limit/rules.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

interface ExportedName {
  name: string;
  typeOnly: boolean;
}

/** The names an entry module exports, read from its export statements. */
function exportsOf(entry: string): ExportedName[] {
  const file = join(root, entry);
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const names: ExportedName[] = [];
  for (const statement of source.statements) {
    const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) ?? [] : [];
    if (modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) {
      throw new Error(`${entry} declares an export itself; an entry only re-exports`);
    }
    if (ts.isExportAssignment(statement)) throw new Error(`${entry} has a default export`);
    if (!ts.isExportDeclaration(statement)) continue;
    const clause = statement.exportClause;
    if (clause === undefined || !ts.isNamedExports(clause)) throw new Error(`${entry} has an \`export *\`: its names cannot be counted`);
    for (const element of clause.elements) names.push({ name: element.name.text, typeOnly: statement.isTypeOnly || element.isTypeOnly });
  }
  return names;
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !entry.parentPath.includes("node_modules") && !entry.name.endsWith(".lock"))
    .map((entry) => join(entry.parentPath, entry.name));
}

const users: Record<string, string> = {
  "README.md": readFileSync(join(root, "README.md"), "utf8"),
  "docs/library.md": readFileSync(join(root, "docs/library.md"), "utf8"),
  "docs/service.md": readFileSync(join(root, "docs/service.md"), "utf8"),
  "examples/": filesUnder("examples").map((file) => readFileSync(file, "utf8")).join("\n"),
  "src/adapters/": filesUnder("src/adapters").map((file) => readFileSync(file, "utf8")).join("\n"),
};

/** Where a name is used or named, as a whole word. */
function usesOf(name: string): string[] {
  const word = new RegExp(`(?<![\\w$])${name.replace(/\$/g, "\\$")}(?![\\w$])`);
  return Object.entries(users).filter(([, text]) => word.test(text)).map(([where]) => where);
}

describe("the root entry (mod.ts)", () => {
  const names = exportsOf("mod.ts");

  // 62: the 60 it had, and FileData and Confirmation, the resource types CaseData and AnnotationData hold (issue 42, item 10).
  // 63: createReviewWorker and ReviewWorkerDeps, as every other worker has its factory here (issue 41), less verifyAuditTrail, which ./audit exports with its types.
  it("exports at most 63 names, each once", () => {
    const all = names.map(({ name }) => name);
    expect(new Set(all).size, "a name exported twice").toBe(all.length);
    expect(all.length, `mod.ts exports ${all.length} names: ${all.join(", ")}`).toBeLessThanOrEqual(63);
  });

  it("reads the runtime exports as the module has them", async () => {
    const loaded = Object.keys(await import("../mod.ts")).sort();
    expect(names.filter(({ typeOnly }) => !typeOnly).map(({ name }) => name).sort()).toEqual(loaded);
  });

  it("every name is used by an example or an adapter, or named in the README, docs/library.md or docs/service.md", () => {
    expect(names.map(({ name }) => name).filter((name) => usesOf(name).length === 0)).toEqual([]);
  });

  it("offers the service, its configuration, the workers, errors and the resource types", () => {
    const all = new Set(names.map(({ name }) => name));
    for (const name of [
      "createService",
      "parseConfig",
      "ServiceConfig",
      "ConfigError",
      "createBlobStore",
      "createKvStore",
      "createMemoryPorts",
      "systemClock",
      "createDataWorker",
      "createAuditWorker",
      "createKeysWorker",
      "createCaptchaWorker",
      "createImageWorker",
      "createUserWorker",
      "createPdfWorker",
      "createReviewWorker",
      "ReviewWorkerDeps",
      "ServiceError",
      "CaseData",
      "FileData",
      "UserData",
      "AuditEntry",
      "AnnotationData",
      "BoxAnnotation",
      "Confirmation",
      "ErrorBody",
      "ErrorCode",
    ]) {
      expect(all.has(name), name).toBe(true);
    }
  });
});

describe("the ./exchange and ./pdf entries", () => {
  it("export only what a caller uses: every function and class is named in the README, docs/library.md or docs/service.md, or used by an adapter", () => {
    for (const entry of ["src/core/exchange/mod.ts", "src/core/pdf/mod.ts"]) {
      const values = exportsOf(entry).filter(({ typeOnly }) => !typeOnly).map(({ name }) => name);
      expect(values.filter((name) => usesOf(name).length === 0), entry).toEqual([]);
    }
  });

  it("./pdf offers renderReport and nothing else that runs", async () => {
    expect(Object.keys(await import("../src/core/pdf/mod.ts")).sort()).toEqual(["renderReport"]);
  });
});

describe("the resource interfaces match the zod schemas", () => {
  it("a value the schemas accept fits the interfaces, and the interfaces fit the schemas", () => {
    expectTypeOf<Schemas.CaseData>().toExtend<Root.CaseData>();
    expectTypeOf<Root.CaseData>().toExtend<Schemas.CaseData>();
    expectTypeOf<Schemas.FileData>().toExtend<ExchangeEntry.FileData>();
    expectTypeOf<ExchangeEntry.FileData>().toExtend<Schemas.FileData>();
    expectTypeOf<Schemas.Confirmation>().toExtend<ExchangeEntry.Confirmation>();
    expectTypeOf<ExchangeEntry.Confirmation>().toExtend<Schemas.Confirmation>();
    expectTypeOf<Schemas.UserData>().toExtend<Root.UserData>();
    expectTypeOf<Root.UserData>().toExtend<Schemas.UserData>();
    expectTypeOf<Schemas.ValidationAuditEntry>().toExtend<Root.AuditEntry>();
    expectTypeOf<Root.AuditEntry>().toExtend<Schemas.ValidationAuditEntry>();
    expectTypeOf<Root.AuditEntry["action"]>().toEqualTypeOf<Schemas.AuditAction>();
    expectTypeOf<Root.AuditEntry["result"]>().toEqualTypeOf<Schemas.AuditResult>();
    expectTypeOf<Schemas.ErrorBody>().toEqualTypeOf<Root.ErrorBody>();
    expectTypeOf<Schemas.AnnotationData>().toExtend<Root.AnnotationData>();
    expectTypeOf<Root.AnnotationData>().toExtend<Schemas.AnnotationData>();
  });

  it("the written-out unions hold the listed values", () => {
    expectTypeOf<(typeof ERROR_CODES)[number]>().toEqualTypeOf<Root.ErrorCode>();
    expectTypeOf<(typeof RATE_LIMIT_ROUTES)[number]>().toEqualTypeOf<Root.RateLimitRoute>();
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect(new Set(RATE_LIMIT_ROUTES).size).toBe(RATE_LIMIT_ROUTES.length);
  });
});
