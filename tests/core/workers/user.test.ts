import { describe, expect, it } from "vitest";
import { fixedClock, KEYS, testService } from "../../helpers/service.ts";

const auth = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };
const profile = { email: "ana@lab.example", firstName: "Ana", lastName: "Ruiz", company: "State Lab", permitted: true };

function service(env: Record<string, string> = {}) {
  const clock = fixedClock("2026-11-22T12:00:00Z");
  return { ...testService(env, { clock }), clock };
}
type App = ReturnType<typeof service>["app"];
const put = (app: App, path: string, body: unknown) => app.request(`/user/${path}`, { method: "PUT", headers: auth, body: JSON.stringify(body) });
const del = (app: App, path: string, body?: unknown) =>
  app.request(`/user/${path}`, { method: "DELETE", headers: auth, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
const get = (app: App, path: string) => app.request(`/user/${path}`, { headers: auth });

describe("user worker (spec 4.1)", () => {
  it("GET of an unknown user is 404 with the standard body", async () => {
    const { app } = service();
    const response = await get(app, "nobody");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: "NOT_FOUND", error: "Not Found" });
  });

  it("PUT creates (201) and then updates (200), keeping cases and absent fields", async () => {
    const { app, clock } = service();
    const created = await put(app, "u1", profile);
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ uid: "u1", ...profile, cases: [], createdAt: "2026-11-22T12:00:00.000Z" });
    await put(app, "u1/cases", { cases: [{ caseNumber: "C-1" }] });
    clock.set("2026-11-23T08:00:00Z");
    const updated = await put(app, "u1", { company: "County Lab" });
    expect(updated.status).toBe(200);
    expect(await updated.json()).toEqual({
      uid: "u1",
      ...profile,
      company: "County Lab",
      cases: [{ caseNumber: "C-1", createdAt: "2026-11-22T12:00:00.000Z" }],
      createdAt: "2026-11-22T12:00:00.000Z",
      updatedAt: "2026-11-23T08:00:00.000Z",
    });
    expect(await (await get(app, "u1")).json()).toMatchObject({ company: "County Lab", firstName: "Ana" });
  });

  it("a trailing slash is the same route (docs/api.md Conventions): /{uid}/ and /{uid}/cases/", async () => {
    const { app } = service();
    expect((await put(app, "u1/", profile)).status).toBe(201);
    expect((await put(app, "u1/cases/", { cases: [{ caseNumber: "C-1" }] })).status).toBe(200);
    expect(await (await get(app, "u1/")).json()).toMatchObject({ uid: "u1", cases: [{ caseNumber: "C-1" }] });
    expect((await del(app, "u1/cases/", { casesToDelete: ["C-1"] })).status).toBe(200);
    expect(await (await get(app, "u1")).json()).toMatchObject({ cases: [] });
    expect((await get(app, "u1//")).status).toBe(404);
    expect((await get(app, "u1/cases/x")).status).toBe(404);
  });

  it("PUT keeps readOnlyCases unless sent, and replaces them when sent; cases in a body are ignored", async () => {
    const { app } = service();
    const readOnly = { caseNumber: "R-1", importedAt: "2026-11-20T00:00:00Z", originalExportDate: "2026-11-19T00:00:00Z", originalExportedBy: "bo@lab.example", isReadOnly: true };
    await put(app, "u1", { ...profile, readOnlyCases: [readOnly] });
    await put(app, "u1", { firstName: "Ana María", cases: [{ caseNumber: "X", createdAt: "x" }] });
    const user = (await (await get(app, "u1")).json()) as { readOnlyCases: unknown[]; cases: unknown[]; firstName: string };
    expect(user.readOnlyCases).toEqual([readOnly]);
    expect(user.cases).toEqual([]);
    expect(user.firstName).toBe("Ana María");
    await put(app, "u1", { readOnlyCases: [] });
    expect(((await (await get(app, "u1")).json()) as { readOnlyCases: unknown[] }).readOnlyCases).toEqual([]);
  });

  it("bad bodies are 400 naming the field; creation needs every profile field", async () => {
    const { app } = service();
    const cases: [unknown, string][] = [
      [{ ...profile, permitted: "yes" }, "permitted"],
      [{ ...profile, email: "not an address" }, "email"],
      [{ ...profile, firstName: 5 }, "firstName"],
      [{ email: "a@b.example" }, "firstName"],
      [[1, 2], "request body"],
    ];
    for (const [body, field] of cases) {
      const response = await put(app, "u1", body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const error = (await response.json()) as { code: string; message: string; details: unknown };
      expect(error.code).toBe("VALIDATION_ERROR");
      expect(`${error.message} ${JSON.stringify(error.details)}`).toContain(field);
    }
    const broken = await app.request("/user/u1", { method: "PUT", headers: auth, body: '{"email":' });
    expect(broken.status).toBe(400);
    expect((await get(app, "u1")).status).toBe(404);
  });

  it("PUT /cases adds {caseNumber, createdAt} without duplicates; 404 for an unknown user", async () => {
    const { app, clock } = service();
    await put(app, "u1", profile);
    const first = await put(app, "u1/cases", { cases: [{ caseNumber: "C-1" }, { caseNumber: "C-2" }, { caseNumber: "C-1" }] });
    expect(first.status).toBe(200);
    clock.set("2026-11-22T13:00:00Z");
    const second = await put(app, "u1/cases", { cases: [{ caseNumber: "C-2" }, { caseNumber: "C-3" }] });
    expect(((await second.json()) as { cases: unknown[] }).cases).toEqual([
      { caseNumber: "C-1", createdAt: "2026-11-22T12:00:00.000Z" },
      { caseNumber: "C-2", createdAt: "2026-11-22T12:00:00.000Z" },
      { caseNumber: "C-3", createdAt: "2026-11-22T13:00:00.000Z" },
    ]);
    expect((await put(app, "nobody/cases", { cases: [{ caseNumber: "C-1" }] })).status).toBe(404);
  });

  it("case numbers and uids go through the key builder: traversal and separators are 400", async () => {
    const { app } = service();
    await put(app, "u1", profile);
    for (const caseNumber of ["..", "a/b", "a\\b", "", "x\u0000"]) {
      const response = await put(app, "u1/cases", { cases: [{ caseNumber }] });
      expect(response.status, JSON.stringify(caseNumber)).toBe(400);
    }
    for (const uid of ["a%2Fb", "%2E%2E%2Fx", "%00", "%ff", "a%5Cb"]) {
      const response = await put(app, uid, profile);
      expect(response.status, uid).toBe(400);
    }
    expect((await get(app, "a/b/c")).status).toBe(404);
  });

  it("DELETE /cases removes only the assignments; the case documents stay", async () => {
    const { app } = service();
    const data = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
    await put(app, "u1", profile);
    await put(app, "u1/cases", { cases: [{ caseNumber: "C-1" }, { caseNumber: "C-2" }] });
    await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: data, body: JSON.stringify({ caseNumber: "C-1", files: [] }) });
    const response = await del(app, "u1/cases", { casesToDelete: ["C-1", "unknown"] });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { cases: { caseNumber: string }[] }).cases.map((entry) => entry.caseNumber)).toEqual(["C-2"]);
    expect(await (await app.request("/data/u1/C-1/data.json", { headers: data })).json()).toEqual({ caseNumber: "C-1", files: [] });
    expect((await del(app, "nobody/cases", { casesToDelete: ["C-1"] })).status).toBe(404);
    expect((await del(app, "u1/cases", { casesToDelete: "C-1" })).status).toBe(400);
  });

  it("a demo account is held to DEMO_MAX_CASES with a 403 FORBIDDEN body; permitted accounts to MAX_CASES", async () => {
    const { app } = service({ DEMO_MAX_CASES: "2", MAX_CASES: "3" });
    await put(app, "demo", { ...profile, permitted: false });
    expect((await put(app, "demo/cases", { cases: [{ caseNumber: "A" }, { caseNumber: "B" }] })).status).toBe(200);
    const refused = await put(app, "demo/cases", { cases: [{ caseNumber: "C" }] });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("2 case") });
    expect((await put(app, "demo/cases", { cases: [{ caseNumber: "A" }] })).status).toBe(200); // nothing new
    await put(app, "full", profile);
    expect((await put(app, "full/cases", { cases: [{ caseNumber: "A" }, { caseNumber: "B" }, { caseNumber: "C" }] })).status).toBe(200);
    expect((await put(app, "full/cases", { cases: [{ caseNumber: "D" }] })).status).toBe(403);
  });

  it("a case document may list at most maxFilesPerCase files (403 FORBIDDEN from the data worker)", async () => {
    const { app } = service({ DEMO_MAX_FILES_PER_CASE: "2", MAX_FILES_PER_CASE: "3" });
    const data = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
    const files = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `f${i}`, originalFilename: `${i}.png`, uploadedAt: "2026-11-22T12:00:00Z" }));
    const store = (uid: string, n: number) => app.request(`/data/${uid}/C-1/data.json`, { method: "PUT", headers: data, body: JSON.stringify({ caseNumber: "C-1", files: files(n), createdAt: "2026-11-22T12:00:00Z" }) });
    await put(app, "demo", { ...profile, permitted: false });
    await put(app, "full", profile);
    expect((await store("demo", 2)).status).toBe(200);
    const refused = await store("demo", 3);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "FORBIDDEN", details: { limit: 2 } });
    expect(((await (await app.request("/data/demo/C-1/data.json", { headers: data })).json()) as { files: unknown[] }).files).toHaveLength(2);
    expect((await store("full", 3)).status).toBe(200);
    expect((await store("full", 4)).status).toBe(403);
    expect((await store("no-record", 50)).status).toBe(200); // no record, no limits known
  });

  it("concurrent PUT /cases of one user lose nothing", async () => {
    const { app } = service();
    await put(app, "u1", profile);
    await Promise.all(Array.from({ length: 32 }, (_, i) => put(app, "u1/cases", { cases: [{ caseNumber: `C-${i}` }] })));
    const user = (await (await get(app, "u1")).json()) as { cases: unknown[] };
    expect(user.cases).toHaveLength(32);
  });

  it("a missing or wrong key is 401 with the standard body on every route", async () => {
    const { app } = service();
    await put(app, "u1", profile);
    for (const headers of [{}, { "X-Custom-Auth-Key": "wrong" }, { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET }] as Record<string, string>[]) {
      for (const [method, path] of [["GET", "u1"], ["PUT", "u1"], ["DELETE", "u1"], ["PUT", "u1/cases"], ["DELETE", "u1/cases"]]) {
        const response = await app.request(`/user/${path}`, { method, headers, body: method === "GET" ? undefined : "{}" });
        expect(response.status, `${method} ${path}`).toBe(401);
        expect(await response.json()).toMatchObject({ code: "UNAUTHORIZED" });
      }
    }
    expect((await get(app, "u1")).status).toBe(200); // nothing was deleted
  });

  it("other methods are 405", async () => {
    const { app } = service();
    expect((await app.request("/user/u1", { method: "POST", headers: auth, body: "{}" })).status).toBe(405);
    expect((await app.request("/user/u1/cases", { method: "GET", headers: auth })).status).toBe(405);
  });

  it("DELETE of an unknown user is 404; of a user, 200 {success, message} and the record is gone", async () => {
    const { app, ports } = service();
    expect((await del(app, "nobody")).status).toBe(404);
    await put(app, "u1", profile);
    const response = await del(app, "u1");
    expect(response.status).toBe(200);
    const body = (await response.json()) as { success: boolean; message: string };
    expect(body.success).toBe(true);
    expect(typeof body.message).toBe("string");
    expect((await get(app, "u1")).status).toBe(404);
    expect(await ports.outbox!.list("")).toHaveLength(2);
  });
});

describe("GET /user/: every user, for the administrator (users list)", () => {
  const admin = { ...auth, "X-Admin-Key": "admin-key-0123456789" };
  it("lists every user by uid with the admin key, counts their cases, names a record it cannot read; the worker key alone is 403", async () => {
    const { app, ports } = service({ ADMIN_AUTH: "admin-key-0123456789" });
    await put(app, "u2", profile);
    await put(app, "u1", { ...profile, email: null, permitted: false });
    await put(app, "u2/cases", { cases: [{ caseNumber: "C-1" }, { caseNumber: "C-2" }] });
    await ports.users.put("broken", "{not json");
    const listed = await app.request("/user/", { headers: admin });
    expect(listed.status).toBe(200);
    const { users } = (await listed.json()) as { users: Record<string, unknown>[] };
    expect(users.map((user) => user.uid)).toEqual(["broken", "u1", "u2"]);
    expect(users[0]).toEqual({ uid: "broken", unreadable: "The stored user record is not valid JSON" });
    expect(users[1]).toMatchObject({ uid: "u1", email: null, permitted: false, cases: 0 });
    expect(users[2]).toMatchObject({ uid: "u2", email: profile.email, firstName: "Ana", lastName: "Ruiz", company: "State Lab", permitted: true, cases: 2, readOnlyCases: 0 });
    // The worker key is handed to browsers: it reads a record it names, never the list of who uses the service.
    const refused = await app.request("/user", { headers: auth });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "FORBIDDEN" });
    expect((await app.request("/user/", { headers: { "X-Admin-Key": "admin-key-0123456789" } })).status).toBe(401);
  });
});
