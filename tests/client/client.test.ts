/**
 * The typed client (`@forensic-annotation/service/client`) against the service itself: every
 * worker's calls with their credentials, keys encoded per segment, error answers as
 * ServiceClientError with the standard body, identity token and admin key sent as headers,
 * a mount prefix, and a client module that carries no server code.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";
import { describe, expect, expectTypeOf, it } from "vitest";
import { createClient, type ServiceClient, ServiceClientError } from "../../src/client/mod.ts";
import type { AuditEntries, CaseData, ErrorCode, UserData } from "../../src/client/mod.ts";
import { KEYS, stubVerifier, testService } from "../helpers/service.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { fixture } from "../helpers/images.ts";
import { IdentityTokenError } from "../../src/core/identity/identity-token.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const keys = { userKey: KEYS.USER_DB_AUTH, dataKey: KEYS.R2_KEY_SECRET, keysKey: KEYS.KEYS_AUTH, imagesToken: KEYS.IMAGES_API_TOKEN };

function clientOf(app: { request(request: Request): Response | Promise<Response> }, options: Partial<Parameters<typeof createClient>[0]> = {}): ServiceClient {
  return createClient({ baseUrl: "http://service.test", ...keys, fetch: async (request) => await app.request(request), ...options });
}

const newUser = { email: "a@lab.example", firstName: "Ada", lastName: "Byron", company: "Lab", permitted: true };

describe("the typed client", () => {
  it("calls every worker with its own credential and answers typed values", async () => {
    const { app } = testService({ KEYS_EXPOSED: "ACCOUNT_HASH" }, { captcha: stubVerifier({ success: true, "error-codes": [] }) });
    const client = clientOf(app);
    expect(await client.health()).toEqual({ ok: true });

    const created = await client.user.put("u1", newUser);
    expectTypeOf(created).toEqualTypeOf<UserData>();
    expect(created).toMatchObject({ uid: "u1", email: "a@lab.example", cases: [] });
    expect((await client.user.addCases("u1", [{ caseNumber: "C-1" }])).cases.map((c) => c.caseNumber)).toEqual(["C-1"]);
    expect((await client.user.get("u1")).firstName).toBe("Ada");

    const caseData: CaseData = { caseNumber: "C-1", files: [{ id: "f1", originalFilename: "é.png", uploadedAt: "2026-11-22T00:00:00Z" }], createdAt: "2026-11-22T00:00:00Z" };
    expect(await client.data.getCase("u1", "C-1")).toBeUndefined();
    await client.data.putCase("u1", "C-1", caseData);
    expect(await client.data.getCase("u1", "C-1")).toEqual(caseData);
    await client.data.put(["u1", "C-1", "f1", "data.json"], { annotations: [] });
    expect(await client.data.get("u1/C-1/f1/data.json")).toEqual({ annotations: [] });
    await client.data.delete("u1/C-1/f1/data.json");
    expect(await client.data.get("u1/C-1/f1/data.json")).toEqual([]);

    const appended = await client.audit.append(auditEntry({ userId: "u1" }) as Parameters<ServiceClient["audit"]["append"]>[0]);
    expect(appended).toMatchObject({ success: true, entryCount: 1, filename: "audit-trails/u1-2026-11-22.json" });
    const read = await client.audit.read("u1", { startDate: "2026-11-22", endDate: "2026-11-22" });
    expectTypeOf(read).toEqualTypeOf<AuditEntries>();
    expect(read.total).toBe(1);
    expect(read.entries[0]).toMatchObject({ userId: "u1", receivedAt: expect.any(String) });
    const verdict = await client.audit.verify("u1");
    expect(verdict).toMatchObject({ valid: true, userId: "u1", entries: 1, from: "2026-11-22", to: "2026-11-22" });

    const uploaded = await client.image.upload(new Blob([fixture("sample.png")]), "scan.png");
    expect(uploaded.filename).toBe("scan.png");
    const signed = await client.image.sign(uploaded.variants[0]!);
    expect(signed).toMatch(/[?&]sig=[0-9a-f]{64}/);
    expect((await app.request(new URL(signed).pathname + new URL(signed).search)).status).toBe(200);
    await client.image.delete(uploaded.id);

    expect(await client.keys.get("ACCOUNT_HASH")).toBe(KEYS.ACCOUNT_HASH);
    expect(await client.captcha.verify("token-1")).toEqual({ success: true, "error-codes": [] });
    expect((await client.user.removeCases("u1", ["C-1"])).cases).toEqual([]);
    expect((await client.user.delete("u1")).success).toBe(true);
  });

  it("throws ServiceClientError with the status and the standard error body", async () => {
    const { app } = testService();
    const client = clientOf(app);
    const missing = await client.user.get("nobody").catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(ServiceClientError);
    const error = missing as ServiceClientError;
    expect(error.status).toBe(404);
    expect(error.code).toBe("NOT_FOUND");
    expectTypeOf(error.code).toEqualTypeOf<ErrorCode | undefined>();
    expect(error.error).toMatchObject({ error: "Not Found", code: "NOT_FOUND", details: expect.any(Object) });
    const wrongKey = await clientOf(app, { dataKey: "wrong" }).data.get("u1/C-1/data.json").catch((err: unknown) => err);
    expect(wrongKey).toMatchObject({ status: 403, code: "FORBIDDEN" });
    // A key segment with "/" is encoded, so the service refuses that segment (400), never a different key.
    const slash = await client.data.get(["u1", "a/b", "data.json"]).catch((err: unknown) => err);
    expect(slash).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
  });

  it("sends the identity token (a function asked per call) and the admin key", async () => {
    const verifier = { verify: async (token: string) => {
      if (token !== "token-of-u1") throw new IdentityTokenError("bad signature");
      return { uid: "u1", email: "a@lab.example" };
    } };
    const { app } = testService({ ADMIN_AUTH: "admin-key-0123456789" }, { identity: verifier });
    let asked = 0;
    const asUser = clientOf(app, { identityToken: () => (asked++, "token-of-u1") });
    await asUser.user.put("u1", newUser);
    expect(asked).toBe(1);
    expect(await asUser.user.get("u1")).toMatchObject({ uid: "u1" });
    expect(await asUser.user.get("u2").catch((err: unknown) => err)).toMatchObject({ status: 403, code: "FORBIDDEN" });
    expect(await clientOf(app).user.get("u1").catch((err: unknown) => err)).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    const admin = clientOf(app, { adminKey: "admin-key-0123456789" });
    expect(await admin.user.get("u1")).toMatchObject({ uid: "u1" });
    const trail = await admin.audit.read("u1");
    expect(trail.entries.some((entry) => entry.action === "file-access" || entry.action === "user-profile-update")).toBe(true);
  });

  it("reaches a service mounted under a prefix, and workers deployed on their own", async () => {
    const { app } = testService();
    const parent = new Hono();
    parent.route("/forensic", app);
    const client = createClient({ baseUrl: "http://lab.test/forensic/", ...keys, fetch: async (request) => await parent.request(request) });
    expect(await client.health()).toEqual({ ok: true });
    expect(await client.data.get("u1/C-1/data.json")).toEqual([]);
    const alone = createClient({ baseUrl: "http://unused.test", workers: { data: "http://lab.test/forensic/data" }, ...keys, fetch: async (request) => await parent.request(request) });
    expect(await alone.data.get("u1/C-1/data.json")).toEqual([]);
  });

  it("the ./client entry runs createClient and ServiceClientError only, both named in the README", async () => {
    expect(Object.keys(await import("../../src/client/mod.ts")).sort()).toEqual(["ServiceClientError", "createClient"]);
    const readme = readFileSync(join(root, "README.md"), "utf8");
    for (const name of ["createClient", "ServiceClientError", "ServiceRoutes"]) expect(readme).toContain(name);
  });

  it("carries no server code: outside src/client it imports types only", () => {
    const dir = join(root, "src/client");
    const imports = readdirSync(dir).filter((name) => name.endsWith(".ts")).flatMap((name) => {
      const source = readFileSync(join(dir, name), "utf8");
      return [...source.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gms)].map((match) => ({ name, typeOnly: match[2] !== undefined, from: match[3]! }));
    });
    const runtime = imports.filter((entry) => !entry.typeOnly && !entry.from.startsWith("./"));
    expect(runtime).toEqual([]);
  });
});
