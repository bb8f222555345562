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

  it("refuses an append past MAX_AUDIT_DAY_BYTES with 429 (not 500), records it once as a security-violation, and appends again the next UTC day", async () => {
    const clock = fixedClock("2026-11-22T18:00:00Z");
    const { app } = testService({ MAX_AUDIT_DAY_BYTES: "8192", RATE_LIMITS: "off" }, { clock });
    const padded = (n: number) => auditEntry({ details: { validationErrors: [], n, note: "p".repeat(1000) } });
    const statuses: number[] = [];
    for (let n = 1; n <= 12; n++) statuses.push((await post(app, padded(n))).status);
    const accepted = statuses.filter((status) => status === 200).length;
    expect(accepted).toBeGreaterThan(3);
    expect(statuses.slice(accepted)).toEqual(Array(12 - accepted).fill(429));
    const refused = await post(app, padded(99));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toBe(String(6 * 3600));
    expect(await refused.json()).toMatchObject({ code: "FORBIDDEN", details: { limit: "MAX_AUDIT_DAY_BYTES", maxDayBytes: 8192, day: "2026-11-22" } });
    // Every accepted entry is kept, and the refusals are one security-violation entry, the day's newest.
    const { body } = await list(app, "?userId=u1");
    expect(body.entries.map((entry) => entry.action)).toEqual(["security-violation", ...Array(accepted).fill("case-create")]);
    expect(body.entries[0]).toMatchObject({ result: "blocked", details: { securityDetails: { reason: "audit day full", source: "service", limit: "MAX_AUDIT_DAY_BYTES" } } });
    const verified = await app.request("/data/audit/verify?userId=u1", { headers: dataHeaders });
    expect(await verified.json()).toMatchObject({ valid: true, entries: accepted + 1 });
    clock.set("2026-11-23T00:00:01Z");
    expect((await post(app, padded(100))).status).toBe(200);
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

  it("GET with a range aggregates each day, newest first", async () => {
    const clock = fixedClock("2026-01-30T10:00:00Z");
    const { app } = testService({}, { clock });
    for (const [day, action] of [["2026-01-30", "case-create"], ["2026-02-01", "case-export"], ["2026-02-03", "case-delete"]]) {
      clock.set(`${day}T10:00:00Z`);
      await post(app, auditEntry({ action }));
    }
    const all = await list(app, "?userId=u1&startDate=2026-01-30&endDate=2026-02-03");
    expect(all.body.entries.map((entry) => entry.action)).toEqual(["case-delete", "case-export", "case-create"]);
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
    // Newest first: the current key's entry, then the legacy key's older one.
    expect(body.entries.map((entry) => entry.action)).toEqual(["case-create", "user-login"]);
    expect(await ports.audit.has("audit-trails/u1/2026-11-22.json")).toBe(true);
  });

  it("the data worker and the audit worker share one store", async () => {
    const { app } = testService();
    await post(app, auditEntry({ action: "case-create" }), "?userId=u1", "/data/audit/");
    const via = await post(app, auditEntry({ action: "case-delete" }), "?userId=u1", "/audit/audit");
    expect(await via.json()).toMatchObject({ entryCount: 2 });
    const { body } = await list(app, "?userId=u1", "/audit/audit/");
    expect(body.entries.map((entry) => entry.action)).toEqual(["case-delete", "case-create"]);
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
    expect((await list(app, "?userId=u1")).body.entries.map((entry) => entry.action)).toEqual(["user-logout", "user-login"]);
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

  it("refuses an entry nested deeper than 64 levels with 400 naming the limit, and stores nothing", async () => {
    const { app, ports } = testService({ MAX_AUDIT_ENTRY_BYTES: "1000000" });
    // ~4,100 levels in 8 KB: once stored, it made every GET of its day a 500.
    for (const levels of [65, 4_100, 100_000]) {
      const body = JSON.stringify(auditEntry()).replace(/}$/, `,"extra":${"[".repeat(levels)}${"]".repeat(levels)}}`);
      const response = await post(app, body);
      expect(response.status, String(levels)).toBe(400);
      const error = (await response.json()) as { code: string; message: string; details: Record<string, unknown> };
      expect(error.code).toBe("VALIDATION_ERROR");
      expect(error.message).toContain("64");
      expect(error.details.maxDepth).toBe(64);
    }
    expect(await ports.audit.list("")).toEqual([]);
    // 64 levels in all (the entry is the first) is accepted.
    const deepest = JSON.stringify(auditEntry()).replace(/}$/, `,"extra":${"[".repeat(63)}${"]".repeat(63)}}`);
    expect((await post(app, deepest)).status).toBe(200);
    expect((await list(app, "?userId=u1")).status).toBe(200);
  });

  it("a stored day with entries that cannot be served answers 200: each is reported in place, the others are returned", async () => {
    const { app, ports } = testService({ ADMIN_AUTH: "admin-key-0123456789" });
    const line = (entry: Record<string, unknown>) => JSON.stringify(entry);
    const deep = line(auditEntry({ action: "security-violation" })).replace(/}$/, `,"x":${"[".repeat(4_100)}${"]".repeat(4_100)}}`);
    const stored = [
      line(auditEntry({ action: "user-login" })),
      deep,
      line(auditEntry({ action: "security-violation", result: "blocked" })),
      '{"timestamp": "2026-11-22T10:00:00Z", broken',
      "42",
      line(auditEntry({ action: "user-logout" })),
    ];
    await ports.audit.put("audit-trails/u1-2026-11-22.json", new TextEncoder().encode(`[\n${stored.join(",\n")}\n]`));
    for (const headers of [dataHeaders, { ...dataHeaders, "X-Admin-Key": "admin-key-0123456789" }]) {
      const response = await app.request("/data/audit/?userId=u1", { headers });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { entries: Record<string, unknown>[]; total: number };
      expect(body.total).toBe(6);
      // Newest first: stored index 5 comes first.
      expect(body.entries.map((entry) => entry.unreadable === true ? `unreadable ${String(entry.index)}` : entry.action)).toEqual([
        "user-logout",
        "unreadable 4",
        "unreadable 3",
        "security-violation",
        "unreadable 1",
        "user-login",
      ]);
      const tooDeep = body.entries[4]!;
      expect(tooDeep).toMatchObject({ unreadable: true, filename: "audit-trails/u1-2026-11-22.json", index: 1, userId: "u1", result: "warning" });
      expect(String(tooDeep.reason)).toContain("nested deeper than 64");
      expect(body.entries[2]!.reason).toBe("the entry is not valid JSON");
      expect(body.entries[1]!.reason).toBe("the entry is not a JSON object");
      // A viewer reads details.validationErrors of every entry: the reason is there too.
      expect((tooDeep.details as { validationErrors: string[] }).validationErrors[0]).toContain("nested deeper than 64");
    }
    // Appending to that day keeps every stored entry, readable or not, byte for byte
    // (7 stored: the 6 above and the admin key's file-access entry of the second GET).
    expect(await (await post(app, auditEntry({ action: "case-create" }))).json()).toMatchObject({ entryCount: 8 });
    const after = new TextDecoder().decode((await ports.audit.get("audit-trails/u1-2026-11-22.json"))!);
    expect(after).toContain(deep);
    expect(after).toContain(`,\n${stored[3]},\n42,\n`);
    const listed = await list(app, "?userId=u1");
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(8);
    expect(listed.body.entries[0]!.action).toBe("case-create");
    expect(listed.body.entries.filter((entry) => entry.unreadable === true).map((entry) => entry.index)).toEqual([4, 3, 1]);
  });

  it("a day in the service's one-entry-per-line form is served as stored, line by line; entries that cannot be served are reported in place", async () => {
    const { app, ports } = testService();
    const deep = JSON.stringify(auditEntry({ action: "security-violation" })).replace(/}$/, `,"x":${"[".repeat(100)}${"]".repeat(100)}}`);
    // Written by another tool: spaces after the colons and an escaped é, both kept as stored.
    const spaced = '{"timestamp": "2026-11-22T09:00:00.000Z", "userId": "u1", "userEmail": "u1@lab.example", "action": "user-login", "result": "success", "details": {"note": "caf\\u00e9"}}';
    const stored = [spaced, deep, "42", '{"fa-enc":"AAAA"}', JSON.stringify(auditEntry({ action: "user-logout" }))];
    await ports.audit.put("audit-trails/u1-2026-11-22.json", new TextEncoder().encode(`[\n${stored.join(",\n")}\n]`));
    const response = await app.request("/data/audit/?userId=u1", { headers: dataHeaders });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain(spaced);
    expect(text).toContain(stored[4]);
    const body = JSON.parse(text) as { entries: Record<string, unknown>[]; total: number };
    expect(body.total).toBe(5);
    expect(body.entries.map((entry) => (entry.unreadable === true ? `unreadable ${String(entry.index)}` : entry.action))).toEqual([
      "user-logout",
      "unreadable 3",
      "unreadable 2",
      "unreadable 1",
      "user-login",
    ]);
    expect(String(body.entries[1]!.reason)).toContain("integrity check under encryption at rest");
    expect(body.entries[2]!.reason).toBe("the entry is not a JSON object");
    expect(String(body.entries[3]!.reason)).toContain("nested deeper than 64");
    expect((body.entries[4]!.details as { note: string }).note).toBe("café");
  });

  it("a stored line that is not valid UTF-8 is answered as valid UTF-8 (the bad byte replaced), never as the stored bytes", async () => {
    const { app, ports } = testService();
    const encoder = new TextEncoder();
    const good = encoder.encode(JSON.stringify(auditEntry({ action: "user-login" })));
    // An entry whose note holds a lone 0xff byte.
    const bad = encoder.encode(JSON.stringify(auditEntry({ action: "user-logout", details: { note: "a?b" } })));
    bad[bad.indexOf(0x3f)] = 0xff;
    await ports.audit.put("audit-trails/u1-2026-11-22.json", Uint8Array.of(0x5b, 0x0a, ...good, 0x2c, 0x0a, ...bad, 0x0a, 0x5d));
    // The legacy file of the day: a line starting with a byte order mark.
    await ports.audit.put("audit-trails/u1/2026-11-22.json", Uint8Array.of(0x5b, 0x0a, 0xef, 0xbb, 0xbf, ...good, 0x0a, 0x5d));
    const response = await app.request("/data/audit/?userId=u1", { headers: dataHeaders });
    expect(response.status).toBe(200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    expect(text).not.toContain("\ufeff");
    const body = JSON.parse(text) as { entries: Record<string, unknown>[]; total: number };
    expect(body.total).toBe(3);
    expect((body.entries[0]!.details as { note: string }).note).toBe("a\ufffdb");
    expect(body.entries[1]!.action).toBe("user-login");
    // The marked line reads as the full parse reads it (the mark is whitespace there), without the mark.
    expect(body.entries[2]!.action).toBe("user-login");
  });

  it("the newest entry, held by the chain's head, is listed once even when its day stores its members in another order", async () => {
    const { app, ports } = testService();
    for (const action of ["case-create", "case-rename"] as const) expect((await post(app, auditEntry({ action }))).status).toBe(200);
    const key = "audit-trails/u1-2026-11-22.json";
    const lines = new TextDecoder().decode((await ports.audit.get(key))!).split("\n");
    // The last entry with its hash moved first (a day rewritten by another tool, still the same entry).
    const { hash, ...rest } = JSON.parse(lines[2]!) as Record<string, unknown>;
    lines[2] = JSON.stringify({ hash, ...rest });
    await ports.audit.put(key, new TextEncoder().encode(lines.join("\n")));
    const { status, body } = await list(app, "?userId=u1");
    expect(status).toBe(200);
    expect(body.entries.map((entry) => entry.action)).toEqual(["case-rename", "case-create"]);
    expect(body.entries[0]!.hash).toBe(hash);
  });

  it("a userId whose percent-encoding is broken is a 400 on append, read and verify, never the user its well-formed encoding names", async () => {
    const { app, ports } = testService();
    const refused = await post(app, auditEntry({ userId: "%E0%A4%A" }), "?userId=%E0%A4%A");
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "VALIDATION_ERROR", message: "Query parameter userId has invalid percent-encoding" });
    for (const path of ["/data/audit/?userId=%E0%A4%A", "/audit/audit/verify?userId=%E0%A4%A", "/data/audit/?userId=u1&startDate=%ZZ"]) {
      expect((await app.request(path, { headers: dataHeaders })).status, path).toBe(400);
    }
    expect(await ports.audit.list("")).toEqual([]);
    // The well-formed encoding of that text is an ordinary user id.
    expect((await post(app, auditEntry({ userId: "%E0%A4%A" }), "?userId=%25E0%25A4%25A")).status).toBe(200);
  });

  it("an entry whose userId is not the query's is a 400 in key-only mode, and nothing is stored", async () => {
    const { app, ports } = testService();
    const response = await post(app, auditEntry({ userId: "u2" }), "?userId=u1");
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "userId", entryUserId: "u2", queryUserId: "u1" } });
    expect(await ports.audit.list("")).toEqual([]);
  });

  it("keeps the service's receipt time as receivedAt beside the client's timestamp; clients cannot send it", async () => {
    const clock = fixedClock("2026-11-22T12:34:56.789Z");
    const { app, ports } = testService({}, { clock });
    await post(app, auditEntry({ timestamp: "2020-01-01T00:00:00.000Z" }));
    const { body } = await list(app, "?userId=u1");
    expect(body.entries[0]).toMatchObject({ timestamp: "2020-01-01T00:00:00.000Z", receivedAt: "2026-11-22T12:34:56.789Z" });
    const forged = await post(app, auditEntry({ receivedAt: "2026-11-22T00:00:00.000Z" }));
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "receivedAt" } });
    const stored = JSON.parse(new TextDecoder().decode((await ports.audit.get("audit-trails/u1-2026-11-22.json"))!)) as unknown[];
    expect(stored).toHaveLength(1);
  });

  it("GET accepts ISO 8601 date-times as the client sends them; the range covers the UTC days of both instants", async () => {
    const clock = fixedClock("2026-11-20T10:00:00Z");
    const { app } = testService({}, { clock });
    for (const time of ["2026-11-20T10:00:00Z", "2026-11-20T23:30:00Z", "2026-11-21T00:10:00Z", "2026-11-22T05:00:00Z", "2026-11-22T20:00:00Z", "2026-11-23T00:00:00Z"]) {
      clock.set(time);
      await post(app, auditEntry({ timestamp: time, details: { validationErrors: [], at: time } }));
    }
    const at = async (query: string) => {
      const { status, body } = await list(app, `?userId=u1&${query}`);
      expect(status, query).toBe(200);
      return body.entries.map((entry) => (entry.details as { at: string }).at);
    };
    // The end's time of day (05:00) is earlier than the start's (12:51): both days are whole.
    expect(await at("startDate=2026-11-20T12:51:07.123Z&endDate=2026-11-22T05:00:00.000Z")).toEqual([
      "2026-11-22T20:00:00Z", "2026-11-22T05:00:00Z", "2026-11-21T00:10:00Z", "2026-11-20T23:30:00Z", "2026-11-20T10:00:00Z",
    ]);
    // Offsets are converted to UTC: 2026-11-22T01:00+02:00 is 2026-11-21T23:00Z, 2026-11-22T20:00-05:00 is 2026-11-23T01:00Z.
    expect(await at(`startDate=${encodeURIComponent("2026-11-22T01:00:00+02:00")}&endDate=2026-11-21T23:59:59Z`)).toEqual(["2026-11-21T00:10:00Z"]);
    expect(await at(`startDate=2026-11-23&endDate=${encodeURIComponent("2026-11-22T20:00:00-05:00")}`)).toEqual(["2026-11-23T00:00:00Z"]);
    // A "+" left unencoded in the query reads as a space; it still means "+".
    expect(await at("startDate=2026-11-22T01:00:00+02:00&endDate=2026-11-21")).toEqual(["2026-11-21T00:10:00Z"]);
    // The same day at two times, the end earlier than the start, is that one day.
    expect(await at("startDate=2026-11-21T18:00:00Z&endDate=2026-11-21T06:00:00Z")).toEqual(["2026-11-21T00:10:00Z"]);
    // Dates and date-times mix; minutes without seconds and lower-case t/z are ISO 8601 too.
    expect(await at("startDate=2026-11-23&endDate=2026-11-23t09:15z")).toEqual(["2026-11-23T00:00:00Z"]);
  });

  it("GET refuses date-times that are not ISO 8601, reversed days and more than 366 days", async () => {
    const { app } = testService();
    for (const query of [
      "startDate=2026-11-22T25:00:00Z",
      "startDate=2026-11-31T10:00:00Z",
      "startDate=2026-11-22T10:00:00+25:00",
      "startDate=Sun, 22 Nov 2026 12:00:00 GMT",
      "startDate=1795000000000",
      "endDate=2026-11-22Tnoon",
      "startDate=2026-11-23T00:30:00Z&endDate=2026-11-22T23:59:59Z",
      `startDate=${encodeURIComponent("2026-11-22T23:00:00-02:00")}&endDate=2026-11-22T22:00:00Z`,
      "startDate=2025-11-21T12:00:00Z&endDate=2026-11-22T00:00:00Z",
    ]) {
      const { status, body } = await list(app, `?userId=u1&${query}`);
      expect(status, query).toBe(400);
      expect(body).toMatchObject({ code: "VALIDATION_ERROR" });
    }
    // 366 UTC days, both ends included, whatever the times of day.
    expect((await list(app, "?userId=u1&startDate=2025-11-22T23:59:59.999Z&endDate=2026-11-22T00:00:00Z")).status).toBe(200);
    // The same instant as start and end, from different offsets, is a valid one-day range.
    expect((await list(app, `?userId=u1&startDate=${encodeURIComponent("2026-11-23T01:00:00+02:00")}&endDate=2026-11-22T23:00:00Z`)).status).toBe(200);
  });

  it("GET answers newest first within a day and across days", async () => {
    const clock = fixedClock("2026-11-21T09:00:00Z");
    const { app } = testService({}, { clock });
    const sent = [["2026-11-21T09:00:00Z", "user-login"], ["2026-11-21T17:00:00Z", "user-logout"], ["2026-11-22T08:00:00Z", "user-login"], ["2026-11-22T08:05:00Z", "case-create"]];
    for (const [time, action] of sent) {
      clock.set(time!);
      await post(app, auditEntry({ timestamp: time, action }));
    }
    const { body } = await list(app, "?userId=u1&startDate=2026-11-21&endDate=2026-11-22");
    const times = body.entries.map((entry) => entry.timestamp as string);
    expect(times).toEqual([...times].sort().reverse());
    expect(body.entries.map((entry) => entry.action)).toEqual(["case-create", "user-login", "user-logout", "user-login"]);
  });

  it("legacy days written on one line or pretty-printed are split entry by entry when one cannot be served", async () => {
    const { app, ports } = testService();
    const deep = JSON.stringify(auditEntry({ action: "security-violation" })).replace(/}$/, `,"x":${"{\"a\":".repeat(3_000)}1${"}".repeat(3_000)}}`);
    const compact = `[${JSON.stringify(auditEntry({ action: "user-login" }))},${deep},${JSON.stringify(auditEntry({ action: "case-create" }))}]`;
    await ports.audit.put("audit-trails/u1/2026-11-22.json", new TextEncoder().encode(compact));
    const pretty = JSON.stringify([auditEntry({ action: "case-rename", details: { validationErrors: [], note: "a, [b] {c} \"d\"" } }), 7], null, 2);
    await ports.audit.put("audit-trails/u1-2026-11-22.json", new TextEncoder().encode(pretty));
    const { status, body } = await list(app, "?userId=u1");
    expect(status).toBe(200);
    expect(body.entries.map((entry) => (entry.unreadable === true ? `${String(entry.filename)} ${String(entry.index)}` : entry.action))).toEqual([
      "audit-trails/u1-2026-11-22.json 1",
      "case-rename",
      "case-create",
      "audit-trails/u1/2026-11-22.json 1",
      "user-login",
    ]);
    expect((body.entries[1]!.details as { note: string }).note).toBe('a, [b] {c} "d"');
  });
});
