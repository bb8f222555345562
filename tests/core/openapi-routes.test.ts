import { describe, expect, expectTypeOf, it } from "vitest";
import { hc } from "hono/client";
import { dataHeaders, KEYS, testService } from "../helpers/service.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { fixture, uploadForm } from "../helpers/images.ts";
import type { DataWorkerApp } from "../../src/core/workers/data.ts";
import type { AuditWorkerApp } from "../../src/core/workers/audit.ts";
import type { UserWorkerApp } from "../../src/core/workers/user.ts";

const userHeaders = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };
const imageHeaders = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };
const keysHeaders = { "X-Custom-Auth-Key": KEYS.KEYS_AUTH };

type Operation = `${"GET" | "POST" | "PUT" | "DELETE"} ${string}`;

/** The document's operations, as `METHOD /path`. */
async function documented(app: ReturnType<typeof testService>["app"]): Promise<Operation[]> {
  const doc = (await (await app.request("/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}` as Operation));
}

/** Whether a concrete path is an instance of a documented path (`{name}` stands for one or more characters; a trailing `/` is the same route). */
function instanceOf(template: string, path: string): boolean {
  const bare = (value: string) => value.split("?")[0]!.replace(/(.)\/$/, "$1");
  const pattern = bare(template).split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")).join(".+");
  return new RegExp(`^${pattern}$`).test(bare(path));
}

/** Whether an answer says the router found nothing there (rather than the operation refusing the input). */
async function routeMissing(response: Response): Promise<boolean> {
  if (response.status === 405) return true;
  if (response.status !== 404) return false;
  const body = (await response.clone().json()) as { message?: string };
  return /no (such )?route/i.test(body.message ?? "");
}

describe("the OpenAPI document and the routes are one declaration", () => {
  it("every documented operation answers a valid call (never the router's 404 or a 405)", async () => {
    const { app } = testService({ ADMIN_AUTH: "admin-key-0123456789", HISTORY_RETENTION_DAYS: "30" });
    const adminHeaders = { ...userHeaders, "X-Admin-Key": "admin-key-0123456789" };
    // One valid call per documented operation, in an order that makes each one meaningful.
    const entry = JSON.stringify(auditEntry({ userId: "u1" }));
    const uploaded = await app.request("/image", { method: "POST", body: uploadForm(fixture("sample.png"), "a.png"), headers: imageHeaders });
    expect(uploaded.status).toBe(200);
    const { result } = (await uploaded.json()) as { result: { id: string; variants: string[] } };
    const deliveryUrl = result.variants[0]!;
    const signed = await (await app.request(`/image/${encodeURIComponent(deliveryUrl)}`, { headers: imageHeaders })).text();
    const calls: Record<Operation, { path: string; init?: RequestInit; status: number }> = {
      "GET /health": { path: "/health", status: 200 },
      "GET /ready": { path: "/ready", status: 200 },
      "PUT /data/{userId}/{caseNumber}/data.json": {
        path: "/data/u1/C-2/data.json",
        init: { method: "PUT", body: JSON.stringify({ caseNumber: "C-2", files: [], createdAt: "2026-11-22T00:00:00Z" }), headers: dataHeaders },
        status: 200,
      },
      "GET /data/{userId}/{caseNumber}/data.json": { path: "/data/u1/C-2/data.json", init: { headers: dataHeaders }, status: 200 },
      "DELETE /data/{userId}/{caseNumber}/data.json": { path: "/data/u1/C-2/data.json", init: { method: "DELETE", headers: dataHeaders }, status: 200 },
      "PUT /data/{userId}/{caseNumber}/{fileId}/data.json": {
        path: "/data/u1/C-2/f2/data.json",
        init: { method: "PUT", body: JSON.stringify({ leftCase: "A", rightCase: "B", leftItem: "1", rightItem: "2", includeConfirmation: false, updatedAt: "2026-11-22T00:00:00Z" }), headers: dataHeaders },
        status: 200,
      },
      "GET /data/{userId}/{caseNumber}/{fileId}/data.json": { path: "/data/u1/C-2/f2/data.json", init: { headers: dataHeaders }, status: 200 },
      "DELETE /data/{userId}/{caseNumber}/{fileId}/data.json": { path: "/data/u1/C-2/f2/data.json", init: { method: "DELETE", headers: dataHeaders }, status: 200 },
      "PUT /data/{userId}/{caseNumber}/{document}": { path: "/data/u1/C-1/data.json", init: { method: "PUT", body: "{}", headers: dataHeaders }, status: 200 },
      "GET /data/{userId}/{caseNumber}/{document}": { path: "/data/u1/C-1/data.json", init: { headers: dataHeaders }, status: 200 },
      "DELETE /data/{userId}/{caseNumber}/{document}": { path: "/data/u1/C-1/data.json", init: { method: "DELETE", headers: dataHeaders }, status: 200 },
      "PUT /data/{userId}/{caseNumber}/{fileId}/{document}": { path: "/data/u1/C-1/f1/data.json", init: { method: "PUT", body: "[]", headers: dataHeaders }, status: 200 },
      "GET /data/{userId}/{caseNumber}/{fileId}/{document}": { path: "/data/u1/C-1/f1/data.json", init: { headers: dataHeaders }, status: 200 },
      "DELETE /data/{userId}/{caseNumber}/{fileId}/{document}": { path: "/data/u1/C-1/f1/data.json", init: { method: "DELETE", headers: dataHeaders }, status: 200 },
      "POST /data/audit": { path: "/data/audit/?userId=u1", init: { method: "POST", body: entry, headers: dataHeaders }, status: 200 },
      "GET /data/audit": { path: "/data/audit/?userId=u1", init: { headers: dataHeaders }, status: 200 },
      "POST /audit/audit": { path: "/audit/audit/?userId=u1", init: { method: "POST", body: entry, headers: dataHeaders }, status: 200 },
      "GET /audit/audit": { path: "/audit/audit/?userId=u1", init: { headers: dataHeaders }, status: 200 },
      "GET /data/audit/verify": { path: "/data/audit/verify?userId=u1", init: { headers: dataHeaders }, status: 200 },
      "GET /audit/audit/verify": { path: "/audit/audit/verify?userId=u1", init: { headers: dataHeaders }, status: 200 },
      "GET /keys/{keyName}": { path: "/keys/USER_DB_AUTH", init: { headers: keysHeaders }, status: 200 },
      "POST /captcha": { path: "/captcha", init: { method: "POST", body: "{}" }, status: 400 },
      "POST /image": { path: "/image", init: { method: "POST", body: uploadForm(fixture("sample.png"), "b.png"), headers: imageHeaders }, status: 200 },
      "GET /image/{image}": { path: `/image/${deliveryUrl}`, init: { headers: imageHeaders }, status: 200 },
      "GET /image/delivery/{imageId}/{variant}": { path: new URL(signed).pathname + new URL(signed).search, status: 200 },
      "DELETE /image/{image}": { path: `/image/${result.id}`, init: { method: "DELETE", headers: imageHeaders }, status: 200 },
      "POST /pdf": { path: "/pdf", init: { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } }, status: 400 },
      "PUT /user/{userUid}": {
        path: "/user/u1",
        init: { method: "PUT", body: JSON.stringify({ email: "a@lab.example", firstName: "A", lastName: "B", company: "Lab", permitted: true }), headers: userHeaders },
        status: 201,
      },
      "GET /user/{userUid}": { path: "/user/u1", init: { headers: userHeaders }, status: 200 },
      // The list is the admin's (no ADMIN_AUTH here): routed, and refused.
      "GET /user": { path: "/user/", init: { headers: userHeaders }, status: 403 },
      "PUT /user/{userUid}/cases": { path: "/user/u1/cases", init: { method: "PUT", body: JSON.stringify({ cases: [{ caseNumber: "C-1" }] }), headers: userHeaders }, status: 200 },
      "DELETE /user/{userUid}/cases": { path: "/user/u1/cases", init: { method: "DELETE", body: JSON.stringify({ casesToDelete: ["C-1"] }), headers: userHeaders }, status: 200 },
      "GET /exchange/{userUid}/cases": { path: "/exchange/u1/cases", init: { headers: dataHeaders }, status: 200 },
      "GET /exchange/{userUid}/cases/{caseNumber}": { path: "/exchange/u1/cases/C-9?format=json", init: { headers: dataHeaders }, status: 404 },
      "GET /exchange/{userUid}/cases/{caseNumber}/confirmations": { path: "/exchange/u1/cases/C-9/confirmations", init: { headers: dataHeaders }, status: 404 },
      // An empty archive: a ZIP, but no case package.
      "POST /exchange/{userUid}/imports": { path: "/exchange/u1/imports", init: { method: "POST", body: Uint8Array.of(0x50, 0x4b, 5, 6, ...new Uint8Array(18)), headers: dataHeaders }, status: 400 },
      "POST /exchange/{userUid}/confirmations": { path: "/exchange/u1/confirmations", init: { method: "POST", body: "{}", headers: dataHeaders }, status: 400 },
      "POST /data/history/prune": { path: "/data/history/prune", init: { method: "POST", headers: { ...dataHeaders, "X-Admin-Key": "admin-key-0123456789" } }, status: 200 },
      "PUT /user/{userUid}/holds": { path: "/user/u1/holds", init: { method: "PUT", body: JSON.stringify({ caseNumber: "C-1", reason: "R v. S" }), headers: adminHeaders }, status: 201 },
      "GET /user/{userUid}/holds": { path: "/user/u1/holds", init: { headers: adminHeaders }, status: 200 },
      "DELETE /user/{userUid}/holds": { path: "/user/u1/holds", init: { method: "DELETE", body: JSON.stringify({ caseNumber: "C-1" }), headers: adminHeaders }, status: 200 },
      "GET /exchange/keys": { path: "/exchange/keys", status: 200 },
      "POST /exchange/{userUid}/cases/{caseNumber}/sealed": { path: "/exchange/u1/cases/C-9/sealed", init: { method: "POST", body: "{}", headers: dataHeaders }, status: 400 },
      "DELETE /user/{userUid}": { path: "/user/u1", init: { method: "DELETE", headers: userHeaders }, status: 200 },
      // Key-only mode: the review routes are there and refuse (reviews need identity tokens); the keys are open.
      "GET /review/keys": { path: "/review/keys", status: 200 },
      "POST /review/cases/{uid}/{caseNumber}": { path: "/review/cases/u1/C-1", init: { method: "POST", body: "{}" }, status: 403 },
      "GET /review/cases/{uid}/{caseNumber}": { path: "/review/cases/u1/C-1", status: 403 },
      "GET /review/inbox/{uid}": { path: "/review/inbox/u1", status: 403 },
      "GET /review/r/{id}": { path: "/review/r/r1", status: 403 },
      "DELETE /review/r/{id}": { path: "/review/r/r1", init: { method: "DELETE" }, status: 403 },
      "POST /review/r/{id}/conclusions": { path: "/review/r/r1/conclusions", init: { method: "POST", body: "{}" }, status: 403 },
      "POST /review/r/{id}/signatures": { path: "/review/r/r1/signatures", init: { method: "POST", body: "{}" }, status: 403 },
      "GET /review/r/{id}/verify": { path: "/review/r/r1/verify", status: 403 },
    };
    const operations = await documented(app);
    // Every documented operation has its call here, and every call here is documented.
    expect(Object.keys(calls).sort()).toEqual([...operations].sort());
    for (const [operation, call] of Object.entries(calls)) {
      const [method, template] = operation.split(" ") as [string, string];
      expect(instanceOf(template, call.path), `${call.path} is an instance of ${template}`).toBe(true);
      const response = await app.request(call.path, { method, ...call.init });
      expect(await routeMissing(response), `${operation} is routed`).toBe(false);
      expect(response.status, `${operation}: ${await response.clone().text()}`).toBe(call.status);
    }
  });

  it("every method and path the apps handle is documented: other paths get only refusals", async () => {
    const { app } = testService();
    const operations = await documented(app);
    const paths = [
      "/", "/health", "/openapi.json", "/data", "/data/", "/data/u1/C-1/data.json", "/data/u1/C-1/notes.txt", "/data/audit", "/data/audit/?userId=u1",
      "/audit", "/audit/", "/audit/audit?userId=u1", "/audit/other", "/keys", "/keys/", "/keys/USER_DB_AUTH", "/keys/a/b", "/captcha", "/captcha/x",
      "/image", "/image/", "/image/x", "/image/a/b/c", "/image/delivery/x/public", "/pdf", "/pdf/x",
      "/user", "/user/", "/user/u1", "/user/u1/", "/user/u1/cases", "/user/u1/holds", "/user/u1/other", "/user/u1/cases/x", "/user/u1/holds/x", "/nowhere",
    ];
    const headers = { ...dataHeaders, "X-Custom-Auth-Key-User": "", ...imageHeaders };
    for (const path of paths) {
      for (const method of ["GET", "POST", "PUT", "DELETE", "PATCH"]) {
        const keyed = path.startsWith("/user") ? { ...headers, "X-Custom-Auth-Key": KEYS.USER_DB_AUTH } : path.startsWith("/keys") ? { ...headers, ...keysHeaders } : headers;
        const response = await app.request(path, { method, headers: keyed, ...(method === "GET" ? {} : { body: "{}" }) });
        if (response.status >= 400) continue;
        const served = operations.some((operation) => {
          const [documentedMethod, template] = operation.split(" ") as [string, string];
          return documentedMethod === method && instanceOf(template, path);
        });
        const documentRoute = method === "GET" && path === "/openapi.json";
        expect(served || documentRoute, `${method} ${path} answered ${response.status} but is not documented`).toBe(true);
      }
    }
  });

  it("hc sees the routes' types: data, audit and user", () => {
    const data = hc<DataWorkerApp>("http://localhost/data");
    expectTypeOf(data.audit.$post).toBeFunction();
    expectTypeOf(data.audit.$get).toBeFunction();
    type Appended = Awaited<ReturnType<Awaited<ReturnType<typeof data.audit.$post>>["json"]>>;
    expectTypeOf<Appended>().toHaveProperty("entryCount").toEqualTypeOf<number>();
    expectTypeOf(data[":filename{[\\s\\S]+}"].$get).toBeFunction();
    expectTypeOf(data[":filename{[\\s\\S]+}"].$put).parameter(0).toHaveProperty("param");
    expectTypeOf(data[":filename{[\\s\\S]+}"].$delete).toBeFunction();

    const audit = hc<AuditWorkerApp>("http://localhost/audit");
    type AuditRead = Awaited<ReturnType<Awaited<ReturnType<typeof audit.audit.$get>>["json"]>>;
    expectTypeOf<AuditRead>().toHaveProperty("total").toEqualTypeOf<number>();
    expectTypeOf<AuditRead>().toHaveProperty("entries").toBeArray();

    const user = hc<UserWorkerApp>("http://localhost/user");
    expectTypeOf(user[":userUid"].$get).parameter(0).toEqualTypeOf<{ param: { userUid: string } }>();
    expectTypeOf(user[":userUid"].$put).toBeFunction();
    expectTypeOf(user[":userUid"].$delete).toBeFunction();
    expectTypeOf(user[":userUid"].cases.$put).toBeFunction();
    expectTypeOf(user[":userUid"].cases.$delete).toBeFunction();
    type UserRead = Awaited<ReturnType<Awaited<ReturnType<typeof user[":userUid"]["$get"]>>["json"]>>;
    expectTypeOf<UserRead>().toHaveProperty("uid").toEqualTypeOf<string>();
  });
});
