import { describe, expect, it } from "vitest";
import type { Miniflare } from "miniflare";
import { auditEntry } from "../../helpers/audit-entry.ts";
import { SERVICE_STORES, useWorkerd } from "../../helpers/workerd-service.ts";
import type { R2BucketLike } from "../../../src/adapters/cloudflare/bindings.ts";
import { sendRaw } from "../../helpers/raw-request.ts";

const bucket = async (mf: Miniflare, name: string) => (await mf.getR2Bucket(name)) as unknown as R2BucketLike;

const KEY = "r2-key";
const workerd = useWorkerd("fa-workerd-");

async function start(entry: string, bindings: Record<string, string> = { R2_KEY_SECRET: KEY }, withBindings = true) {
  return await workerd.start({ scriptPath: await workerd.bundle(entry), ...(withBindings ? SERVICE_STORES : {}), bindings });
}

describe("Cloudflare module workers in workerd", () => {
  it("[workerd] stores objects under the CONTRACT's /-separated keys in the R2 buckets", async () => {
    const mf = await start("all");
    const headers = { "X-Custom-Auth-Key": KEY };
    expect((await mf.dispatchFetch("http://w/data/u1/C-1/data.json", { method: "PUT", headers, body: '{"caseNumber":"C-1"}' })).status).toBe(200);
    expect((await mf.dispatchFetch("http://w/data/u1/C-1/f%201/data.json", { method: "PUT", headers, body: "{}" })).status).toBe(200);
    const posted = await mf.dispatchFetch("http://w/audit/audit/?userId=u1", { method: "POST", headers, body: JSON.stringify(auditEntry()) });
    const { filename } = (await posted.json()) as { filename: string };

    const data = await bucket(mf, "STRIAE_DATA");
    const dataKeys = (await data.list()).objects.map((object) => object.key).sort();
    // The documents under the CONTRACT's keys; each one's history beside them under #history/ (docs/storage.md#record-history).
    expect(dataKeys.filter((key) => !key.startsWith("#history/"))).toEqual(["u1/C-1/data.json", "u1/C-1/f 1/data.json"]);
    expect(dataKeys.filter((key) => key.startsWith("#history/"))).toEqual(["u1/C-1/data.json", "u1/C-1/f 1/data.json"].flatMap((key) => ["head", "log"].map((part) => `#history/${key}/${part}`)));
    expect(new TextDecoder().decode(await (await data.get("u1/C-1/data.json"))!.arrayBuffer())).toBe('{"caseNumber":"C-1"}');
    const audit = await bucket(mf, "STRIAE_AUDIT");
    // The day and the head of the user's hash chain.
    expect((await audit.list()).objects.map((object) => object.key).sort()).toEqual(["audit-heads/u1.json", filename].sort());
    expect(filename).toMatch(/^audit-trails\/u1-\d{4}-\d{2}-\d{2}\.json$/);
  }, 60_000);

  it("[workerd] chains audit entries in R2 and verifies them at /audit/audit/verify; an object edited in the bucket is named", async () => {
    const mf = await start("all");
    const headers = { "X-Custom-Auth-Key": KEY };
    for (const action of ["case-create", "annotation-edit", "case-export"]) {
      expect((await mf.dispatchFetch("http://w/audit/audit/?userId=u3", { method: "POST", headers, body: JSON.stringify(auditEntry({ userId: "u3", action })) })).status).toBe(200);
    }
    const verified = await mf.dispatchFetch("http://w/data/audit/verify?userId=u3", { headers });
    expect(await verified.json()).toMatchObject({ valid: true, entries: 3, head: { seq: 3, signature: "unsigned" } });
    const audit = await bucket(mf, "STRIAE_AUDIT");
    const day = (await audit.list({ prefix: "audit-trails/u3-" })).objects[0]!.key;
    const text = new TextDecoder().decode(await (await audit.get(day))!.arrayBuffer());
    await audit.put(day, text.replace('"action":"annotation-edit"', '"action":"case-delete"'));
    const tampered = await mf.dispatchFetch("http://w/audit/audit/verify?userId=u3", { headers });
    expect(await tampered.json()).toMatchObject({ valid: false, firstBad: { seq: 2, index: 1, reason: "edited" } });
  }, 60_000);

  it("[workerd] reads days that existing deployments wrote under the legacy key", async () => {
    const mf = await start("audit");
    const today = new Date().toISOString().slice(0, 10);
    const audit = await bucket(mf, "STRIAE_AUDIT");
    await audit.put(`audit-trails/u9/${today}.json`, JSON.stringify([auditEntry({ userId: "u9", action: "user-login" })]));
    const listed = await mf.dispatchFetch("http://w/audit/?userId=u9", { headers: { "X-Custom-Auth-Key": KEY } });
    expect(((await listed.json()) as { entries: { action: string }[] }).entries.map((e) => e.action)).toEqual(["user-login"]);
  }, 60_000);

  it("[workerd] a path's dot segments resolve as on Node, Bun and Deno (workerd resolves them before the worker)", async () => {
    const mf = await start("all");
    const headers = { "X-Custom-Auth-Key": KEY };
    expect((await mf.dispatchFetch("http://w/data/u2/C-1/data.json", { method: "PUT", headers, body: "[2]" })).status).toBe(200);
    // Sent as written to workerd's own socket (dispatchFetch would resolve them on the way).
    const base = (await mf.ready).href;
    for (const path of ["/data/u1/%2e%2e/u2/C-1/data.json", "/data/u1/.%2E/u2/./C-1/data.json"]) {
      expect(await sendRaw(base, { method: "GET", path, headers }), path).toEqual({ status: 200, body: "[2]" });
    }
    expect((await sendRaw(base, { method: "PUT", path: "/data/u1/%2e%2e/u3/C-1/data.json", headers, body: "[3]" })).status).toBe(200);
    expect(await (await mf.dispatchFetch("http://w/data/u3/C-1/data.json", { headers })).text()).toBe("[3]");
  }, 60_000);

  it("[workerd] the data worker deployed alone serves at its root", async () => {
    const mf = await start("data");
    const headers = { "X-Custom-Auth-Key": KEY };
    expect((await mf.dispatchFetch("http://w/u2/C-9/data.json", { method: "PUT", headers, body: "[]" })).status).toBe(200);
    expect(await (await mf.dispatchFetch("http://w/u2/C-9/data.json", { headers })).json()).toEqual([]);
    const stored = (await (await bucket(mf, "STRIAE_DATA")).list()).objects.map((o) => o.key);
    expect(stored.filter((key) => !key.startsWith("#history/"))).toEqual(["u2/C-9/data.json"]);
    expect(stored.filter((key) => key.startsWith("#history/")).sort()).toEqual(["head", "log"].map((part) => `#history/u2/C-9/data.json/${part}`));
  }, 60_000);

  it("[workerd] a missing binding is a 500 that names it", async () => {
    const mf = await start("data", { R2_KEY_SECRET: KEY }, false);
    const response = await mf.dispatchFetch("http://w/u1/C-1/data.json", { headers: { "X-Custom-Auth-Key": KEY } });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: "SERVER_ERROR", message: expect.stringContaining("STRIAE_DATA") });
  }, 60_000);

  it("[workerd] an AUDIT_SIGNING_KEY the worker cannot sign with is a 500 naming it on every request, not on each append", async () => {
    const broken = JSON.stringify({ kty: "RSA", n: "AA", e: "AQAB", d: "AA", p: "AA", q: "AA", dp: "AA", dq: "AA", qi: "AA" });
    const mf = await start("all", { R2_KEY_SECRET: KEY, AUDIT_SIGNING_KEY: broken });
    const response = await mf.dispatchFetch("http://w/data/u1/C-1/data.json", { headers: { "X-Custom-Auth-Key": KEY } });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: "SERVER_ERROR", message: expect.stringContaining("AUDIT_SIGNING_KEY: ") });
  }, 60_000);

  it("[workerd] a worker deployed alone with ADMIN_AUTH refuses to start without STRIAE_AUDIT, where its uses are written", async () => {
    const mf = await start("keys", { KEYS_AUTH: "kk", ACCOUNT_HASH: "h", ADMIN_AUTH: "admin-key" }, false);
    const response = await mf.dispatchFetch("http://w/ACCOUNT_HASH", { headers: { "X-Custom-Auth-Key": "kk" } });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ message: expect.stringContaining("STRIAE_AUDIT") });
    const pdf = await start("pdf", { ADMIN_AUTH: "admin-key" }, false);
    expect((await pdf.dispatchFetch("http://w/", { method: "GET" })).status).toBe(405);
  }, 60_000);
});
