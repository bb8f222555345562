/**
 * UserLimits.maxCases through the data worker: clients write case documents directly
 * (`PUT /data/{uid}/{case}/data.json`), so a demo account must not get past its limit
 * that way; and an account deletion removes every case under the user's prefix.
 */
import { describe, expect, it } from "vitest";
import { dataHeaders, KEYS, testService } from "../../helpers/service.ts";

const userAuth = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };
const profile = { email: "demo@lab.example", firstName: "Dee", lastName: "Mo", company: "Lab" };

type App = ReturnType<typeof testService>["app"];
const createUser = async (app: App, uid: string, permitted: boolean) =>
  expect((await app.request(`/user/${uid}`, { method: "PUT", headers: userAuth, body: JSON.stringify({ ...profile, permitted }) })).status).toBe(201);
const putCase = (app: App, uid: string, caseNumber: string, body: unknown = { caseNumber, files: [] }) =>
  app.request(`/data/${uid}/${encodeURIComponent(caseNumber)}/data.json`, { method: "PUT", headers: dataHeaders, body: JSON.stringify(body) });

describe("case limits through the data worker", () => {
  it("a demo account stores DEMO_MAX_CASES case documents; the next new one is 403, updates still work", async () => {
    const { app } = testService({ DEMO_MAX_CASES: "3" });
    await createUser(app, "demo", false);
    for (const caseNumber of ["C-1", "C-2", "C-3"]) expect((await putCase(app, "demo", caseNumber)).status, caseNumber).toBe(200);
    const refused = await putCase(app, "demo", "C-4");
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("Case limit reached"), details: { limit: 3 } });
    expect(await (await app.request("/data/demo/C-4/data.json", { headers: dataHeaders })).json()).toEqual([]);
    // Writing an existing case again, or a file's annotations, is no new case.
    expect((await putCase(app, "demo", "C-2", { caseNumber: "C-2", files: [{ id: "f1" }] })).status).toBe(200);
    expect((await app.request("/data/demo/C-2/f1/data.json", { method: "PUT", headers: dataHeaders, body: "{}" })).status).toBe(200);
  });

  it("cases assigned through the user worker count, and so do case folders outside the record", async () => {
    const { app } = testService({ DEMO_MAX_CASES: "2" });
    await createUser(app, "demo", false);
    expect((await app.request("/user/demo/cases", { method: "PUT", headers: userAuth, body: '{"cases":[{"caseNumber":"A"}]}' })).status).toBe(200);
    // Its own assigned case may get its document.
    expect((await putCase(app, "demo", "A")).status).toBe(200);
    // A stray annotation folder is a case that exists.
    expect((await app.request("/data/demo/B/f1/data.json", { method: "PUT", headers: dataHeaders, body: "{}" })).status).toBe(200);
    expect((await putCase(app, "demo", "C")).status).toBe(403);
    expect((await putCase(app, "demo", "B")).status).toBe(200);
  });

  it("read-only (imported) cases do not count; permitted accounts follow MAX_CASES, unlimited by default", async () => {
    const { app } = testService({ DEMO_MAX_CASES: "1", MAX_CASES: "2" });
    await createUser(app, "demo", false);
    const readOnly = { caseNumber: "R-1", importedAt: "2026-11-20T00:00:00Z", originalExportDate: "2026-11-19T00:00:00Z", originalExportedBy: "bo@lab.example", isReadOnly: true };
    expect((await app.request("/user/demo", { method: "PUT", headers: userAuth, body: JSON.stringify({ readOnlyCases: [readOnly] }) })).status).toBe(200);
    expect((await putCase(app, "demo", "R-1")).status).toBe(200);
    expect((await putCase(app, "demo", "own-1")).status).toBe(200);
    expect((await putCase(app, "demo", "own-2")).status).toBe(403);
    await createUser(app, "full", true);
    expect((await putCase(app, "full", "1")).status).toBe(200);
    expect((await putCase(app, "full", "2")).status).toBe(200);
    expect((await putCase(app, "full", "3")).status).toBe(403);
    const { app: unlimited } = testService();
    await createUser(unlimited, "full", true);
    for (let i = 0; i < 12; i++) expect((await putCase(unlimited, "full", `C-${i}`)).status).toBe(200);
  });

  it("ten concurrent creations by a demo account store exactly DEMO_MAX_CASES", async () => {
    const { app, ports } = testService({ DEMO_MAX_CASES: "3" });
    await createUser(app, "demo", false);
    const statuses = await Promise.all(Array.from({ length: 10 }, async (_, i) => (await putCase(app, "demo", `P-${i}`)).status));
    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 403)).toHaveLength(7);
    expect((await ports.data.list("demo/")).filter((key) => key.endsWith("/data.json"))).toHaveLength(3);
  });

  it("account deletion removes every case under the user's prefix, listed in the record or not", async () => {
    const { app, ports } = testService();
    await createUser(app, "u1", true);
    await createUser(app, "u2", true);
    expect((await app.request("/user/u1/cases", { method: "PUT", headers: userAuth, body: '{"cases":[{"caseNumber":"listed"}]}' })).status).toBe(200);
    await putCase(app, "u1", "listed", { caseNumber: "listed", files: [{ id: "f1" }] });
    await putCase(app, "u1", "unlisted", { caseNumber: "unlisted", files: [{ id: "f2" }] });
    await app.request("/data/u1/unlisted/f2/data.json", { method: "PUT", headers: dataHeaders, body: '{"boxAnnotations":[]}' });
    await app.request("/data/u1/stray/f3/data.json", { method: "PUT", headers: dataHeaders, body: "{}" });
    await putCase(app, "u2", "unlisted");
    const deleted = await app.request("/user/u1", { method: "DELETE", headers: userAuth });
    expect(deleted.status).toBe(200);
    expect(await ports.data.list("u1/")).toEqual([]);
    expect(await ports.data.list("u2/")).toEqual(["u2/unlisted/data.json"]);
  });
});
