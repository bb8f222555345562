/**
 * `forensic-annotation history prune` over the file store under --data, and with --url through
 * a service's `POST /data/history/prune`: old versions lose their bytes, the newest and a held
 * case stay whole, every history still verifies, and each key pruned is in its owner's trail.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { createFilePorts } from "../../../src/adapters/server/files/file-ports.ts";
import { runHistoryCommand } from "../../../src/adapters/server/history-command.ts";
import { createService } from "../../../src/core/service/service.ts";
import { parseConfig } from "../../../src/core/config/mod.ts";
import { createKeyHistories } from "../../../src/core/history/mod.ts";
import { dataHeaders, fixedClock, KEYS } from "../../helpers/service.ts";

const ADMIN = "admin-key-0123456789";
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A data folder where u1/C-1 has 3 versions from 2020 and a newest one, and u1/C-2 (held) 2 from 2020. */
async function dataWithHistories() {
  const dir = await mkdtemp(join(tmpdir(), "fa-history-cli-"));
  dirs.push(dir);
  const clock = fixedClock("2020-01-01T00:00:00Z");
  const ports = { ...createFilePorts(dir, { fsync: "off" }), clock };
  const app = createService(ports, parseConfig({ ...KEYS, ADMIN_AUTH: ADMIN, RATE_LIMITS: "off", HISTORY_RETENTION_DAYS: "30" }));
  for (const v of [1, 2, 3]) expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body: `{"v":${v}}` })).status).toBe(200);
  for (const v of [1, 2]) await app.request("/data/u1/C-2/data.json", { method: "PUT", headers: dataHeaders, body: `{"held":${v}}` });
  const hold = await app.request("/user/u1/holds", {
    method: "PUT",
    headers: { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "X-Admin-Key": ADMIN, "Content-Type": "application/json" },
    body: JSON.stringify({ caseNumber: "C-2", reason: "State v. Doe" }),
  });
  expect(hold.status).toBe(201);
  clock.set(new Date().toISOString());
  await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body: '{"v":4}' });
  return { dir, app, ports };
}

async function run(args: string[], env: Record<string, string>, fetch?: typeof globalThis.fetch) {
  const out: string[] = [];
  let err = "";
  const code = await runHistoryCommand(args, { io: { out: (line) => out.push(line), err: { write: (text: string) => (err += text) }, env }, ...(fetch ? { fetch } : {}) });
  return { code, out: out.join("\n"), err };
}

describe("forensic-annotation history prune", () => {
  it("prunes under --data: the old prefix goes, the newest version and the held case stay, all verifies, one entry per key", async () => {
    const { dir, ports } = await dataWithHistories();
    const unset = await run(["history", "prune", "--data", dir], { ...KEYS });
    expect(unset.code).toBe(2);
    expect(unset.err).toContain("HISTORY_RETENTION_DAYS");
    const done = await run(["history", "prune", "--data", dir], { ...KEYS, HISTORY_RETENTION_DAYS: "30" });
    expect(done.code, done.err).toBe(0);
    expect(done.out).toContain("u1/C-1/data.json: pruned version(s) 1, 2, 3");
    expect(done.out).toContain("u1/C-2/data.json: on legal hold, kept whole");
    expect(done.out).toContain("pruned 1 of 2 histories");
    const histories = createKeyHistories(ports.data, { clock: ports.clock });
    expect(await histories.verify("u1/C-1/data.json")).toEqual({ valid: true });
    expect(await histories.verify("u1/C-2/data.json")).toEqual({ valid: true });
    expect(await histories.read("u1/C-1/data.json", 1)).toBeNull();
    expect(new TextDecoder().decode((await histories.read("u1/C-1/data.json", 4))!)).toBe('{"v":4}');
    expect(new TextDecoder().decode((await histories.read("u1/C-2/data.json", 1))!)).toBe('{"held":1}');
    const trail = (await Promise.all((await ports.audit.list("audit-trails/")).filter((key) => key.startsWith("audit-trails/u1-")).map(async (key) => new TextDecoder().decode((await ports.audit.get(key))!)))).join("\n");
    expect(trail.match(/"action":"history-prune"/g)).toHaveLength(1);
    expect(trail).toContain('"fileName":"u1/C-1/data.json"');
    expect((await run(["history", "prune", "--data", dir], { ...KEYS, HISTORY_RETENTION_DAYS: "30" })).out).toContain("pruned 0 of 2 histories");
  });

  it("--url prunes through the service's route with R2_KEY_SECRET and ADMIN_AUTH", async () => {
    const { app } = await dataWithHistories();
    const through: typeof fetch = (input, init) => Promise.resolve(app.fetch(new Request(input, init)));
    const missing = await run(["history", "prune", "--url", "http://service.test"], { R2_KEY_SECRET: KEYS.R2_KEY_SECRET }, through);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("ADMIN_AUTH");
    const done = await run(["history", "prune", "--url", "http://service.test/", "--json"], { R2_KEY_SECRET: KEYS.R2_KEY_SECRET, ADMIN_AUTH: ADMIN }, through);
    expect(done.code, done.err).toBe(0);
    expect(JSON.parse(done.out)).toMatchObject({ retentionDays: 30, pruned: [{ key: "u1/C-1/data.json", versions: [1, 2, 3] }], held: ["u1/C-2/data.json"] });
    const refused = await run(["history", "prune", "--url", "http://service.test"], { R2_KEY_SECRET: KEYS.R2_KEY_SECRET, ADMIN_AUTH: "wrong" }, through);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("answered 403");
  });

  it("--url takes the data key from --key-file, else from the secrets.json serve generated under --data, as the other commands do", async () => {
    const { app } = await dataWithHistories();
    const through: typeof fetch = (input, init) => Promise.resolve(app.fetch(new Request(input, init)));
    const dir = await mkdtemp(join(tmpdir(), "fa-history-keys-"));
    dirs.push(dir);
    await writeFile(join(dir, "data.key"), `${KEYS.R2_KEY_SECRET}\n`);
    const fromFile = await run(["history", "prune", "--url", "http://service.test", "--key-file", join(dir, "data.key"), "--json"], { ADMIN_AUTH: ADMIN }, through);
    expect(fromFile.code, fromFile.err).toBe(0);
    expect(JSON.parse(fromFile.out)).toMatchObject({ pruned: [{ key: "u1/C-1/data.json" }] });
    await writeFile(join(dir, "secrets.json"), JSON.stringify({ R2_KEY_SECRET: KEYS.R2_KEY_SECRET }));
    const fromData = await run(["history", "prune", "--url", "http://service.test", "--data", dir], { ADMIN_AUTH: ADMIN }, through);
    expect(fromData.code, fromData.err).toBe(0);
  });
});
