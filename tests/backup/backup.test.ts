/**
 * backup, backup verify and restore (docs/operations.md#backups) over real stores: files, a real
 * redis-server, s3rver; a backup under 16 concurrent writers of the service in process; a restore
 * killed half-way and resumed; archives with one byte changed refused.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFilePorts } from "../../src/adapters/server/files/file-ports.ts";
import { runBackupCommand } from "../../src/adapters/server/backup-command.ts";
import { nodeSha256Hex } from "../../src/adapters/server/node-sha256.ts";
import { parseConfig } from "../../src/core/config/mod.ts";
import { createService, type ServicePorts } from "../../src/core/service/service.ts";
import { appendAuditEntry, auditVerifyDays, verifyStoredTrail } from "../../src/core/audit/trail.ts";
import { storesOf } from "../../src/core/backup/mod.ts";
import type { ValidationAuditEntry } from "../../src/core/schemas/audit.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { dataHeaders, KEYS } from "../helpers/service.ts";
import { startRedis, type RedisServer } from "../helpers/redis-server.ts";
import { startS3 } from "../helpers/s3-server.ts";
import { createRedisPorts } from "../../src/adapters/server/redis/redis-ports.ts";
import { storagePorts } from "../../src/adapters/server/start.ts";
import { containsBytes, dataKey, keySetText } from "../helpers/encryption.ts";

const dirs: string[] = [];
async function tempDir(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `fa-backup-${name}-`));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function run(args: string[], env: Record<string, string> = {}, isTTY = false) {
  const out: string[] = [];
  let err = "";
  const code = await runBackupCommand(args, { io: { out: (line) => out.push(line), err: { write: (text: string) => (err += text), isTTY }, env } });
  return { code, out: out.join("\n"), err };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A store of every kind: users, cases, annotations, another document, images with metadata, audit days over two days, mail. */
async function fillStores(ports: ServicePorts, users = 3): Promise<void> {
  for (let u = 0; u < users; u++) {
    const uid = `user-${u}`;
    await ports.users.put(uid, JSON.stringify({ uid, email: `${uid}@lab.example`, firstName: "A", lastName: "B", company: "Lab", permitted: true, cases: [{ caseNumber: "C-1", createdAt: "2026-11-20T10:00:00Z" }], createdAt: "2026-11-20T10:00:00Z" }));
    await ports.data.put(`${uid}/C-1/data.json`, encoder.encode(JSON.stringify({ caseNumber: "C-1", files: [{ id: `f${u}`, originalFilename: "a.png", uploadedAt: "2026-11-20T10:00:00Z" }] })));
    await ports.data.put(`${uid}/C-1/f${u}/data.json`, encoder.encode(JSON.stringify({ annotations: [u] })));
    await ports.data.put(`${uid}/C-1/notes/other.json`, encoder.encode(`{"note":"résumé ${u}"}`));
    const image = new Uint8Array(70_000 + u).map((_, i) => (i * 31 + u) & 0xff);
    await ports.images.put(`images/img-${u}`, image);
    await ports.images.put(`images/img-${u}.json`, encoder.encode(JSON.stringify({ id: `img-${u}`, filename: "a.png", contentType: "image/png" })));
    for (const day of ["2026-11-20", "2026-11-21"]) {
      for (let i = 0; i < 3; i++) {
        await appendAuditEntry(ports.audit, { now: () => new Date(`${day}T1${i}:00:00Z`) }, uid, auditEntry({ userId: uid }) as ValidationAuditEntry, { hash: nodeSha256Hex });
      }
    }
    await ports.outbox!.put(`20261120T100000.000Z-${u}.eml`, encoder.encode(`To: ${uid}@lab.example\r\n\r\nbye\r\n`));
  }
}

/** Every key of every store and its value, as the service reads them. */
async function everything(ports: ServicePorts): Promise<Record<string, string>> {
  const all: Record<string, string> = {};
  for (const named of storesOf(ports)) {
    for (const key of (await named.store.list("")).filter((key) => key !== "encryption-canary")) {
      const value = await named.store.get(key);
      all[`${named.name} ${key}`] = typeof value === "string" ? value : Buffer.from(value!).toString("base64");
    }
  }
  return all;
}

async function trailsVerify(ports: ServicePorts, users: string[]): Promise<void> {
  for (const user of users) {
    const result = await verifyStoredTrail(ports.audit, user, await auditVerifyDays(ports.audit, user, undefined, undefined, new Date()));
    expect(result.valid, `${user}: ${JSON.stringify(result.firstBad)}`).toBe(true);
  }
}

describe("forensic-annotation backup / restore", () => {
  it("backs up files, verifies the archive, restores into an empty folder with the same reads; refuses a target that holds data unless --force", async () => {
    const source = await tempDir("src");
    const ports = createFilePorts(source, { fsync: "off" });
    await fillStores(ports);
    const archive = join(await tempDir("out"), "backup.fab");
    const made = await run(["backup", "--out", archive, "--data", source]);
    expect(made.code, made.err).toBe(0);
    expect(made.out).toBe(archive);
    // Progress only on a terminal.
    expect(made.err).not.toContain("\r");
    // No keys generated under the source: nothing to warn of.
    expect(made.err).not.toContain("secrets.json");
    const shown = await run(["backup", "--out", `${archive}.tty`, "--data", source], {}, true);
    expect(shown.err).toMatch(/\rbackup: \d+ objects, \d+\.\d MB/);
    const verified = await run(["backup", "verify", archive]);
    expect(verified.code, verified.out).toBe(0);
    expect(verified.out).toContain("audit trails: 3 of 3 verify");
    expect(verified.out).toMatch(/data\/cases\s+3/);
    expect(verified.out).toMatch(/audit\/days\s+6/);
    expect(verified.out).toMatch(/outbox\/mail\s+3/);
    const target = await tempDir("dst");
    const restored = await run(["restore", archive, "--data", target]);
    expect(restored.code, restored.err).toBe(0);
    expect(restored.out).toContain("audit trails: 3 of 3 verify on the target");
    const back = createFilePorts(target, { fsync: "off" });
    expect(await everything(back)).toEqual(await everything(ports));
    await trailsVerify(back, ["user-0", "user-1", "user-2"]);
    // A second restore into the now full folder is refused, and --force writes over it.
    const again = await run(["restore", archive, "--data", target]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("the target holds data");
    expect((await run(["restore", archive, "--data", target, "--force"])).code).toBe(0);
    // Keys serve generated under the source are not in the archive: the backup says to keep them aside (names, never values).
    await writeFile(join(source, "secrets.json"), JSON.stringify({ KEYS_AUTH: "generated-keys-secret", HMAC_KEY: "generated-hmac-secret" }));
    const warned = await run(["backup", "--out", `${archive}.2`, "--data", source]);
    expect(warned.code, warned.err).toBe(0);
    expect(warned.err).toContain(`NOT in the archive: the keys serve generated (KEYS_AUTH, HMAC_KEY) in ${join(source, "secrets.json")}; keep a copy of that file aside`);
    expect(warned.err + warned.out).not.toContain("generated-keys-secret");
    expect(containsBytes(new Uint8Array(await readFile(`${archive}.2`)), encoder.encode("generated-hmac-secret"))).toBe(false);
  }, 60_000);

  it("encrypted at rest: archived sealed (no plaintext the store did not hold), verified and restored with the keys, refused without them; --decrypt archives plaintext", async () => {
    const env = { DATA_ENCRYPTION_KEYS: keySetText(dataKey("k1")) };
    const source = await tempDir("sealed");
    const opened = await storagePorts(parseConfig(env), source, undefined, { command: "test" });
    await fillStores(opened.ports, 2);
    const expected = await everything(opened.ports);
    await opened.close();
    const archive = join(await tempDir("out"), "sealed.fab");
    const made = await run(["backup", "--out", archive, "--data", source], env);
    expect(made.code, made.err).toBe(0);
    const bytes = new Uint8Array(await readFile(archive));
    for (const plain of ['"note":"résumé 0"', '"action":"case-create"', '"caseNumber":"C-1"']) expect(containsBytes(bytes, encoder.encode(plain)), plain).toBe(false);
    expect((await run(["backup", "verify", archive], env)).code).toBe(0);
    const keyless = await run(["backup", "verify", archive]);
    expect(keyless.code).toBe(1);
    expect(keyless.out).toContain("the archive is sealed");
    expect((await run(["restore", archive, "--data", await tempDir("sealed-keyless")])).code).toBe(1);
    const target = await tempDir("sealed-target");
    const restored = await run(["restore", archive, "--data", target], env);
    expect(restored.code, restored.err).toBe(0);
    const back = await storagePorts(parseConfig(env), target, undefined, { readOnly: true });
    expect(await everything(back.ports)).toEqual(expected);
    await trailsVerify(back.ports, ["user-0", "user-1"]);
    await back.close();
    // --decrypt: the objects opened, restorable into a target without encryption.
    const plainArchive = join(await tempDir("out"), "opened.fab");
    expect((await run(["backup", "--out", plainArchive, "--data", source, "--decrypt"], env)).code).toBe(0);
    expect(containsBytes(new Uint8Array(await readFile(plainArchive)), encoder.encode('"note":"résumé 0"'))).toBe(true);
    const plainTarget = await tempDir("opened-target");
    expect((await run(["restore", plainArchive, "--data", plainTarget])).code).toBe(0);
    expect(await everything(createFilePorts(plainTarget, { fsync: "off" }))).toEqual(expected);
  }, 60_000);

  it("a signed archive: verify checks the signature with EXPORT_SIGNING_KEY's public half", async () => {
    const { exportJWK, generateKeyPair } = await import("jose");
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = JSON.stringify(await exportJWK(privateKey));
    const source = await tempDir("signed");
    await fillStores(createFilePorts(source, { fsync: "off" }), 1);
    const archive = join(await tempDir("out"), "signed.fab");
    expect((await run(["backup", "--out", archive, "--data", source], { EXPORT_SIGNING_KEY: jwk })).code).toBe(0);
    const verified = await run(["backup", "verify", archive], { EXPORT_SIGNING_KEY: jwk });
    expect(verified.code, verified.out).toBe(0);
    expect(verified.out).toContain("signed, signature valid");
    const { privateKey: other } = await generateKeyPair("ES256", { extractable: true });
    const wrongKey = await run(["backup", "verify", archive], { EXPORT_SIGNING_KEY: JSON.stringify(await exportJWK(other)) });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.out).toContain("signature NOT valid");
  }, 60_000);

  it("an archive with one byte changed (in an object, a header, the manifest) is refused by verify and restore, and the target stays empty", async () => {
    const source = await tempDir("tamper");
    await fillStores(createFilePorts(source, { fsync: "off" }), 2);
    const archive = join(await tempDir("out"), "good.fab");
    expect((await run(["backup", "--out", archive, "--data", source])).code).toBe(0);
    const bytes = await readFile(archive);
    const text = bytes.toString("latin1");
    const positions = {
      "an image's bytes": text.indexOf('"key":"images/img-1"') + 40,
      "an audit entry": text.indexOf('"action":"case-create"') + 11,
      "a header": text.indexOf('"key":"user-1"') + 8,
      "the manifest": text.lastIndexOf('"objects":') + 11,
    };
    for (const [where, at] of Object.entries(positions)) {
      expect(at, where).toBeGreaterThan(20);
      const changed = Buffer.from(bytes);
      changed[at] = changed[at]! ^ 0x01;
      const file = join(await tempDir("bad"), "bad.fab");
      await writeFile(file, changed);
      const verified = await run(["backup", "verify", file]);
      expect(verified.code, where).toBe(1);
      expect(verified.out, where).toContain("NOT VALID");
      const target = await tempDir("bad-target");
      const restored = await run(["restore", file, "--data", target]);
      expect(restored.code, where).toBe(1);
      expect(restored.err, where).toContain("restore refused: the archive does not verify");
      expect(await everything(createFilePorts(target, { fsync: "off" })), where).toEqual({});
    }
  }, 60_000);

  it("a backup taken while 16 writers append audit entries and write cases holds every write acknowledged before it began, and every trail verifies after restore", async () => {
    const source = await tempDir("busy");
    const ports = createFilePorts(source);
    const app = createService({ ...ports, auditHash: nodeSha256Hex }, parseConfig({ ...KEYS, RATE_LIMITS: "off" }));
    const writers = 16;
    const acknowledged: { writer: number; n: number; at: number }[] = [];
    let stop = false;
    const write = async (writer: number, n: number): Promise<void> => {
      const uid = `w${writer}`;
      const answer = writer % 2 === 0
        ? await app.request(`/audit/audit/?userId=${uid}`, { method: "POST", headers: { ...dataHeaders, "Content-Type": "application/json" }, body: JSON.stringify(auditEntry({ userId: uid, details: { caseNumber: `C-${n}`, validationErrors: [], workflowPhase: "casework" } })) })
        : await app.request(`/data/${uid}/C-${n}/data.json`, { method: "PUT", headers: { ...dataHeaders, "Content-Type": "application/json" }, body: JSON.stringify({ caseNumber: `C-${n}`, files: [], n }) });
      expect(answer.status, await answer.clone().text()).toBe(200);
      acknowledged.push({ writer, n, at: performance.now() });
    };
    // Some of every writer's work before the backup begins.
    for (let n = 0; n < 5; n++) await Promise.all(Array.from({ length: writers }, (_, w) => write(w, n)));
    const loops = Array.from({ length: writers }, async (_, w) => {
      for (let n = 5; n < 100 && !stop; n++) await write(w, n);
    });
    // The backup begins once every writer has written during the run too.
    const deadline = Date.now() + 60_000;
    while (acknowledged.length < writers * 7 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    const begun = performance.now();
    const before = acknowledged.filter((write) => write.at < begun);
    const archive = join(await tempDir("out"), "busy.fab");
    const made = await run(["backup", "--out", archive, "--data", source]);
    const during = acknowledged.length - before.length;
    stop = true;
    await Promise.all(loops);
    expect(made.code, made.err).toBe(0);
    // The writers were really writing while the backup read.
    expect(during).toBeGreaterThan(writers);
    const target = await tempDir("busy-target");
    const restored = await run(["restore", archive, "--data", target]);
    expect(restored.code, restored.err).toBe(0);
    const back = createFilePorts(target, { fsync: "off" });
    for (let w = 0; w < writers; w += 2) {
      const user = `w${w}`;
      const result = await verifyStoredTrail(back.audit, user, await auditVerifyDays(back.audit, user, undefined, undefined, new Date()));
      expect(result.valid, `${user}: ${JSON.stringify(result.firstBad)}`).toBe(true);
      const acked = before.filter((write) => write.writer === w).length;
      expect(result.entries, user).toBeGreaterThanOrEqual(acked);
    }
    for (const write of before.filter((write) => write.writer % 2 === 1)) {
      const stored = await back.data.get(`w${write.writer}/C-${write.n}/data.json`);
      expect(stored === null ? null : JSON.parse(decoder.decode(stored)).n, `w${write.writer} C-${write.n}`).toBe(write.n);
    }
  }, 180_000);
});

describe("hostile archives", () => {
  /** An archive whose hashes, counts and manifest all agree, holding the objects given. */
  function craftedArchive(objects: { store: string; key: string; body: string }[]): Buffer {
    const sha = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");
    const createdAt = "2026-12-02T00:00:00.000Z";
    let out = `forensic-annotation-backup/1\n${JSON.stringify({ begin: { createdAt, sealed: false } })}\n`;
    let lines = "";
    const counts: Record<string, number> = {};
    let bytes = 0;
    for (const { store, key, body } of objects) {
      const size = Buffer.byteLength(body);
      out += `${JSON.stringify({ store, key, size })}\n${body}\n${JSON.stringify({ sha256: sha(body) })}\n`;
      lines += `${JSON.stringify([store, key, size, sha(body)])}\n`;
      counts[`${store}/objects`] = (counts[`${store}/objects`] ?? 0) + 1;
      bytes += size;
    }
    const manifest = { format: "forensic-annotation/backup@1", createdAt, sealed: false, stores: Object.fromEntries(objects.map((o) => [o.store, "blob"])), counts, objects: objects.length, bytes, objectsSha256: sha(lines) };
    return Buffer.from(`${out}${JSON.stringify({ manifest })}\n`);
  }

  it.each([
    ["a key that climbs out of the store", "../../escaped.json"],
    ["a key with an empty segment", "a//b.json"],
    ["a key with a control character", "a/b\u0000.json"],
  ])("%s is refused by verify and restore, and nothing is written", async (_, key) => {
    const file = join(await tempDir("crafted"), "crafted.fab");
    await writeFile(file, craftedArchive([{ store: "data", key, body: "{}" }]));
    const verified = await run(["backup", "verify", file]);
    expect(verified.code).toBe(1);
    expect(verified.out).toContain("not one a store holds");
    const target = await tempDir("crafted-target");
    const restored = await run(["restore", file, "--data", target]);
    expect(restored.code).toBe(1);
    expect(restored.err).toContain("restore refused");
    expect(await readdir(target, { recursive: true })).toEqual([]);
  });

  it("objects of a store the manifest does not list are refused", async () => {
    const file = join(await tempDir("crafted"), "unlisted.fab");
    const bytes = craftedArchive([{ store: "data", key: "u/C/data.json", body: "{}" }]).toString().replace('"stores":{"data":"blob"}', '"stores":{}');
    await writeFile(file, bytes);
    const verified = await run(["backup", "verify", file]);
    expect(verified.code).toBe(1);
    expect(verified.out).toContain("stores the manifest does not list: data");
  });
});

describe("moving between backends: files → Redis → S3 → files", () => {
  let redis: RedisServer;
  let s3: Awaited<ReturnType<typeof startS3>>;
  beforeAll(async () => {
    [redis, s3] = await Promise.all([startRedis(), startS3()]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([redis?.stop(), s3?.stop()]);
  });

  it("each hop restores every object with identical reads, and every trail verifies on each backend", async () => {
    const source = await tempDir("hop-files");
    const original = createFilePorts(source, { fsync: "off" });
    await fillStores(original);
    const expected = await everything(original);
    const users = ["user-0", "user-1", "user-2"];
    const redisEnv = { STORAGE: "redis", STORAGE_URL: redis.url };
    const s3Env = { STORAGE: "s3", STORAGE_URL: `${s3.endpoint}/${s3.bucket}`, S3_ACCESS_KEY_ID: "S3RVER", S3_SECRET_ACCESS_KEY: "S3RVER" };
    const hops: { env: Record<string, string>; data: string }[] = [
      { env: redisEnv, data: await tempDir("hop-redis") },
      { env: s3Env, data: await tempDir("hop-s3") },
      { env: {}, data: await tempDir("hop-files-back") },
    ];
    let from = { env: {} as Record<string, string>, data: source };
    for (const hop of hops) {
      const archive = join(await tempDir("hop-out"), "hop.fab");
      const made = await run(["backup", "--out", archive, "--data", from.data], from.env);
      expect(made.code, made.err).toBe(0);
      const restored = await run(["restore", archive, "--data", hop.data], hop.env);
      expect(restored.code, `${hop.env.STORAGE ?? "files"}: ${restored.err}`).toBe(0);
      from = hop;
    }
    // The stores of each backend read as the original did.
    const redisPorts = createRedisPorts(redis.url);
    try {
      const onRedis = { ...redisPorts.ports, outbox: createFilePorts(hops[0]!.data).outbox };
      expect(await everything(onRedis)).toEqual(expected);
      await trailsVerify(onRedis, users);
    } finally {
      await redisPorts.close();
    }
    const { createS3Ports, s3LocationFromUrl } = await import("../../src/adapters/s3/s3-ports.ts");
    const onS3 = { ...(await createS3Ports(s3LocationFromUrl(s3Env.STORAGE_URL, "us-east-1", "S3RVER", "S3RVER"))).ports, outbox: createFilePorts(hops[1]!.data).outbox };
    expect(await everything(onS3)).toEqual(expected);
    await trailsVerify(onS3, users);
    const back = createFilePorts(hops[2]!.data, { fsync: "off" });
    expect(await everything(back)).toEqual(expected);
    await trailsVerify(back, users);
  }, 120_000);
});

describe("a restore killed half-way", () => {
  const cli = fileURLToPath(new URL("../../dist/src/adapters/node/cli.js", import.meta.url));

  async function filesUnder(dir: string): Promise<number> {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
    return entries.filter((entry) => entry.isFile()).length;
  }

  it("SIGKILL during the writes, then restore --resume: complete, nothing written twice", async () => {
    await stat(cli);
    const source = await tempDir("kill-src");
    const ports = createFilePorts(source, { fsync: "off" });
    const records = 1_200;
    for (let i = 0; i < records; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => ports.users.put(`u${i + j}`, JSON.stringify({ uid: `u${i + j}`, cases: [], pad: "x".repeat(200) }))));
    }
    await fillStores(ports, 2);
    const archive = join(await tempDir("kill-out"), "kill.fab");
    expect((await run(["backup", "--out", archive, "--data", source])).code).toBe(0);
    const target = await tempDir("kill-dst");
    const child = spawn(process.execPath, [cli, "restore", archive, "--data", target], { stdio: "ignore", env: { ...process.env, FSYNC: "all" } });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    // Half-way: a third of the user records are written (bounded wait).
    const deadline = Date.now() + 60_000;
    while ((await filesUnder(join(target, "users"))) < records / 3 && Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    child.kill("SIGKILL");
    const { signal } = await exited;
    expect(signal).toBe("SIGKILL");
    const partial = await filesUnder(join(target, "users"));
    expect(partial).toBeLessThan(records);
    // Without --resume the partly written target is refused as holding data.
    const plain = await run(["restore", archive, "--data", target]);
    expect(plain.code).toBe(1);
    expect(plain.err).toContain("the target holds data");
    const resumed = await run(["restore", archive, "--data", target, "--resume"]);
    expect(resumed.code, resumed.err).toBe(0);
    const [, written, already] = /\((\d+) written, (\d+) already there\)/.exec(resumed.out) ?? [];
    // Less what was in flight at the kill (up to 16 writes, whose temporary files the count includes).
    expect(Number(already)).toBeGreaterThanOrEqual(partial - 17);
    expect(Number(written) + Number(already)).toBe(records + 2 * 10);
    expect(await everything(createFilePorts(target, { fsync: "off" }))).toEqual(await everything(ports));
  }, 120_000);
});
