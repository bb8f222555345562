/**
 * How the Striae v1.0 client writes user records and case documents, and what it reads back:
 * profile edits with "" for unknown names, read-only case entries with its own fields, case
 * assignments carrying their creation date, read-only imports into review accounts, and the
 * key reads it makes before nearly every call.
 */
import { describe, expect, it } from "vitest";
import { dataHeaders, fixedClock, KEYS, testService } from "../helpers/service.ts";

const userKey = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };
const data = { ...dataHeaders, "Content-Type": "application/json" };
const signUp = { uid: "u1", email: "ana@lab.example", firstName: "Ana", lastName: "Ruiz", company: "State Lab", permitted: false, cases: [], readOnlyCases: [], createdAt: "2026-11-22T11:00:00.000Z" };

function service(env: Record<string, string> = {}) {
  return testService(env, { clock: fixedClock("2026-11-22T12:00:00Z") });
}

describe("client compatibility: user records", () => {
  it("a profile edit with \"\" for an unknown name keeps the stored one; company \"\" on sign-up is stored", async () => {
    const { app } = service();
    expect((await app.request("/user/u1", { method: "PUT", headers: userKey, body: JSON.stringify({ ...signUp, company: "" }) })).status).toBe(201);
    const edit = await app.request("/user/u1", { method: "PUT", headers: userKey, body: JSON.stringify({ email: "ana@lab.example", firstName: "Ana María", lastName: "" }) });
    expect(edit.status).toBe(200);
    expect(await edit.json()).toMatchObject({ firstName: "Ana María", lastName: "Ruiz", company: "" });
  });

  it("keeps the fields the client writes on a read-only case entry (sourceChecksum)", async () => {
    const { app } = service();
    await app.request("/user/u1", { method: "PUT", headers: userKey, body: JSON.stringify(signUp) });
    const entry = { caseNumber: "R-1", importedAt: "2026-11-22T11:30:00.000Z", originalExportDate: "2026-11-20T09:00:00.000Z", originalExportedBy: "bo@lab.example", sourceChecksum: "abc123", isReadOnly: true };
    const response = await app.request("/user/u1", { method: "PUT", headers: userKey, body: JSON.stringify({ ...signUp, readOnlyCases: [entry], updatedAt: "2026-11-22T11:30:00.000Z" }) });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { readOnlyCases: unknown[] }).readOnlyCases).toEqual([entry]);
  });

  it("case assignments keep the client's createdAt (a renamed case keeps its date) and its other fields", async () => {
    const { app } = service();
    await app.request("/user/u1", { method: "PUT", headers: userKey, body: JSON.stringify({ ...signUp, permitted: true }) });
    const response = await app.request("/user/u1/cases", {
      method: "PUT",
      headers: userKey,
      body: JSON.stringify({ cases: [{ createdAt: "2025-01-05T08:00:00.000Z", caseNumber: "C-renamed" }, { caseNumber: "C-new" }, { createdAt: "yesterday", caseNumber: "C-odd" }] }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { cases: unknown[] }).cases).toEqual([
      { createdAt: "2025-01-05T08:00:00.000Z", caseNumber: "C-renamed" },
      { caseNumber: "C-new", createdAt: "2026-11-22T12:00:00.000Z" },
      { caseNumber: "C-odd", createdAt: "2026-11-22T12:00:00.000Z" },
    ]);
  });
});

describe("client compatibility: case documents", () => {
  it("a review account (permitted: false) imports a read-only case with more files than its demo limits", async () => {
    const { app } = service({ DEMO_MAX_CASES: "1", DEMO_MAX_FILES_PER_CASE: "10" });
    await app.request("/user/u1", { method: "PUT", headers: userKey, body: JSON.stringify(signUp) });
    expect((await app.request("/data/u1/own/data.json", { method: "PUT", headers: data, body: '{"caseNumber":"own","files":[]}' })).status).toBe(200);
    const files = Array.from({ length: 12 }, (_, i) => ({ id: `img-${i}`, originalFilename: `${i}.jpg`, uploadedAt: "2026-11-20T09:00:00.000Z" }));
    const imported = {
      createdAt: "2026-11-20T09:00:00.000Z",
      caseNumber: "R-1",
      files,
      isReadOnly: true,
      importedAt: "2026-11-22T11:30:00.000Z",
      originalImageIds: Object.fromEntries(files.map((file) => [file.id, `orig-${file.id}`])),
      forensicManifestCreatedAt: "2026-11-20T09:00:00.000Z",
    };
    const response = await app.request("/data/u1/R-1/data.json", { method: "PUT", headers: data, body: JSON.stringify(imported) });
    expect(response.status).toBe(200);
    expect(await (await app.request("/data/u1/R-1/data.json", { headers: data })).json()).toEqual(imported);
    // Its own cases are still limited.
    expect((await app.request("/data/u1/own-2/data.json", { method: "PUT", headers: data, body: '{"caseNumber":"own-2","files":[]}' })).status).toBe(403);
  });
});

describe("client compatibility: key reads", () => {
  it("the keys worker answers the hundreds of reads a minute of work makes from one address", async () => {
    const { app } = service();
    const keys = { "X-Custom-Auth-Key": KEYS.KEYS_AUTH, "Content-Type": "application/json" };
    // An upload alone reads about 15 keys; twenty uploads in a minute from one lab address.
    for (let i = 0; i < 300; i++) {
      const name = ["USER_DB_AUTH", "R2_KEY_SECRET", "IMAGES_API_TOKEN", "ACCOUNT_HASH"][i % 4]!;
      const response = await app.request(`/keys/${name}`, { headers: keys }, { clientIp: "203.0.113.7" });
      expect(response.status, `read ${i + 1}`).toBe(200);
      expect(await response.text()).toBe(KEYS[name as keyof typeof KEYS]);
    }
  });
});
