import { describe, expect, it } from "vitest";
import { dataHeaders, fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { auditEntry } from "../../helpers/audit-entry.ts";
import { encodeJsonArray } from "../../../src/core/storage/json-array.ts";

type App = ReturnType<typeof testService>["app"];


const post = (app: App, body: unknown, query = "?userId=u1", base = "/data/audit/") =>
  app.request(`${base}${query}`, {
    method: "POST",
    headers: dataHeaders,
    body: typeof body === "string" ? body : body instanceof Uint8Array ? new Uint8Array(body) : JSON.stringify(body),
  });

const list = async (app: App, query: string, base = "/data/audit/") => {
  const response = await app.request(`${base}${query}`, { headers: dataHeaders });
  return { status: response.status, body: (await response.json()) as { entries: Record<string, unknown>[]; total: number } };
};

describe("audit endpoints (spec 4.8)", () => {
  it("POST appends to the day's file and answers success, entryCount and filename", async () => {
    const { app } = testService();
    const first = await post(app, auditEntry());
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ success: true, entryCount: 1, filename: "audit-trails/u1-2026-11-22.json" });
    const second = await post(app, auditEntry({ action: "annotation-edit" }));
    expect(await second.json()).toMatchObject({ entryCount: 2 });
  });

  it("keeps unknown fields of the entry and of details", async () => {
    const { app } = testService();
    await post(app, auditEntry({ sessionId: "s-9", details: { validationErrors: [], customField: { a: 1 } } }));
    const { body } = await list(app, "?userId=u1");
    expect(body.entries[0]).toMatchObject({ sessionId: "s-9", details: { customField: { a: 1 } } });
  });

  it("accepts every AuditAction and AuditResult of spec 2.5, legacy values too", async () => {
    const { app } = testService();
    const actions = ["case-create", "case-rename", "confirmation-import", "user-password-reset", "security-violation", "pdf-generate", "import", "export", "confirm", "validate"];
    for (const action of actions) expect((await post(app, auditEntry({ action }))).status).toBe(200);
    for (const result of ["success", "failure", "warning", "blocked", "pending"]) {
      expect((await post(app, auditEntry({ result }))).status).toBe(200);
    }
  });

  it("refuses invalid entries with 400 naming the field, and stores nothing", async () => {
    const { app, ports } = testService();
    const bad: [unknown, string][] = [
      [auditEntry({ action: "case-explode" }), "action"],
      [auditEntry({ result: "maybe" }), "result"],
      [auditEntry({ timestamp: "yesterday" }), "timestamp"],
      [auditEntry({ timestamp: "2026-13-01T00:00:00Z" }), "timestamp"],
      [auditEntry({ details: undefined }), "details"],
      [auditEntry({ details: { workflowPhase: "lunch" } }), "details.workflowPhase"],
      [auditEntry({ details: { validationErrors: "none" } }), "details.validationErrors"],
      [auditEntry({ details: { performanceMetrics: { processingTimeMs: "fast" } } }), "details.performanceMetrics.processingTimeMs"],
      [auditEntry({ userEmail: 7 }), "userEmail"],
      [[auditEntry()], ""],
    ];
    for (const [body, field] of bad) {
      const response = await post(app, body);
      expect(response.status).toBe(400);
      const error = (await response.json()) as { code: string; message: string; details: { issues: { path: string }[] } };
      expect(error.code).toBe("VALIDATION_ERROR");
      if (field) expect(error.details.issues.map((issue) => issue.path)).toContain(field);
    }
    for (const body of ["{", "", "not json", new Uint8Array([0x7b, 0xff, 0x7d])]) {
      expect((await post(app, body)).status).toBe(400);
    }
    expect(await ports.audit.list("")).toEqual([]);
  });

  it("requires a valid userId on POST and GET", async () => {
    const { app } = testService();
    for (const query of ["", "?userId=", "?userId=a%2Fb", "?userId=..", "?userId=a%00b"]) {
      const posted = await post(app, auditEntry(), query);
      expect(posted.status, query).toBe(400);
      expect(await posted.json()).toMatchObject({ code: "VALIDATION_ERROR" });
      expect((await list(app, query)).status, query).toBe(400);
    }
  });

  it("refuses an entry over MAX_AUDIT_ENTRY_BYTES with 413", async () => {
    const { app } = testService({ MAX_AUDIT_ENTRY_BYTES: "2048" });
    const response = await post(app, auditEntry({ details: { note: "x".repeat(4096) } }));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR" });
  });

  it("GET without dates returns today's entries only", async () => {
    const clock = fixedClock("2026-11-21T23:59:00Z");
    const { app } = testService({}, { clock });
    await post(app, auditEntry({ action: "user-login" }));
    clock.set("2026-11-22T00:01:00Z");
    await post(app, auditEntry({ action: "user-logout" }));
    const { status, body } = await list(app, "?userId=u1");
    expect(status).toBe(200);
    expect(body.total).toBe(1);
    expect(body.entries.map((entry) => entry.action)).toEqual(["user-logout"]);
  });

  it("GET with a range aggregates each day in order", async () => {
    const clock = fixedClock("2026-01-30T10:00:00Z");
    const { app } = testService({}, { clock });
    for (const [day, action] of [["2026-01-30", "case-create"], ["2026-02-01", "case-export"], ["2026-02-03", "case-delete"]]) {
      clock.set(`${day}T10:00:00Z`);
      await post(app, auditEntry({ action }));
    }
    const all = await list(app, "?userId=u1&startDate=2026-01-30&endDate=2026-02-03");
    expect(all.body.entries.map((entry) => entry.action)).toEqual(["case-create", "case-export", "case-delete"]);
    expect(all.body.total).toBe(3);
    const middle = await list(app, "?userId=u1&startDate=2026-01-31&endDate=2026-02-02");
    expect(middle.body.entries.map((entry) => entry.action)).toEqual(["case-export"]);
    const otherUser = await list(app, "?userId=u2&startDate=2026-01-30&endDate=2026-02-03");
    expect(otherUser.body).toEqual({ entries: [], total: 0 });
  });

  it("GET refuses bad dates, reversed ranges and ranges over 366 days", async () => {
    const { app } = testService();
    for (const query of [
      "startDate=2026-2-1&endDate=2026-02-03",
      "startDate=2026-02-30&endDate=2026-03-01",
      "startDate=20260201&endDate=20260203",
      "startDate=2026-02-03&endDate=2026-02-01",
      "startDate=2024-01-01&endDate=2025-01-02",
    ]) {
      const { status, body } = await list(app, `?userId=u1&${query}`);
      expect(status, query).toBe(400);
      expect(body).toMatchObject({ code: "VALIDATION_ERROR" });
    }
    // 366 days, both ends included, is allowed (a leap year).
    expect((await list(app, "?userId=u1&startDate=2024-01-01&endDate=2024-12-31")).status).toBe(200);
  });

  it("reads the legacy key audit-trails/{userId}/{day}.json as well", async () => {
    const { app, ports } = testService();
    const legacy = auditEntry({ action: "user-login", timestamp: "2026-11-22T08:00:00.000Z" });
    await ports.audit.put("audit-trails/u1/2026-11-22.json", new TextEncoder().encode(JSON.stringify([legacy])));
    await post(app, auditEntry({ action: "case-create" }));
    const { body } = await list(app, "?userId=u1");
    expect(body.entries.map((entry) => entry.action)).toEqual(["user-login", "case-create"]);
    expect(await ports.audit.has("audit-trails/u1/2026-11-22.json")).toBe(true);
  });

  it("the data worker and the audit worker share one store", async () => {
    const { app } = testService();
    await post(app, auditEntry({ action: "case-create" }), "?userId=u1", "/data/audit/");
    const via = await post(app, auditEntry({ action: "case-delete" }), "?userId=u1", "/audit/audit");
    expect(await via.json()).toMatchObject({ entryCount: 2 });
    const { body } = await list(app, "?userId=u1", "/audit/audit/");
    expect(body.entries.map((entry) => entry.action)).toEqual(["case-create", "case-delete"]);
  });

  it("64 concurrent POSTs give 64 entries and entryCounts 1..64 once each", async () => {
    const { app } = testService();
    const responses = await Promise.all(
      Array.from({ length: 64 }, (_, i) => post(app, auditEntry({ details: { validationErrors: [], seq: i } }))),
    );
    const counts = await Promise.all(responses.map(async (r) => ((await r.json()) as { entryCount: number }).entryCount));
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    const { body } = await list(app, "?userId=u1");
    expect(body.total).toBe(64);
    const seqs = body.entries.map((entry) => (entry.details as { seq: number }).seq).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 64 }, (_, i) => i));
  });

  it("earlier entries are never changed by later appends", async () => {
    const { app, ports } = testService();
    await post(app, auditEntry({ action: "case-create" }));
    const before = await ports.audit.get("audit-trails/u1-2026-11-22.json");
    await post(app, auditEntry({ action: "case-delete" }));
    const after = await ports.audit.get("audit-trails/u1-2026-11-22.json");
    const head = new TextDecoder().decode(before!).slice(0, -2); // without the closing "\n]"
    expect(new TextDecoder().decode(after!).startsWith(head)).toBe(true);
  });

  it("a day whose last line was torn still yields its complete entries", async () => {
    const { app, ports } = testService();
    const whole = new TextDecoder().decode(encodeJsonArray([auditEntry({ action: "user-login" })]));
    const torn = `${whole.slice(0, -2)},\n{"timestamp":"2026-11-22T12:0`;
    await ports.audit.put("audit-trails/u1-2026-11-22.json", new TextEncoder().encode(torn));
    expect((await list(app, "?userId=u1")).body.entries.map((entry) => entry.action)).toEqual(["user-login"]);
    expect(await (await post(app, auditEntry({ action: "user-logout" }))).json()).toMatchObject({ entryCount: 2 });
    expect((await list(app, "?userId=u1")).body.entries.map((entry) => entry.action)).toEqual(["user-login", "user-logout"]);
  });

  it("a missing or wrong key is 403 on both mounts; other methods are 405", async () => {
    const { app } = testService();
    for (const base of ["/data/audit/", "/audit/audit/"]) {
      for (const headers of [{}, { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH }] as Record<string, string>[]) {
        const response = await app.request(`${base}?userId=u1`, { method: "POST", headers, body: JSON.stringify(auditEntry()) });
        expect(response.status).toBe(403);
        expect(await response.json()).toMatchObject({ code: "FORBIDDEN" });
        expect((await app.request(`${base}?userId=u1`, { headers })).status).toBe(403);
      }
      const put = await app.request(`${base}?userId=u1`, { method: "PUT", headers: dataHeaders, body: "{}" });
      expect(put.status).toBe(405);
      expect(put.headers.get("allow")).toContain("POST");
    }
  });

  it("the audit worker has no data routes", async () => {
    const { app } = testService();
    const response = await app.request("/audit/u1/C-1/data.json", { headers: dataHeaders });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: "NOT_FOUND" });
  });
});
