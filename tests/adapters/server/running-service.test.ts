/**
 * The commands against a running service (docs/operations.md#commands-against-a-running-service):
 * `users` on the stores directly and, with `--url`, through a real `serve` (Node); the file
 * store's lock refusing a writing command beside serve, and the same command passing with
 * `--url`; `audit verify --url`; `export`/`import --url` through the exchange worker; `keys`
 * refusing `--url`. One serve for the file.
 */
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runUsersCommand } from "../../../src/adapters/server/users-command.ts";
import { runAuditCommand } from "../../../src/adapters/server/audit-command.ts";
import { runKeysCommand } from "../../../src/adapters/server/keys-command.ts";
import { runExchangeCommand } from "../../../src/adapters/server/exchange-command.ts";
import { runBackupCommand } from "../../../src/adapters/server/backup-command.ts";
import { createFilePorts } from "../../../src/adapters/server/files/file-ports.ts";
import { unzipSync } from "fflate";
import { type Runtime, type Served, spawnServe } from "../../helpers/spawn-serve.ts";
import { ANALYST, CASE, REVIEWER, seedCase } from "../../exchange/exchange-fixtures.ts";
import { containsBytes, dataKey, keySetText } from "../../helpers/encryption.ts";

const KEYS = { USER_DB_AUTH: "user-key-0123456789", R2_KEY_SECRET: "data-key-0123456789", ADMIN_AUTH: "admin-key-0123456789" };
const MAIL = { MAIL_FROM: "forensics@lab.example", ADMIN_EMAIL: "admin@lab.example" };
const encoder = new TextEncoder();
const dirs: string[] = [];
let served: Served;
let servedDir: string;
/** A copy of what serve's folder held at its start, for the commands without --url. */
let copyDir: string;

/** The analyst's case (with its images) and two users, stored as serve stores them. */
async function seedFolder(seeded: Awaited<ReturnType<typeof seedCase>>, dir: string): Promise<void> {
  const ports = createFilePorts(dir);
  for (const store of ["data", "images"] as const) {
    for (const key of await seeded.ports[store].list("")) await ports[store].put(key, (await seeded.ports[store].get(key))!);
  }
  for (const key of await seeded.ports.users.list("")) await ports.users.put(key, (await seeded.ports.users.get(key))!);
}

async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "fa-running-"));
  dirs.push(dir);
  return dir;
}

/** An EC P-256 audit signing key (a private JWK's text) that no serve of this file made. */
async function anotherSigningKey(): Promise<string> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  return JSON.stringify({ ...await crypto.subtle.exportKey("jwk", pair.privateKey), alg: "ES256", kid: "another-lab" });
}

/** A new data folder holding the secrets.json serve generated under the first one, as a lab moving its data carries it (docs/operations.md#generated-secrets). */
async function folderWithServedSecrets(): Promise<string> {
  const dir = await folder();
  await copyFile(join(servedDir, "secrets.json"), join(dir, "secrets.json"));
  return dir;
}

beforeAll(async () => {
  servedDir = await folder();
  copyDir = await folder();
  const seeded = await seedCase();
  await seedFolder(seeded, servedDir);
  await seedFolder(seeded, copyDir);
  served = await spawnServe({ dataDir: servedDir, env: { ...KEYS, ...MAIL, RATE_LIMITS: "off" } });
}, 60_000);
afterAll(async () => {
  await served?.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

type Run = (argv: string[], options: { io?: Parameters<typeof runUsersCommand>[1] extends infer O ? O extends { io?: infer I } ? I : never : never }) => Promise<number>;

async function run(command: Run, args: string[], env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  let err = "";
  const code = await command(args, { io: { out: (line) => out.push(line), err: { write: (text: string) => (err += text) }, env } });
  return { code, out: out.join("\n"), err };
}
const users = (args: string[], env: Record<string, string | undefined> = {}) => run(runUsersCommand, ["users", ...args], env);

/** The audit entries of a user's trail under a data folder, every day. */
async function trail(dir: string, uid: string): Promise<{ action: string; result: string }[]> {
  const folder = join(dir, "audit", "audit-trails");
  const days = (await readdir(folder)).filter((name) => name.startsWith(`${uid}-`)).sort();
  return (await Promise.all(days.map(async (day) => JSON.parse(await readFile(join(folder, day), "utf8")) as { action: string; result: string }[]))).flat();
}

const outbox = async (dir: string) => (await readdir(join(dir, "outbox")).catch(() => [] as string[])).length;

describe("users, on the stores directly", () => {
  it("create, list, show, permit, delete (two mails and the deletion in the user's audit trail); an unknown UID is exit 1, a UID or an e-mail no record can hold exit 2 in one line", async () => {
    const dir = await folder();
    const env = { ...MAIL };
    expect((await users(["list", "--data", dir], env)).out).toBe("no users");
    const created = await users(["create", "u1", "--email", "ana@lab.example", "--first", "Ana", "--last", "Ruiz", "--company", "State Lab", "--data", dir], env);
    expect(created.code, created.err).toBe(0);
    expect(created.out).toContain("created user u1 (not permitted");
    expect((await users(["create", "u1", "--email", "ana@lab.example", "--first", "Ana", "--last", "Ruiz", "--data", dir], env))).toMatchObject({ code: 1, err: expect.stringContaining("user u1 exists already") });
    await users(["create", "u2", "--email", "bo@lab.example", "--first", "Bo", "--last", "Li", "--permitted", "--data", dir], env);
    const listed = await users(["list", "--data", dir], env);
    expect(listed.out.split("\n")).toEqual(["u1  not permitted  ana@lab.example  Ana Ruiz (State Lab)  0 case(s)", "u2  permitted  bo@lab.example  Bo Li  0 case(s)"]);
    expect(JSON.parse((await users(["show", "u1", "--json", "--data", dir], env)).out)).toMatchObject({ uid: "u1", email: "ana@lab.example", company: "State Lab", permitted: false, cases: [] });
    expect((await users(["permit", "u1", "--data", dir], env)).out).toBe("user u1 is permitted");
    expect(JSON.parse((await users(["list", "--json", "--data", dir], env)).out).users[0]).toMatchObject({ uid: "u1", permitted: true });
    expect(await outbox(dir)).toBe(0);
    const deleted = await users(["delete", "u1", "--data", dir], env);
    expect(deleted.code, deleted.err).toBe(0);
    expect(deleted.out).toBe("Account u1 and its 0 case(s) were deleted");
    expect(await outbox(dir)).toBe(2);
    expect((await trail(dir, "u1")).filter((entry) => entry.action !== "file-access")).toEqual([
      expect.objectContaining({ action: "user-profile-update", result: "success" }),
      expect.objectContaining({ action: "user-profile-update", result: "success" }),
      expect.objectContaining({ action: "user-account-delete", result: "success" }),
    ]);
    for (const args of [["show", "u1"], ["permit", "u1"], ["delete", "u1"]]) {
      const missing = await users([...args, "--data", dir], env);
      expect(missing, args.join(" ")).toMatchObject({ code: 1, err: "no user u1\n" });
    }
    // Refused before anything is opened, in one line.
    const badUid = await users(["create", "a/b", "--email", "a@lab.example", "--first", "A", "--last", "B", "--data", dir], env);
    expect(badUid.code).toBe(2);
    expect(badUid.err.trim().split("\n")).toEqual(['UID "a/b": UID contains a forbidden character "/"']);
    const badEmail = await users(["create", "u3", "--email", "not-an-address", "--first", "A", "--last", "B", "--data", dir], env);
    expect(badEmail).toMatchObject({ code: 2, err: '--email "not-an-address" is not an e-mail address\n' });
    for (const args of [["show"], ["frobnicate"], ["create", "u3", "--first", "A", "--last", "B"], ["permit", "u2", "--email", "a@lab.example"], ["list", "extra"]]) {
      expect((await users([...args, "--data", dir], env)).code, args.join(" ")).toBe(2);
    }
    // A mail that cannot be sent stops the deletion before the record (the specification's failure), exit 1.
    const unmailed = await users(["delete", "u2", "--data", dir], { ...MAIL, MAIL_TRANSPORT: "http", MAIL_HTTP_URL: "http://127.0.0.1:9/send", MAIL_HTTP_TOKEN: "t" });
    expect(unmailed.code).toBe(1);
    expect(unmailed.err).toContain("Account deletion failed because confirmation emails could not be sent");
    expect((await users(["show", "u2", "--data", dir], {})).code).toBe(0);
    expect((await users(["--help"])).out).toContain("forensic-annotation users create UID --email E");
  });
});

describe("against a running serve (Node), file store", () => {
  it("users: a writing command without --url is refused by serve's lock and says --url; with --url it goes through serve (list, show, create, permit, delete with its mails and audit entry); reading works beside serve", async () => {
    const env = { ...KEYS, ...MAIL };
    const refused = await users(["create", "u1", "--email", "ana@lab.example", "--first", "Ana", "--last", "Ruiz", "--data", servedDir], env);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/is in use by serve .*give --url/);
    const url = ["--url", served.url];
    const created = await users(["create", "u1", "--email", "ana@lab.example", "--first", "Ana", "--last", "Ruiz", ...url], env);
    expect(created.code, created.err).toBe(0);
    expect((await users(["create", "u1", "--email", "ana@lab.example", "--first", "Ana", "--last", "Ruiz", ...url], env)).code).toBe(1);
    expect((await users(["permit", "u1", ...url], env)).out).toBe("user u1 is permitted");
    expect(JSON.parse((await users(["show", "u1", "--json", ...url], env)).out)).toMatchObject({ uid: "u1", permitted: true });
    const listed = await users(["list", ...url], env);
    expect(listed.out.split("\n")).toContain("u1  permitted  ana@lab.example  Ana Ruiz  0 case(s)");
    // Reading the stores needs no lock: beside serve, the same answer.
    expect((await users(["list", "--data", servedDir], env)).out).toBe(listed.out);
    // The key from a file; the admin key is what lists.
    const keyFile = join(await folder(), "user-key");
    await writeFile(keyFile, `${KEYS.USER_DB_AUTH}\n`);
    expect((await users(["show", "u1", ...url, "--key-file", keyFile], { ...MAIL })).code).toBe(0);
    expect((await users(["list", ...url, "--key-file", keyFile], {})).code).toBe(2);
    const wrongKey = await users(["show", "u1", ...url], { USER_DB_AUTH: "not-the-key" });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.err).toContain("refused the key (401");
    expect((await users(["show", "nobody", ...url], env))).toMatchObject({ code: 1, err: "no user nobody\n" });
    expect((await users(["show", "u1", "--url", "ftp://x"], env)).code).toBe(2);
    const before = await outbox(servedDir);
    const deleted = await users(["delete", "u1", ...url], env);
    expect(deleted.code, deleted.err).toBe(0);
    expect(deleted.out).toBe("Account u1 and its 0 case(s) were deleted");
    expect(await outbox(servedDir) - before).toBe(2);
    expect((await trail(servedDir, "u1")).map((entry) => entry.action)).toContain("user-account-delete");
    expect((await users(["delete", "u1", ...url], env)).code).toBe(1);
  });

  it("audit verify --url answers as without it; export and sign-heads refuse --url; keys refuses it; an unreachable URL is exit 1", async () => {
    const env = { ...KEYS };
    const url = ["--url", served.url];
    // The deletions above wrote u1's trail through serve.
    // Read first: the admin key's use is traced in the trail after serve answers.
    const direct = await run(runAuditCommand, ["audit", "verify", "--user", "u1", "--json", "--data", servedDir], env);
    const through = await run(runAuditCommand, ["audit", "verify", "--user", "u1", "--json", ...url], env);
    expect(through.code, through.err).toBe(0);
    expect(JSON.parse(through.out)).toEqual(JSON.parse(direct.out));
    expect(JSON.parse(through.out)).toMatchObject({ valid: true, userId: "u1" });
    const today = new Date().toISOString().slice(0, 10);
    const upTo = await run(runAuditCommand, ["audit", "verify", "--user", "u1", "--to", today, ...url], env);
    expect(upTo.out).toContain("intact");
    expect((await run(runAuditCommand, ["audit", "verify", "--user", "u1", "--from", "yesterday", ...url], env))).toMatchObject({ code: 2, err: expect.stringContaining("--from") });
    expect((await run(runAuditCommand, ["audit", "export", "--user", "u1", "--format", "csv", ...url], env)).code).toBe(2);
    expect((await run(runAuditCommand, ["audit", "sign-heads", ...url], env)).code).toBe(2);
    expect((await run(runAuditCommand, ["audit", "verify", "--user", "u1", ...url], { R2_KEY_SECRET: "wrong" })).code).toBe(1);
    const unreachable = await run(runAuditCommand, ["audit", "verify", "--user", "u1", "--url", "http://127.0.0.1:9"], env);
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toContain("no answer from http://127.0.0.1:9");
    const keys = await run(runKeysCommand, ["keys", "rotate", ...url], { DATA_ENCRYPTION_KEYS: JSON.stringify({ keys: [{ kty: "oct", kid: "k1", k: "A".repeat(43) }] }) });
    expect(keys.code).toBe(2);
    expect(keys.err).toContain("--url: keys rotate");
  });

  it("export and import --url: the exchange worker writes the same files and results as the commands on the stores; without --url the lock refuses and says --url", async () => {
    const env = { ...KEYS };
    const url = ["--url", served.url];
    const out = await folder();
    const refused = await run(runExchangeCommand, ["export", "--user", ANALYST, "--case", CASE, "--format", "json", "--out", join(out, "x.json"), "--data", servedDir], env);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/is in use by serve .*give --url/);
    // Dated now, and hashed with the date: the rest is the same bytes.
    const undated = (value: string) => value.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "DATE").replace(/[0-9a-fA-F]{64}/g, "HASH");
    for (const format of ["json", "csv"]) {
      const through = await run(runExchangeCommand, ["export", "--user", ANALYST, "--case", CASE, "--format", format, "--out", join(out, `through.${format}`), ...url], env);
      expect(through.code, through.err).toBe(0);
      expect(through.out).toContain(`exported case ${CASE} of ${ANALYST} through ${served.url}`);
      const direct = await run(runExchangeCommand, ["export", "--user", ANALYST, "--case", CASE, "--format", format, "--out", join(out, `direct.${format}`), "--data", copyDir], env);
      expect(direct.code, direct.err).toBe(0);
      expect(undated(await readFile(join(out, `through.${format}`), "utf8"))).toBe(undated(await readFile(join(out, `direct.${format}`), "utf8")));
    }
    // The default name is the worker's, in the working directory's place: --out names a folder's file here.
    const zip = await run(runExchangeCommand, ["export", "--user", ANALYST, "--case", CASE, "--out", join(out, "case.zip"), ...url], env);
    expect(zip.code, zip.err).toBe(0);
    const direct = await run(runExchangeCommand, ["export", "--user", ANALYST, "--case", CASE, "--out", join(out, "direct.zip"), "--data", copyDir], env);
    expect(direct.code, direct.err).toBe(0);
    expect(Object.keys(unzipSync(new Uint8Array(await readFile(join(out, "case.zip"))))).sort()).toEqual(Object.keys(unzipSync(new Uint8Array(await readFile(join(out, "direct.zip"))))).sort());
    const all = await run(runExchangeCommand, ["export", "--user", ANALYST, "--all", "--format", "xlsx", "--out", join(out, "all.xlsx"), ...url], env);
    expect(all.code, all.err).toBe(0);
    expect((await readFile(join(out, "all.xlsx"))).subarray(0, 2).toString()).toBe("PK");
    const missing = await run(runExchangeCommand, ["export", "--user", ANALYST, "--case", "NO-SUCH-CASE", "--format", "json", "--out", join(out, "none.json"), ...url], env);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("404");

    const preview = await run(runExchangeCommand, ["import", "--user", REVIEWER, "--preview", join(out, "case.zip"), ...url], env);
    expect(preview.code, preview.err).toBe(0);
    expect(preview.out).toContain("can import: yes");
    const imported = await run(runExchangeCommand, ["import", "--user", REVIEWER, join(out, "case.zip"), ...url], env);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).toContain(`imported case ${CASE} for ${REVIEWER} as a read-only case`);
    const again = await run(runExchangeCommand, ["import", "--user", REVIEWER, "--json", join(out, "case.zip"), ...url], env);
    const againDirect = await run(runExchangeCommand, ["import", "--user", REVIEWER, "--json", join(out, "direct.zip"), "--data", copyDir], env);
    expect(againDirect.code, againDirect.err).toBe(0);
    const againDirectTwice = await run(runExchangeCommand, ["import", "--user", REVIEWER, "--json", join(out, "direct.zip"), "--data", copyDir], env);
    // A read-only case of that number: refused the same way through serve as on the stores.
    expect(again.code).toBe(againDirectTwice.code);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.out)).toMatchObject({ success: false, errorCode: "CONFLICT" });
    expect((await run(runExchangeCommand, ["import", "--user", REVIEWER, "--overwrite", join(out, "case.zip"), ...url], env)).code).toBe(0);
    expect((await run(runExchangeCommand, ["import", "--user", REVIEWER, "--require-signature", join(out, "case.zip"), ...url], env)).code).toBe(2);
  });
});

/** The runtime these tests run under: the restore's target serve runs on it, so each runtime's server is the one tried. */
const here: Runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";

/** Every file under `dir`'s store folders and its bytes (the encryption canaries aside). */
async function storedFiles(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const store of ["users", "data", "images", "audit", "outbox"]) {
    const entries = await readdir(join(dir, store), { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(entry.parentPath, entry.name);
      if (!entry.isFile() || /encryption-canary/.test(path)) continue;
      files[path.slice(dir.length)] = (await readFile(path)).toString("base64");
    }
  }
  return files;
}

describe("backup and restore --url", () => {
  const backup = (args: string[], env: Record<string, string | undefined> = { ...KEYS }) => run(runBackupCommand, args, env);

  it(`backup --url saves the running serve's archive (verified, secrets.json named); restore --url into a ${here} serve refuses a changed archive writing nothing, fills the empty target as a restore on the stores does, then refuses it unless --force; --resume finds everything there`, async () => {
    const out = await folder();
    const archive = join(out, "lab.fab");
    const saved = await backup(["backup", "--out", archive, "--url", served.url]);
    expect(saved.code, saved.err).toBe(0);
    expect(saved.out).toBe(archive);
    expect(saved.err).toMatch(/^backup: \d+ objects, \d+ bytes/);
    expect(saved.err).toMatch(/data\/cases\s+[1-9]/);
    // serve generated the keys not in KEYS: named (never their values), not in the archive.
    expect(saved.err).toMatch(/NOT in the archive: the keys serve generated \([^)]*KEYS_AUTH[^)]*\) in secrets.json under the --data of the serve at /);
    const verified = await backup(["backup", "verify", archive]);
    expect(verified.code, verified.out).toBe(0);
    expect(verified.out).toContain("the archive checks out");
    // The admin key is needed, and a wrong one refused.
    expect((await backup(["backup", "--out", join(out, "x.fab"), "--url", served.url], { R2_KEY_SECRET: KEYS.R2_KEY_SECRET })).code).toBe(2);
    const wrong = await backup(["backup", "--out", join(out, "x.fab"), "--url", served.url], { ...KEYS, ADMIN_AUTH: "not-the-admin-key" });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/answered 40[13]/);
    expect(await readdir(out)).toEqual(["lab.fab"]);

    // Into a folder whose serve made another audit signing key: refused, the key named with the way out.
    const otherKey = await folder();
    await writeFile(join(otherKey, "secrets.json"), JSON.stringify({ AUDIT_SIGNING_KEY: await anotherSigningKey() }));
    const unknown = await backup(["restore", archive, "--data", otherKey]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/signed by key "audit-[^"]+", not among the keys given: add its public half to AUDIT_VERIFY_KEYS, or use the secrets.json of the service that signed it/);

    const targetDir = await folderWithServedSecrets();
    const target = await spawnServe({ runtime: here, dataDir: targetDir, env: { ...KEYS, RATE_LIMITS: "off" } });
    try {
      const url = ["--url", target.url];
      // One byte changed: refused, nothing written (so the next restore finds the target empty).
      const bytes = await readFile(archive);
      bytes[Math.floor(bytes.length / 2)]! ^= 1;
      await writeFile(join(out, "changed.fab"), bytes);
      const changed = await backup(["restore", join(out, "changed.fab"), ...url]);
      expect(changed.code).toBe(1);
      expect(changed.err).toContain("restore refused: the archive does not verify");
      const restored = await backup(["restore", archive, ...url]);
      expect(restored.code, `${restored.err}\n${target.output().slice(-3000)}`).toBe(0);
      expect(restored.out).toMatch(/^restored \d+ objects \(\d+ written\); the target holds:/);
      expect(restored.out).toMatch(/audit trails: (\d+) of \1 verify on the target/);
      // The same objects as a restore of the archive on the stores (the audit store too: the restore adds no entry of its own).
      const direct = await folder();
      expect((await backup(["restore", archive, "--data", direct])).code).toBe(0);
      expect(await storedFiles(targetDir)).toEqual(await storedFiles(direct));
      const again = await backup(["restore", archive, ...url]);
      expect(again.code).toBe(1);
      expect(again.err).toContain("restore refused: the target holds data");
      const resumed = await backup(["restore", archive, ...url, "--resume"]);
      expect(resumed.code, resumed.err).toBe(0);
      expect(resumed.out).toMatch(/\(0 written, \d+ already there\)/);
      expect((await backup(["restore", archive, ...url, "--force"])).code).toBe(0);
      // And the target's own backup through its serve verifies.
      const second = await backup(["backup", "--out", join(out, "second.fab"), ...url]);
      expect(second.code, second.err).toBe(0);
      expect((await backup(["backup", "verify", join(out, "second.fab")])).code).toBe(0);
    } finally {
      await target.stop();
    }
  }, 120_000);

  it("backup --url saves nothing when the archive breaks off or does not check out as it arrives", async () => {
    const out = await folder();
    const whole = join(out, "whole.fab");
    expect((await backup(["backup", "--out", whole, "--data", copyDir])).code).toBe(0);
    const bytes = await readFile(whole);
    const changed = Buffer.from(bytes);
    changed[Math.floor(changed.length / 2)]! ^= 1;
    // A service that sends half the archive then drops the connection, or the whole of it with one byte changed.
    let mode: "cut" | "changed" = "cut";
    const server = createServer((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/octet-stream" });
      if (mode === "changed") return response.end(changed);
      response.write(bytes.subarray(0, bytes.length >> 1), () => setTimeout(() => response.destroy(), 50));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const cut = await backup(["backup", "--out", join(out, "cut.fab"), "--url", url]);
      expect(cut.code).toBe(1);
      mode = "changed";
      const damaged = await backup(["backup", "--out", join(out, "changed.fab"), "--url", url]);
      expect(damaged.code).toBe(1);
      expect(damaged.err).toContain("the service's archive does not check out");
      expect(await readdir(out)).toEqual(["whole.fab"]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it(`encrypted at rest (a ${here} serve): restore --url of a plain archive is sealed by the target; backup --url stays sealed (no plaintext the stores do not hold) unless --decrypt, verifies with the keys and restores through serve`, async () => {
    const out = await folder();
    const plain = join(out, "plain.fab");
    expect((await backup(["backup", "--out", plain, "--url", served.url])).code).toBe(0);
    const sealedEnv = { ...KEYS, DATA_ENCRYPTION_KEYS: keySetText(dataKey("k1")) };
    const target = await spawnServe({ runtime: here, dataDir: await folderWithServedSecrets(), env: { ...sealedEnv, RATE_LIMITS: "off" } });
    try {
      const url = ["--url", target.url];
      const restored = await backup(["restore", plain, ...url]);
      expect(restored.code, restored.err).toBe(0);
      const sealed = join(out, "sealed.fab");
      const saved = await backup(["backup", "--out", sealed, ...url]);
      expect(saved.code, saved.err).toBe(0);
      expect(saved.err).toMatch(/^backup: \d+ objects, \d+ bytes \(sealed\)/);
      const inPlain = encoder.encode(`"caseNumber":"${CASE}"`);
      expect(containsBytes(new Uint8Array(await readFile(plain)), inPlain)).toBe(true);
      expect(containsBytes(new Uint8Array(await readFile(sealed)), inPlain)).toBe(false);
      expect((await backup(["backup", "verify", sealed], sealedEnv)).code).toBe(0);
      expect((await backup(["backup", "verify", sealed], { ...KEYS })).out).toContain("the archive is sealed");
      const opened = join(out, "opened.fab");
      expect((await backup(["backup", "--out", opened, ...url, "--decrypt"])).code).toBe(0);
      expect(containsBytes(new Uint8Array(await readFile(opened)), inPlain)).toBe(true);
      const again = await backup(["restore", sealed, ...url, "--force"]);
      expect(again.code, again.err).toBe(0);
      expect(again.out).toMatch(/audit trails: (\d+) of \1 verify on the target/);
    } finally {
      await target.stop();
    }
  }, 120_000);
});
