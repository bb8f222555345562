/**
 * A client generated from /openapi.json works: openapi-typescript turns the document into
 * types, a consumer using them type-checks with tsc --strict, and openapi-fetch calls a data,
 * an audit and a user route of the service with them (path segments and query as a
 * generated client encodes them).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import openapiTS, { astToString } from "openapi-typescript";
import { describe, expect, it } from "vitest";
import { KEYS, testService } from "../helpers/service.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** What a consumer writes against the generated types: tsc --strict must accept it, and its calls must work. */
const CONSUMER = `
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.ts";

export async function calls(fetch: (request: Request) => Promise<Response>, dataKey: string, userKey: string) {
  const client = createClient<paths>({ baseUrl: "http://service.test", fetch });
  const data = { "X-Custom-Auth-Key": dataKey };
  const path = { userId: "u1", caseNumber: "C 1", document: "data.json" };
  const stored = await client.PUT("/data/{userId}/{caseNumber}/{document}", { params: { path }, body: { caseNumber: "C 1" }, headers: data });
  const success: true | undefined = stored.data?.success;
  const document: unknown = (await client.GET("/data/{userId}/{caseNumber}/{document}", { params: { path }, headers: data })).data;
  const entry = {
    timestamp: "2026-11-22T12:00:00.000Z", userId: "u1", userEmail: "a@lab.example",
    action: "case-create" as const, result: "success" as const, details: { caseNumber: "C 1" },
  };
  const appended = await client.POST("/audit/audit", { params: { query: { userId: "u1" } }, body: entry, headers: data });
  const entryCount: number | undefined = appended.data?.entryCount;
  const read = await client.GET("/audit/audit", { params: { query: { userId: "u1" } }, headers: data });
  const total: number | undefined = read.data?.total;
  const user = { "X-Custom-Auth-Key": userKey };
  const missing = await client.GET("/user/{userUid}", { params: { path: { userUid: "u1" } }, headers: user });
  const missingCode: string | undefined = missing.error?.code;
  const body = { email: "a@lab.example", firstName: "A", lastName: "B", company: "Lab", permitted: true };
  const created = await client.PUT("/user/{userUid}", { params: { path: { userUid: "u1" } }, body, headers: user });
  const uid: string | undefined = (await client.GET("/user/{userUid}", { params: { path: { userUid: "u1" } }, headers: user })).data?.uid;
  // The named types: a record, a case document with its files, annotations, an entry read back.
  const record: components["schemas"]["UserData"] | undefined = (await client.GET("/user/{userUid}", { params: { path: { userUid: "u1" } }, headers: user })).data;
  const caseDocument: components["schemas"]["CaseData"] = { caseNumber: "C 2", files: [{ id: "f1", originalFilename: "a.png", uploadedAt: "2026-11-22T00:00:00Z" }], createdAt: "2026-11-22T00:00:00Z" };
  const casePath = { userId: "u1", caseNumber: "C 2" };
  await client.PUT("/data/{userId}/{caseNumber}/data.json", { params: { path: casePath }, body: caseDocument, headers: data });
  const readCase = (await client.GET("/data/{userId}/{caseNumber}/data.json", { params: { path: casePath }, headers: data })).data;
  const files: components["schemas"]["FileData"][] | undefined = readCase !== undefined && !Array.isArray(readCase) ? readCase.files : undefined;
  const annotations = (await client.GET("/data/{userId}/{caseNumber}/{fileId}/data.json", { params: { path: { ...casePath, fileId: "f1" } }, headers: data })).data;
  const leftCase: string | undefined = annotations !== undefined && !Array.isArray(annotations) ? annotations.leftCase : undefined;
  const noAnnotations = Array.isArray(annotations) ? annotations.length : -1;
  const entries: components["schemas"]["AuditEntries"]["entries"] | undefined = read.data?.entries;
  return {
    success, document, entryCount, total, missingStatus: missing.response.status, missingCode, createdStatus: created.response.status, uid,
    recordUid: record?.uid, fileIds: files?.map((file) => file.id), leftCase, noAnnotations, entryUser: entries?.[0]?.userId,
  };
}
`;

describe("a client generated from /openapi.json (openapi-typescript, openapi-fetch)", () => {
  it("generates types a strict consumer type-checks against, whose data, audit and user calls work", async () => {
    const { app } = testService();
    const document = await (await app.request("/openapi.json")).json();
    const types = astToString(await openapiTS(document));
    for (const path of ["/data/{userId}/{caseNumber}/{document}", "/audit/audit", "/user/{userUid}"]) expect(types).toContain(`"${path}"`);
    for (const id of ["readCaseDocument", "appendAuditEntry", "readUser"]) expect(types).toContain(id);
    // Inside node_modules so that the emitted consumer resolves openapi-fetch as an app would.
    const dir = await mkdtemp(join(root, "node_modules/.openapi-consumer-"));
    try {
      await writeFile(join(dir, "schema.ts"), types);
      await writeFile(join(dir, "consumer.ts"), CONSUMER);
      const tsc = join(root, "node_modules/typescript/bin/tsc");
      const compilerOptions = {
        strict: true, skipLibCheck: false, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext",
        rewriteRelativeImportExtensions: true, lib: ["ES2023", "DOM"], types: [], outDir: "out",
      };
      await writeFile(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["consumer.ts"] }));
      const args = ["-p", join(dir, "tsconfig.json")];
      const result = await promisify(execFile)("node", [tsc, ...args], { cwd: dir }).then(
        () => ({ code: 0, out: "" }),
        (err: { code?: number; stdout?: string }) => ({ code: err.code ?? 1, out: err.stdout ?? "" }),
      );
      expect(result.out).toBe("");
      expect(result.code).toBe(0);
      await writeFile(join(dir, "out/package.json"), JSON.stringify({ type: "module" }));
      const consumer = (await import(pathToFileURL(join(dir, "out/consumer.js")).href)) as {
        calls: (fetch: (request: Request) => Promise<Response>, dataKey: string, userKey: string) => Promise<Record<string, unknown>>;
      };
      const results = await consumer.calls(async (request) => await app.request(request), KEYS.R2_KEY_SECRET, KEYS.USER_DB_AUTH);
      expect(results).toEqual({
        success: true,
        document: { caseNumber: "C 1" },
        entryCount: 1,
        total: 1,
        missingStatus: 404,
        missingCode: "NOT_FOUND",
        createdStatus: 201,
        uid: "u1",
        recordUid: "u1",
        fileIds: ["f1"],
        leftCase: undefined,
        noAnnotations: 0,
        entryUser: "u1",
      });
      // The generated call encoded each segment: the document is stored under u1/C 1/data.json.
      expect(await (await app.request("/data/u1/C%201/data.json", { headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET } })).json()).toEqual({ caseNumber: "C 1" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it("names the resources: case, file, annotation, user and audit bodies are components the operations refer to, not unknown", async () => {
    const { app } = testService();
    const types = astToString(await openapiTS(await (await app.request("/openapi.json")).json()));
    const schemas = types.slice(types.indexOf("export interface components {"), types.indexOf("export type $defs"));
    for (const name of ["CaseData", "FileData", "AnnotationData", "BoxAnnotation", "Confirmation", "UserData", "UserInput", "AuditEntry", "AuditEntryInput", "AuditEntries", "AuditVerification", "ErrorBody"]) {
      expect(schemas, name).toMatch(new RegExp(`\\n        ${name}: `));
    }
    expect(schemas).toContain('files: components["schemas"]["FileData"][];');
    /** The text of one operation in the generated `operations` interface. */
    const operation = (id: string) => {
      const start = types.indexOf(`\n    ${id}: {`, types.indexOf("export interface operations {"));
      expect(start, id).toBeGreaterThan(0);
      return types.slice(start, types.indexOf("\n    };", start));
    };
    const refers: [string, string][] = [
      ["readUser", "UserData"],
      ["writeUser", "UserInput"],
      ["deleteUser", "UserDeletion"],
      ["readCase", "CaseData"],
      ["storeCase", "CaseData"],
      ["readAnnotations", "AnnotationData"],
      ["storeAnnotations", "AnnotationData"],
      ["appendAuditEntry", "AuditEntryInput"],
      ["readAuditEntries", "AuditEntries"],
      ["readAuditEntriesViaData", "AuditEntries"],
      ["verifyAuditTrail", "AuditVerification"],
      ["uploadImage", "ImageUploaded"],
      ["verifyCaptcha", "CaptchaResult"],
      ["renderReport", "ReportRequest"],
    ];
    for (const [id, name] of refers) expect(operation(id), id).toContain(`components["schemas"]["${name}"]`);
    // No JSON body of these is unknown any more.
    for (const [id] of refers) expect(operation(id), id).not.toContain('"application/json": unknown');
  });
});
