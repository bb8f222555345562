import { describe, expect, it } from "vitest";
import { dataHeaders, memoryPorts, testService } from "../helpers/service.ts";
import { createService } from "../../src/core/service/service.ts";
import { parseConfig } from "../../src/core/config/mod.ts";
import type { BlobStore } from "../../src/core/ports.ts";

describe("the service (CONTRACT: one process, seven workers)", () => {
  it("GET /health answers {ok:true} without authentication", async () => {
    const { app } = testService();
    const response = await app.request("/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it("GET /openapi.json is an OpenAPI 3.1 document of every route", async () => {
    const { app } = testService();
    const response = await app.request("/openapi.json");
    expect(response.status).toBe(200);
    const doc = (await response.json()) as { openapi: string; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } };
    expect(doc.openapi).toBe("3.1.0");
    const routes = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect(routes.sort()).toEqual(
      [
        "GET /health",
        "GET /ready",
        "POST /data/audit",
        "GET /data/audit",
        "GET /data/{userId}/{caseNumber}/{document}",
        "PUT /data/{userId}/{caseNumber}/{document}",
        "DELETE /data/{userId}/{caseNumber}/{document}",
        "GET /data/{userId}/{caseNumber}/{fileId}/{document}",
        "PUT /data/{userId}/{caseNumber}/{fileId}/{document}",
        "DELETE /data/{userId}/{caseNumber}/{fileId}/{document}",
        "GET /data/{userId}/{caseNumber}/data.json",
        "PUT /data/{userId}/{caseNumber}/data.json",
        "DELETE /data/{userId}/{caseNumber}/data.json",
        "GET /data/{userId}/{caseNumber}/{fileId}/data.json",
        "PUT /data/{userId}/{caseNumber}/{fileId}/data.json",
        "DELETE /data/{userId}/{caseNumber}/{fileId}/data.json",
        "GET /keys/{keyName}",
        "POST /captcha",
        "POST /audit/audit",
        "GET /audit/audit",
        "GET /data/audit/verify",
        "GET /audit/audit/verify",
        "POST /image",
        "GET /image/{image}",
        "DELETE /image/{image}",
        "GET /image/delivery/{imageId}/{variant}",
        "POST /pdf",
        "GET /user",
        "GET /user/{userUid}",
        "PUT /user/{userUid}",
        "DELETE /user/{userUid}",
        "PUT /user/{userUid}/cases",
        "DELETE /user/{userUid}/cases",
        "GET /exchange/{userUid}/cases",
        "GET /exchange/{userUid}/cases/{caseNumber}",
        "GET /exchange/{userUid}/cases/{caseNumber}/confirmations",
        "POST /exchange/{userUid}/imports",
        "POST /exchange/{userUid}/confirmations",
        "GET /user/{userUid}/holds",
        "PUT /user/{userUid}/holds",
        "DELETE /user/{userUid}/holds",
        "POST /data/history/prune",
        "GET /exchange/keys",
        "POST /exchange/{userUid}/cases/{caseNumber}/sealed",
        "GET /review/keys",
        "POST /review/cases/{uid}/{caseNumber}",
        "GET /review/cases/{uid}/{caseNumber}",
        "GET /review/inbox/{uid}",
        "GET /review/r/{id}",
        "DELETE /review/r/{id}",
        "POST /review/r/{id}/conclusions",
        "POST /review/r/{id}/signatures",
        "GET /review/r/{id}/verify",
      ].sort(),
    );
    // Derived from the schemas that validate: the audit entry's action enum is in it (in the entry's named schema, which the append refers to).
    expect(JSON.stringify(doc.paths["/data/audit"])).toContain('"#/components/schemas/AuditEntryInput"');
    expect(JSON.stringify(doc.components.schemas["AuditEntryInput"])).toContain("confirmation-import");
  });

  it("an unknown path is a 404 with the standard body", async () => {
    const { app } = testService();
    const response = await app.request("/nowhere");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: "NOT_FOUND", error: "Not Found" });
  });

  it("a failing store answers 500 SERVER_ERROR without internals", async () => {
    const ports = memoryPorts();
    const broken: BlobStore = {
      ...ports.data,
      get: () => Promise.reject(new Error("ECONNREFUSED 10.0.0.5:6379 password=hunter2")),
    };
    const app = createService({ ...ports, data: broken }, parseConfig({ R2_KEY_SECRET: dataHeaders["X-Custom-Auth-Key"] }));
    const response = await app.request("/data/u1/C-1/data.json", { headers: dataHeaders });
    expect(response.status).toBe(500);
    const text = await response.text();
    // The request id alone, so the operator finds the cause in the log (docs/operations.md#logs).
    expect(JSON.parse(text)).toEqual({ error: "Internal Server Error", code: "SERVER_ERROR", message: "Internal server error", details: { requestId: response.headers.get("x-request-id") } });
    expect(text).not.toContain("hunter2");
  });
});
