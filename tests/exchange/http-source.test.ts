import { describe, expect, it } from "vitest";
import { KEYS, testService } from "../helpers/service.ts";
import { profile, seedAccount } from "../helpers/accounts.ts";
import { exportCaseZip, httpExchangeStore, importCase } from "../../src/core/exchange/mod.ts";
import { collectCaseExport } from "../../src/core/exchange/case-export.ts";
import { streamBytes } from "./exchange-fixtures.ts";

describe("the exchange over the workers' HTTP API (httpExchangeStore)", () => {
  it("exports a case as ZIP and imports it for another user, only through HTTP calls", async () => {
    const { app } = testService({ PUBLIC_URL: "http://localhost" });
    const calls: string[] = [];
    const fetchApp = (input: string | URL | Request, init?: RequestInit) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      calls.push(`${init?.method ?? "GET"} ${new URL(url).pathname.split("/")[1]}`);
      return Promise.resolve(app.request(url, init));
    };
    const on = (mount: string) => (path: string, init?: RequestInit) => Promise.resolve(app.request(`${mount}${path}`, init));
    const images = await seedAccount({ user: on("/user"), data: on("/data"), image: on("/image") }, "analyst", { own: ["C-1"], readOnly: [], filesPerCase: 3 });
    const put = await app.request("/user/reviewer", {
      method: "PUT",
      headers: { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" },
      body: JSON.stringify(profile("reviewer")),
    });
    expect(put.status).toBe(201);

    const store = httpExchangeStore({
      userWorkerUrl: "http://localhost/user",
      userKey: KEYS.USER_DB_AUTH,
      dataWorkerUrl: "http://localhost/data",
      dataKey: KEYS.R2_KEY_SECRET,
      imageWorkerUrl: "http://localhost/image",
      imageToken: KEYS.IMAGES_API_TOKEN,
      fetch: fetchApp,
    });
    const zip = await streamBytes(exportCaseZip(store, "analyst", "C-1"));
    const result = await importCase(store, zip, "reviewer");
    expect(result).toMatchObject({ success: true, caseNumber: "C-1", filesImported: 3, annotationsImported: 3 });

    const reviewer = await (await app.request("/user/reviewer", { headers: { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH } })).json() as any;
    expect(reviewer.readOnlyCases).toMatchObject([{ caseNumber: "C-1", isReadOnly: true, originalExportedBy: "analyst@lab.example" }]);
    const again = await collectCaseExport(store, "reviewer", "C-1");
    expect(again.files.map((file) => file.annotations)).toEqual((await collectCaseExport(store, "analyst", "C-1")).files.map((file) => file.annotations));
    const document = await (await app.request("/data/reviewer/C-1/data.json", { headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET } })).json() as any;
    for (const [i, id] of images["C-1"]!.entries()) {
      expect(await store.readImage(document.originalImageIds[id])).toEqual(await store.readImage(images["C-1"]![i]!));
    }
    const audit = await (await app.request("/data/audit/?userId=reviewer", { headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET } })).json() as any;
    expect(audit.entries.map((entry: any) => entry.action)).toContain("case-import");
    expect(new Set(calls.map((call) => call.split(" ")[1]))).toEqual(new Set(["user", "data", "image"]));
    expect(await store.readImage("no-such-image")).toBeNull();
    expect(await store.getCase("analyst", "NOPE")).toBeNull();
    // Every key segment is checked before a call is made, as in the stores.
    const made = calls.length;
    await expect(store.getCase("analyst", "a/b")).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    await expect(store.getUser("..")).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    expect(calls).toHaveLength(made);
  });
});
