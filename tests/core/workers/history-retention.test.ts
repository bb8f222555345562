/**
 * Retention of record histories (HISTORY.md "Retention and legal holds") through the data
 * worker's admin route in one process: the prefix older than HISTORY_RETENTION_DAYS loses its
 * bytes, the newest version and held cases stay whole, what remains verifies, each key pruned
 * is an entry in its owner's trail, and a pruned mark out of the prefix is named by verify.
 */
import { describe, expect, it } from "vitest";
import { dataHeaders, fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { encodeJsonArray, parseJsonArray } from "../../../src/core/storage/json-array.ts";
import { createDataWorker, createMemoryPorts, createService, parseConfig } from "../../../mod.ts";
import { checkCanaries, encryptPorts, keyringOf } from "../../../src/core/service/encryption.ts";
import { dataKey, keySetText } from "../../helpers/encryption.ts";

const ADMIN = "admin-key-0123456789";
const admin = { ...dataHeaders, "X-Admin-Key": ADMIN };
const userAdmin = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "X-Admin-Key": ADMIN, "Content-Type": "application/json" };
type Verified = { valid: boolean; firstBadVersion?: number; current: number | null; versions: { version: number }[] };

function service(env: Record<string, string> = { HISTORY_RETENTION_DAYS: "30" }) {
  const clock = fixedClock("2026-01-01T00:00:00Z");
  return { ...testService({ ADMIN_AUTH: ADMIN, RATE_LIMITS: "off", ...env }, { clock }), clock };
}
type App = ReturnType<typeof service>["app"];
const put = (app: App, key: string, body: string) => app.request(`/data/${key}`, { method: "PUT", headers: dataHeaders, body });
const verify = async (app: App, key: string) => (await (await app.request(`/data/${key}?history&verify=true`, { headers: dataHeaders })).json()) as Verified;

describe("history retention", () => {
  it("prunes the old prefix of every key, never the newest version nor a held case; what remains verifies; one entry per key in its owner's trail", async () => {
    const { app, clock, ports } = service();
    const day = (n: number) => clock.set(new Date(Date.parse("2026-01-01T00:00:00Z") + n * 86_400_000).toISOString());
    for (const [n, v] of [[0, 1], [1, 2], [2, 3], [50, 4]] as const) {
      day(n);
      expect((await put(app, "u1/C-1/data.json", `{"v":${v}}`)).status).toBe(200);
    }
    day(0);
    await put(app, "u1/C-1/f1/data.json", '{"a":1}');
    expect((await app.request("/data/u1/C-1/f1/data.json", { method: "DELETE", headers: dataHeaders })).status).toBe(200);
    await put(app, "u1/C-2/data.json", '{"held":1}');
    await put(app, "u1/C-2/data.json", '{"held":2}');
    await put(app, "u2/only/data.json", '{"one":1}');
    expect((await app.request("/user/u1/holds", { method: "PUT", headers: userAdmin, body: JSON.stringify({ caseNumber: "C-2", reason: "State v. Doe" }) })).status).toBe(201);
    day(60);
    expect((await app.request("/data/history/prune", { method: "POST", headers: dataHeaders })).status).toBe(403);
    const answer = await app.request("/data/history/prune", { method: "POST", headers: admin });
    expect(answer.status, await answer.clone().text()).toBe(200);
    const result = await answer.json() as { retentionDays: number; cutoff: string; histories: number; pruned: { key: string; versions: number[] }[]; held: string[] };
    expect(result).toEqual({
      retentionDays: 30,
      cutoff: "2026-01-31T00:00:00.000Z",
      histories: 4,
      // Versions 1-3 of C-1 are older than 30 days, 4 is newer; f1's deletion mark is its newest (version 1 pruned).
      pruned: [{ key: "u1/C-1/data.json", versions: [1, 2, 3] }, { key: "u1/C-1/f1/data.json", versions: [1] }],
      held: ["u1/C-2/data.json"],
    });
    expect(await verify(app, "u1/C-1/data.json")).toMatchObject({ valid: true, current: 4, versions: [{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }] });
    expect(await verify(app, "u1/C-1/f1/data.json")).toMatchObject({ valid: true, current: null });
    expect((await app.request("/data/u1/C-1/data.json?version=2", { headers: dataHeaders })).status).toBe(404);
    expect(await (await app.request("/data/u1/C-1/data.json?version=4", { headers: dataHeaders })).text()).toBe('{"v":4}');
    expect(await (await app.request("/data/u1/C-1/data.json", { headers: dataHeaders })).text()).toBe('{"v":4}');
    // The held case is whole: every version still reads.
    expect(await (await app.request("/data/u1/C-2/data.json?version=1", { headers: dataHeaders })).text()).toBe('{"held":1}');
    expect(await verify(app, "u1/C-2/data.json")).toMatchObject({ valid: true });
    // One entry per key pruned, in the owner's trail.
    const trail = await (await app.request("/audit/audit/?userId=u1&startDate=2026-03-02&endDate=2026-03-02", { headers: admin })).json() as { entries: { action: string; details: { fileName?: string; securityDetails: { prunedVersions?: number[] } } }[] };
    const pruned = trail.entries.filter((entry) => entry.action === "history-prune");
    expect(pruned.map((entry) => [entry.details.fileName, entry.details.securityDetails.prunedVersions]).sort()).toEqual([["u1/C-1/data.json", [1, 2, 3]], ["u1/C-1/f1/data.json", [1]]]);
    // Again: nothing left to prune.
    expect(await (await app.request("/data/history/prune", { method: "POST", headers: admin })).json()).toMatchObject({ pruned: [], held: ["u1/C-2/data.json"] });
    // Verify accepts pruned marks only as a prefix: one after a version that holds its bytes is named.
    for (const v of [1, 2, 3]) await put(app, "u1/C-9/data.json", `{"v":${v}}`);
    await ports.data.update("#history/u1/C-9/data.json/log", (stored) => {
      const items = parseJsonArray(stored!).items.slice();
      items[1] = { ...(items[1] as object), contents: { v: 2, pruned: true } };
      return encodeJsonArray(items);
    });
    expect(await verify(app, "u1/C-9/data.json")).toMatchObject({ valid: false, firstBadVersion: 2 });
  });

  it("under encryption at rest: the pruned versions' sealed bytes go, what remains verifies and reads", async () => {
    const env = { ...KEYS, ADMIN_AUTH: ADMIN, RATE_LIMITS: "off", HISTORY_RETENTION_DAYS: "30", DATA_ENCRYPTION_KEYS: keySetText(dataKey("k1")) };
    const config = parseConfig(env);
    const keyring = keyringOf(config);
    const clock = fixedClock("2026-01-01T00:00:00Z");
    const raw = { ...createMemoryPorts(), clock };
    await checkCanaries(raw, keyring);
    const app = createService(encryptPorts(raw, keyring), config);
    for (const v of [1, 2]) await put(app, "u1/C-1/data.json", `{"v":${v}}`);
    clock.set("2026-03-01T00:00:00Z");
    await put(app, "u1/C-1/data.json", '{"v":3}');
    const sealedBefore = (await raw.data.get("#history/u1/C-1/data.json/log"))!.length;
    const answer = await app.request("/data/history/prune", { method: "POST", headers: admin });
    expect(await answer.json()).toMatchObject({ pruned: [{ key: "u1/C-1/data.json", versions: [1, 2] }] });
    expect((await raw.data.get("#history/u1/C-1/data.json/log"))!.length).toBeLessThan(sealedBefore);
    expect(await verify(app, "u1/C-1/data.json")).toMatchObject({ valid: true, current: 3 });
    expect((await app.request("/data/u1/C-1/data.json?version=1", { headers: dataHeaders })).status).toBe(404);
    expect(await (await app.request("/data/u1/C-1/data.json?version=3", { headers: dataHeaders })).text()).toBe('{"v":3}');
  });

  it("without HISTORY_RETENTION_DAYS nothing is pruned (409)", async () => {
    const { app } = service({});
    const answer = await app.request("/data/history/prune", { method: "POST", headers: admin });
    expect(answer.status).toBe(409);
    expect(await answer.json()).toMatchObject({ code: "CONFLICT" });
  });

  it("a data worker deployed without the user store (no legal holds to consult) answers 503, never a 500", async () => {
    const ports = createMemoryPorts();
    const worker = createDataWorker({ blobs: ports.data, audit: ports.audit, clock: ports.clock, config: parseConfig({ ...KEYS, ADMIN_AUTH: ADMIN, RATE_LIMITS: "off", HISTORY_RETENTION_DAYS: "30" }) });
    const answer = await worker.request("/history/prune", { method: "POST", headers: admin });
    expect(answer.status).toBe(503);
    expect(await answer.json()).toMatchObject({ message: expect.stringContaining("USER_DB") });
  });
});
