/**
 * GET /audit/verify on both audit mounts: the verdict clients and reviewers read, the same
 * auth as reading the trail, tampering on the stored bytes named, legacy entries unchained,
 * chain fields refused from clients, and heads signed with AUDIT_SIGNING_KEY.
 */
import { describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair } from "jose";
import { dataHeaders, fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { auditEntry } from "../../helpers/audit-entry.ts";
import { encodeJsonArray } from "../../../src/core/storage/json-array.ts";
import { verifyAuditTrail } from "../../../src/core/audit/verify.ts";

type App = ReturnType<typeof testService>["app"];
const post = (app: App, body: unknown, base = "/data/audit/") =>
  app.request(`${base}?userId=u1`, { method: "POST", headers: dataHeaders, body: JSON.stringify(body) });
const verify = async (app: App, query = "?userId=u1", base = "/data/audit/verify", headers: Record<string, string> = dataHeaders) => {
  const response = await app.request(`${base}${query}`, { headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & { days: Record<string, unknown>[] } };
};

describe("GET /audit/verify", () => {
  it("answers {valid, userId, from, to, entries, head, days} on /data/audit/verify and /audit/audit/verify over days", async () => {
    const clock = fixedClock("2026-11-20T10:00:00Z");
    const { app } = testService({}, { clock });
    await post(app, auditEntry());
    clock.set("2026-11-21T10:00:00Z");
    await post(app, auditEntry({ action: "case-export" }), "/audit/audit/");
    await post(app, auditEntry({ action: "case-delete" }));
    for (const base of ["/data/audit/verify", "/audit/audit/verify"]) {
      const { status, body } = await verify(app, "?userId=u1", base);
      expect(status).toBe(200);
      expect(body).toMatchObject({ valid: true, userId: "u1", from: "2026-11-20", to: "2026-11-21", entries: 3, unchained: 0, head: { seq: 3, day: "2026-11-21", signature: "unsigned" } });
      expect(body.days).toEqual([{ date: "2026-11-20", entries: 1, valid: true }, { date: "2026-11-21", entries: 2, valid: true }]);
    }
    const ranged = await verify(app, "?userId=u1&startDate=2026-11-21&endDate=2026-11-21");
    expect(ranged.body).toMatchObject({ valid: true, from: "2026-11-21", to: "2026-11-21", entries: 2 });
    // GET still serves entries as before, now with their chain fields.
    const listed = await (await app.request("/data/audit/?userId=u1", { headers: dataHeaders })).json() as { entries: { seq: number; hash: string }[] };
    expect(listed.entries.map((entry) => entry.seq)).toEqual([3, 2]);
  });

  it("names an entry edited in the stored bytes; a missing key is 403; a bad userId or date is 400", async () => {
    const { app, ports } = testService();
    for (let i = 0; i < 3; i++) await post(app, auditEntry({ details: { validationErrors: [], i } }));
    const key = "audit-trails/u1-2026-11-22.json";
    const text = new TextDecoder().decode((await ports.audit.get(key))!);
    await ports.audit.put(key, new TextEncoder().encode(text.replace('"i":1', '"i":7')));
    const { body } = await verify(app);
    expect(body).toMatchObject({ valid: false, firstBad: { date: "2026-11-22", seq: 2, index: 1, reason: "edited" } });
    expect(body.days[0]).toMatchObject({ valid: false, firstBadSeq: 2, reason: "edited" });
    expect((await verify(app, "?userId=u1", "/data/audit/verify", {})).status).toBe(403);
    expect((await verify(app, "?userId=u1", "/audit/audit/verify", { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH })).status).toBe(403);
    for (const query of ["", "?userId=a%2Fb", "?userId=u1&startDate=yesterday", "?userId=u1&startDate=2026-11-23&endDate=2026-11-01"]) {
      expect((await verify(app, query)).status, query).toBe(400);
    }
    expect((await app.request("/data/audit/verify?userId=u1", { method: "POST", headers: dataHeaders, body: "{}" })).status).toBe(405);
  });

  it("entries stored before the chain are unchained, not tampering; the chain starts after them", async () => {
    const { app, ports } = testService();
    await ports.audit.put("audit-trails/u1/2026-11-22.json", encodeJsonArray([auditEntry({ action: "user-login" })]));
    await ports.audit.put("audit-trails/u1-2026-11-22.json", encodeJsonArray([auditEntry({ action: "case-create" })]));
    await post(app, auditEntry({ action: "case-delete" }));
    const { body } = await verify(app);
    expect(body).toMatchObject({ valid: true, entries: 3, unchained: 2, head: { seq: 1 } });
    expect(body.days[0]).toMatchObject({ valid: true, entries: 3, unchained: 2 });
  });

  it("hostile stored bytes: a head naming a first day centuries back is a 400 asking for a range, never a read of every day; an entry nested past the call stack is unreadable, not a crash", async () => {
    const { app, ports } = testService();
    await post(app, auditEntry());
    const head = JSON.parse(new TextDecoder().decode((await ports.audit.get("audit-heads/u1.json"))!)) as Record<string, unknown>;
    await ports.audit.put("audit-heads/u1.json", new TextEncoder().encode(JSON.stringify({ ...head, firstDay: "0001-01-01" })));
    const wide = await verify(app);
    expect(wide.status).toBe(400);
    expect(String(wide.body.message)).toContain("verify it in ranges");
    expect((await verify(app, "?userId=u1&startDate=2026-11-22")).body).toMatchObject({ valid: true, entries: 1 });

    const deep = { seq: 1, prevHash: "0".repeat(64), hash: "f".repeat(64), x: JSON.parse(`${"[".repeat(20_000)}${"]".repeat(20_000)}`) as unknown };
    const result = await verifyAuditTrail({ userId: "u1", days: [{ date: "2026-11-22", entries: [deep] }], head: null });
    expect(result.firstBad).toMatchObject({ seq: 1, reason: "unreadable" });
  });

  it("clients cannot send seq, prevHash or hash (400), and nothing is stored", async () => {
    const { app, ports } = testService();
    for (const field of ["seq", "prevHash", "hash"]) {
      const response = await post(app, auditEntry({ [field]: field === "seq" ? 1 : "0".repeat(64) }));
      expect(response.status, field).toBe(400);
      expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR", details: { field } });
    }
    expect(await ports.audit.list("")).toEqual([]);
  });

  it("with AUDIT_SIGNING_KEY the head is signed and verifies; an older key in AUDIT_VERIFY_KEYS still verifies its heads", async () => {
    const older = await generateKeyPair("ES256", { extractable: true });
    const olderJwk = { ...(await exportJWK(older.privateKey)), kid: "old" };
    const { app, ports } = testService({ AUDIT_SIGNING_KEY: JSON.stringify(olderJwk) });
    await post(app, auditEntry());
    expect((await verify(app)).body).toMatchObject({ valid: true, head: { signature: "valid" } });
    const head = JSON.parse(new TextDecoder().decode((await ports.audit.get("audit-heads/u1.json"))!)) as { signature: string };
    expect(head.signature.split(".")).toHaveLength(3);

    const newer = await generateKeyPair("EdDSA", { extractable: true });
    const { kid: _kid, d: _d, ...olderPublic } = olderJwk;
    const rotated = testService({ AUDIT_SIGNING_KEY: JSON.stringify(await exportJWK(newer.privateKey)), AUDIT_VERIFY_KEYS: JSON.stringify([{ ...olderPublic, kid: "old" }]) }, { audit: ports.audit });
    expect((await verify(rotated.app)).body).toMatchObject({ valid: true, head: { signature: "valid" } });
    const unknown = testService({ AUDIT_SIGNING_KEY: JSON.stringify(await exportJWK(newer.privateKey)) }, { audit: ports.audit });
    expect((await verify(unknown.app)).body).toMatchObject({ valid: false, head: { signature: "invalid" }, firstBad: { reason: "signature invalid" } });
    // The next append under the new key signs with it.
    await post(rotated.app, auditEntry());
    expect((await verify(unknown.app)).body).toMatchObject({ valid: true, head: { seq: 2, signature: "valid" } });
  });

  it("with AUDIT_SIGNING_KEY an unsigned head is signature missing, and appends do not sign over it (audit sign-heads does)", async () => {
    const { app, ports } = testService({});
    await post(app, auditEntry());
    const key = JSON.stringify(await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey));
    const keyed = testService({ AUDIT_SIGNING_KEY: key }, { audit: ports.audit });
    expect((await verify(keyed.app)).body).toMatchObject({ valid: false, head: { seq: 1, signature: "unsigned" }, firstBad: { seq: 1, reason: "signature missing" } });
    expect((await post(keyed.app, auditEntry())).status).toBe(200);
    const after = (await verify(keyed.app, "?userId=u1", "/audit/audit/verify")).body;
    expect(after).toMatchObject({ valid: false, entries: 2, head: { seq: 2, signature: "unsigned" }, firstBad: { seq: 2, reason: "signature missing" } });
    expect(String((after.firstBad as { message: string }).message)).toContain("audit sign-heads");
    // Without the key the chain alone is judged, and it is whole.
    expect((await verify(app)).body).toMatchObject({ valid: true, head: { seq: 2, signature: "unsigned" } });
  });
});
