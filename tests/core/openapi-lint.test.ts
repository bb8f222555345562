/**
 * The OpenAPI document is one generators and linters accept: Redocly's recommended rules find
 * no error (security schemes, operation ids, no duplicate or trailing-slash paths, servers),
 * the error body is one shared component, and a service mounted under a prefix names it in
 * `servers`.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { testService } from "../helpers/service.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const redocly = join(root, "node_modules/@redocly/cli/bin/cli.js");

interface Document {
  info: { description?: string };
  tags?: { name: string; description?: string }[];
  servers: { url: string }[];
  paths: Record<string, Record<string, { operationId?: string; tags?: string[]; security?: Record<string, string[]>[]; responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, { type: string; name?: string; in?: string; scheme?: string }> };
}

interface LintTotals {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string }[];
}

/** Runs `redocly lint` (Node, whatever runtime runs the test) on a document; its JSON report. */
async function lint(document: unknown): Promise<LintTotals> {
  const dir = await mkdtemp(join(tmpdir(), "fa-openapi-"));
  try {
    const file = join(dir, "openapi.json");
    await writeFile(file, JSON.stringify(document));
    const run = promisify(execFile);
    const result = await run("node", [redocly, "lint", file, "--format=json"], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).catch(
      (err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? "", stderr: err.stderr ?? "" }),
    );
    const json = result.stdout.slice(result.stdout.indexOf("{"));
    return JSON.parse(json) as LintTotals;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("the OpenAPI document, as generators and linters read it", () => {
  it("Redocly's recommended rules find no error", async () => {
    const { app } = testService();
    const report = await lint(await (await app.request("/openapi.json")).json());
    const errors = report.problems.filter((problem) => problem.severity === "error").map((problem) => `${problem.ruleId}: ${problem.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 60_000);

  it("every operation has a unique id and states its credentials; each credential is a scheme", async () => {
    const { app } = testService();
    const doc = (await (await app.request("/openapi.json")).json()) as Document;
    const operations = Object.values(doc.paths).flatMap((methods) => Object.values(methods));
    const ids = operations.map((operation) => operation.operationId);
    expect(ids.every((id) => typeof id === "string" && id !== "")).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations.every((operation) => Array.isArray(operation.security))).toBe(true);
    const schemes = doc.components.securitySchemes;
    expect(schemes).toMatchObject({
      userKey: { type: "apiKey", in: "header", name: "X-Custom-Auth-Key" },
      dataKey: { type: "apiKey", in: "header", name: "X-Custom-Auth-Key" },
      keysKey: { type: "apiKey", in: "header", name: "X-Custom-Auth-Key" },
      imagesToken: { type: "http", scheme: "bearer" },
      adminKey: { type: "apiKey", in: "header", name: "X-Admin-Key" },
      identityToken: { type: "apiKey", in: "header", name: "X-Identity-Token" },
    });
    expect(doc.paths["/user/{userUid}"]!["get"]!.security).toContainEqual({ userKey: [] });
    expect(doc.paths["/user/{userUid}"]!["get"]!.security).toContainEqual({ userKey: [], identityToken: [] });
    expect(doc.paths["/data/audit"]!["post"]!.security).toContainEqual({ dataKey: [], adminKey: [] });
    expect(doc.paths["/keys/{keyName}"]!["get"]!.security).toContainEqual({ keysKey: [] });
    expect(doc.paths["/health"]!["get"]!.security).toEqual([]);
  });

  it("the error body is one component every error answer refers to; no path ends in a slash", async () => {
    const { app } = testService();
    const doc = (await (await app.request("/openapi.json")).json()) as Document;
    expect(doc.components.schemas["ErrorBody"]).toMatchObject({ type: "object", required: ["error", "code", "message", "details"] });
    // GET /ready answers 503 with its own readiness body, as docs/operations.md#readiness fixes it.
    const errorAnswers = Object.entries(doc.paths)
      .filter(([path]) => path !== "/ready")
      .flatMap(([, methods]) => Object.values(methods))
      .flatMap((operation) => Object.entries(operation.responses).filter(([status]) => Number(status) >= 400 && Number(status) !== 500))
      .map(([, response]) => response.content?.["application/json"]?.schema);
    expect(errorAnswers.length).toBeGreaterThan(20);
    for (const schema of errorAnswers) expect(schema).toEqual({ $ref: "#/components/schemas/ErrorBody" });
    expect(Object.keys(doc.paths).filter((path) => path.endsWith("/"))).toEqual([]);
  });

  it("every operation has one tag, its worker's (not all under \"default\" in /docs); each tag is described", async () => {
    const { app } = testService();
    const doc = (await (await app.request("/openapi.json")).json()) as Document;
    const tags = doc.tags ?? [];
    expect(tags.map((tag) => tag.name)).toEqual(["user", "data", "audit", "image", "pdf", "keys", "review", "captcha", "exchange", "service"]);
    for (const tag of tags) expect(tag.description, tag.name).toMatch(/\w{3}/);
    const tagOf = (path: string, method: string) => doc.paths[path]![method]!.tags;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        expect(operation.tags, `${method} ${path}`).toHaveLength(1);
        expect(tags.map((tag) => tag.name), `${method} ${path}`).toContain(operation.tags![0]);
        // The audit endpoints are the audit group's wherever they are mounted; every other path is its worker's.
        const worker = /\/audit(\/verify)?$/.test(path) ? "audit" : ["/health", "/ready", "/metrics"].includes(path) ? "service" : path.split("/")[1];
        expect(operation.tags![0], `${method} ${path}`).toBe(worker);
      }
    }
    expect(tagOf("/data/audit", "post")).toEqual(["audit"]);
    expect(tagOf("/user/{userUid}", "get")).toEqual(["user"]);
    expect(tagOf("/exchange/{userUid}/imports", "post")).toEqual(["exchange"]);
  });

  it("the document's introduction (info.description, the top of /docs) says which key goes in which header, and the identity token", async () => {
    const { app } = testService();
    const intro = ((await (await app.request("/openapi.json")).json()) as Document).info.description ?? "";
    for (const [scheme, header, variable] of [
      ["userKey", "X-Custom-Auth-Key", "USER_DB_AUTH"],
      ["dataKey", "X-Custom-Auth-Key", "R2_KEY_SECRET"],
      ["keysKey", "X-Custom-Auth-Key", "KEYS_AUTH"],
      ["imagesToken", "Authorization: Bearer", "IMAGES_API_TOKEN"],
      ["adminKey", "X-Admin-Key", "ADMIN_AUTH"],
    ] as const) {
      const row = intro.split("\n").find((line) => line.startsWith(`| \`${scheme}\``));
      expect(row, scheme).toContain(header);
      expect(row, scheme).toContain(variable);
    }
    expect(intro).toMatch(/Identity-token mode[^\n]*X-Identity-Token/);
    expect(intro).toContain("Authorize");
  });

  it("servers names where the service is: / alone, the prefix when mounted", async () => {
    const { app } = testService();
    expect(((await (await app.request("/openapi.json")).json()) as Document).servers).toEqual([{ url: "/", description: expect.any(String) }]);
    const parent = new Hono();
    parent.route("/forensic", app);
    const mounted = (await (await parent.request("/forensic/openapi.json")).json()) as Document;
    expect(mounted.servers.map((server) => server.url)).toEqual(["/forensic"]);
    expect((await lint(mounted)).totals.errors).toBe(0);
  }, 60_000);

  it("a data key is documented as one parameter per segment, which a generated client can send", async () => {
    const { app } = testService();
    const doc = (await (await app.request("/openapi.json")).json()) as Document;
    expect(Object.keys(doc.paths).filter((path) => path.startsWith("/data/{"))).toEqual([
      "/data/{userId}/{caseNumber}/data.json",
      "/data/{userId}/{caseNumber}/{fileId}/data.json",
      "/data/{userId}/{caseNumber}/{document}",
      "/data/{userId}/{caseNumber}/{fileId}/{document}",
    ]);
  });
});
