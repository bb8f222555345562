/**
 * Record history through the data worker in one process (HISTORY.md "Versions"): who wrote each
 * version (identity token, admin key, data key), the same identity rules as the key, no audit
 * entry for reading a history, and DATA_HISTORY=off writing as before while a stored history stays
 * readable. The HTTP answers on every runtime are in tests/conformance/suite.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIENCE, ISSUER, startIdentityProvider } from "../../helpers/identity.ts";
import { dataHeaders, fixedClock, memoryPorts, testService } from "../../helpers/service.ts";
import { createService } from "../../../src/core/service/service.ts";
import { parseConfig } from "../../../src/core/config/mod.ts";
import { KEYS } from "../../helpers/service.ts";
import { encryptPorts } from "../../../src/core/service/encrypted-ports.ts";
import { Keyring } from "../../../src/core/encryption/mod.ts";
import { dataKey } from "../../helpers/encryption.ts";

const ADMIN = "admin-key-0123456789";
type Listed = { current: number | null; versions: { version: number; writtenBy: string; deleted: boolean; writtenAt: string }[] };

describe("data worker history", () => {
  let idp: Awaited<ReturnType<typeof startIdentityProvider>>;
  beforeAll(async () => {
    idp = await startIdentityProvider();
  });
  afterAll(async () => await idp.close());

  it("records the token's sub, admin and data-key as writers; another user's token is refused its history; reading writes no audit entry", async () => {
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const { app, ports } = testService({ AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, ADMIN_AUTH: ADMIN, RATE_LIMITS: "off" }, { clock });
    const as = async (uid: string) => ({ ...dataHeaders, "X-Identity-Token": await idp.token(uid) });
    const key = "/data/u1/C-1/data.json";
    const put = await app.request(key, { method: "PUT", headers: await as("u1"), body: '{"a":1}' });
    expect(put.status, await put.clone().text()).toBe(200);
    clock.set("2026-11-22T12:05:00Z");
    expect((await app.request(key, { method: "PUT", headers: { ...dataHeaders, "X-Admin-Key": ADMIN }, body: '{"a":2}' })).status).toBe(200);
    expect((await app.request(key, { method: "DELETE", headers: await as("u1") })).status).toBe(200);
    const auditKeys = async () => (await ports.audit.list("")).length;
    const before = await auditKeys();
    const before2 = await ports.audit.get((await ports.audit.list("audit-trails/"))[0] ?? "none");
    const listed = await app.request(`${key}?history`, { headers: await as("u1") });
    expect(listed.status).toBe(200);
    const history = await listed.json() as Listed;
    expect(history.current).toBeNull();
    expect(history.versions.map((v) => [v.writtenBy, v.deleted, v.writtenAt])).toEqual([
      ["u1", false, "2026-11-22T12:00:00.000Z"],
      ["admin", false, "2026-11-22T12:05:00.000Z"],
      ["u1", true, "2026-11-22T12:05:00.000Z"],
    ]);
    expect(await (await app.request(`${key}?version=2`, { headers: await as("u1") })).text()).toBe('{"a":2}');
    expect(await auditKeys()).toBe(before);
    expect(await ports.audit.get((await ports.audit.list("audit-trails/"))[0] ?? "none")).toEqual(before2);
    // Another user's token: 403 for the history and for a version, as for the key itself.
    expect((await app.request(`${key}?history`, { headers: await as("u2") })).status).toBe(403);
    expect((await app.request(`${key}?version=1`, { headers: await as("u2") })).status).toBe(403);
  });

  it("DATA_HISTORY=off writes and deletes as before, keeping no version; a history stored while on stays readable", async () => {
    const ports = memoryPorts();
    const on = createService(ports, parseConfig({ ...KEYS, ALLOWED_ORIGIN: "https://lab.example" }));
    const off = createService(ports, parseConfig({ ...KEYS, ALLOWED_ORIGIN: "https://lab.example", DATA_HISTORY: "off" }));
    expect((await on.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body: '{"a":1}' })).status).toBe(200);
    expect((await off.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body: '{"a":2}' })).status).toBe(200);
    expect((await off.request("/data/u1/C-2/data.json", { method: "PUT", headers: dataHeaders, body: '{"b":1}' })).status).toBe(200);
    expect(await (await off.request("/data/u1/C-1/data.json", { headers: dataHeaders })).text()).toBe('{"a":2}');
    const kept = await (await off.request("/data/u1/C-1/data.json?history", { headers: dataHeaders })).json() as Listed;
    expect(kept.versions.map((v) => v.version)).toEqual([1]);
    expect(await (await off.request("/data/u1/C-1/data.json?version=1", { headers: dataHeaders })).text()).toBe('{"a":1}');
    // Written while off: no history at all (the key exists, so 200 with none).
    expect(await (await off.request("/data/u1/C-2/data.json?history", { headers: dataHeaders })).json()).toEqual({ key: "u1/C-2/data.json", versions: [], current: null });
    expect((await off.request("/data/u1/C-2/data.json", { method: "DELETE", headers: dataHeaders })).status).toBe(200);
    expect((await off.request("/data/u1/C-2/data.json", { method: "DELETE", headers: dataHeaders })).status).toBe(404);
    expect((await ports.data.list("")).filter((k) => k.includes("C-2"))).toEqual([]);
    // Back on, the value written while off is not lost: the next write keeps going from the history.
    expect((await on.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body: '{"a":3}' })).status).toBe(200);
    expect(await (await on.request("/data/u1/C-1/data.json", { headers: dataHeaders })).text()).toBe('{"a":3}');
  });

  it("account deletion (user worker mounted with the others) deletes each document as a deletion mark written by service; the history stays", async () => {
    const { app } = testService({ RATE_LIMITS: "off" });
    const userAuth = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };
    expect((await app.request("/user/u7", { method: "PUT", headers: userAuth, body: JSON.stringify({ email: "u7@lab.example", firstName: "A", lastName: "B", company: "Lab", permitted: true }) })).status).toBe(201);
    expect((await app.request("/user/u7/cases", { method: "PUT", headers: userAuth, body: JSON.stringify({ cases: [{ caseNumber: "C-1" }] }) })).status).toBe(200);
    expect((await app.request("/data/u7/C-1/data.json", { method: "PUT", headers: dataHeaders, body: '{"files":[]}' })).status).toBe(200);
    expect((await app.request("/user/u7", { method: "DELETE", headers: userAuth })).status).toBe(200);
    expect(await (await app.request("/data/u7/C-1/data.json", { headers: dataHeaders })).text()).toBe("[]");
    const history = await (await app.request("/data/u7/C-1/data.json?history&verify=true", { headers: dataHeaders })).json() as Listed & { valid: boolean };
    expect(history.versions.map((v) => [v.version, v.deleted, v.writtenBy])).toEqual([[1, false, "data-key"], [2, true, "service"]]);
    expect(history).toMatchObject({ current: null, valid: true });
  });

  it("under encryption at rest, every version is sealed like the value it was, and reads back exactly", async () => {
    const raw = memoryPorts();
    const app = createService(encryptPorts(raw, new Keyring([dataKey("k1")])), parseConfig({ ...KEYS, ALLOWED_ORIGIN: "https://lab.example" }));
    const first = '{"note":"MARKER-history-1"}';
    expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body: first })).status).toBe(200);
    expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body: '{"note":"MARKER-history-2"}' })).status).toBe(200);
    expect(await (await app.request("/data/u1/C-1/data.json?version=1", { headers: dataHeaders })).text()).toBe(first);
    expect(await (await app.request("/data/u1/C-1/data.json?history&verify=true", { headers: dataHeaders })).json()).toMatchObject({ current: 2, valid: true });
    const keys = (await raw.data.list("#history/")).sort();
    // A store that does not say one process holds it: the head and the log (docs/storage.md#record-history).
    expect(keys).toEqual(["#history/u1/C-1/data.json/head", "#history/u1/C-1/data.json/log"]);
    for (const key of keys) expect(new TextDecoder().decode((await raw.data.get(key))!), key).not.toContain("MARKER-history");
  });
});
