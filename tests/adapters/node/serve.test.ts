import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, spawnServe, type Served } from "../../helpers/spawn-serve.ts";
import { auditEntry } from "../../helpers/audit-entry.ts";
import { createFilePorts } from "../../../src/adapters/server/files/file-ports.ts";
import { appendAuditEntry } from "../../../src/core/audit/trail.ts";
import { systemClock } from "../../../src/core/ports.ts";
import type { ValidationAuditEntry } from "../../../src/core/schemas/audit.ts";
import { runAuditCommand } from "../../../src/adapters/server/audit-command.ts";
import { auditKeys } from "../../../src/core/audit/signing-keys.ts";

let dir: string;
const running: Served[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-serve-"));
});
afterEach(async () => {
  while (running.length) await running.pop()!.stop("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

async function serve(options: Parameters<typeof spawnServe>[0]): Promise<Served> {
  const served = await spawnServe(options);
  running.push(served);
  return served;
}

describe("forensic-annotation serve on Node (CONTRACT: Starting it)", () => {
  it("prints one line per worker, answers /health, and exits 0 on SIGTERM", async () => {
    const served = await serve({ dataDir: join(dir, "data"), env: { R2_KEY_SECRET: "k" } });
    for (const worker of ["data", "keys", "captcha", "audit"]) {
      expect(served.output()).toMatch(new RegExp(`^${worker}\\s+${served.url}/${worker}$`, "m"));
    }
    expect(await (await fetch(`${served.url}/health`)).json()).toEqual({ ok: true });
    expect((await fetch(`${served.url}/openapi.json`)).status).toBe(200);
    running.pop();
    expect(await served.stop("SIGTERM")).toBe(0);
  });

  it("with API_DOCS=off the start lines name no /docs (the page is not served)", async () => {
    const served = await serve({ dataDir: join(dir, "no-docs"), env: { R2_KEY_SECRET: "k", API_DOCS: "off" } });
    expect(served.output()).toMatch(/^ready /m);
    expect(served.output()).not.toContain("/docs");
    expect((await fetch(`${served.url}/docs`)).status).toBe(404);
  });

  it("generates missing secrets once, keeps them under --data, never prints configured ones", async () => {
    const dataDir = join(dir, "data");
    const first = await serve({ dataDir, env: { KEYS_AUTH: "configured-keys-secret" } });
    const generated = /generated R2_KEY_SECRET=([0-9a-f]{64})/.exec(first.output())?.[1];
    expect(generated).toBeDefined();
    expect(first.output()).not.toContain("configured-keys-secret");
    expect(first.output()).not.toMatch(/generated KEYS_AUTH/);
    const stored = JSON.parse(await readFile(join(dataDir, "secrets.json"), "utf8")) as Record<string, string>;
    expect(stored.R2_KEY_SECRET).toBe(generated);
    // The exchange decryption key is a private EC P-256 JWK that is named at start, never printed.
    const decryption = JSON.parse(stored.EXCHANGE_DECRYPTION_KEY!) as JsonWebKey;
    expect(Object.keys(decryption).sort()).toEqual(["crv", "d", "kty", "x", "y"]);
    expect(decryption).toMatchObject({ kty: "EC", crv: "P-256" });
    await crypto.subtle.importKey("jwk", decryption, { name: "ECDH", namedCurve: "P-256" }, false, ["deriveBits"]);
    expect(first.output()).toMatch(/^generated EXCHANGE_DECRYPTION_KEY \(an EC P-256 private key, kept in .*secrets\.json; its public half is served at http:.*\/exchange\/keys\)$/m);
    expect(first.output()).not.toContain(decryption.d);
    expect((await fetch(`${first.url}/ready`)).status).toBe(200);
    await first.stop();

    const second = await serve({ dataDir, env: { KEYS_AUTH: "configured-keys-secret" } });
    expect(second.output()).not.toContain("generated");
    const response = await fetch(`${second.url}/data/u1/C-1/data.json`, { headers: { "X-Custom-Auth-Key": generated! } });
    expect(response.status).toBe(200);
    const keys = await fetch(`${second.url}/keys/R2_KEY_SECRET`, { headers: { "X-Custom-Auth-Key": "configured-keys-secret" } });
    expect(await keys.text()).toBe(generated);
    expect(JSON.parse(await readFile(join(dataDir, "secrets.json"), "utf8"))).toEqual(stored);
  });

  it("the start that generates AUDIT_SIGNING_KEY over trails begun unsigned signs their heads once (a tampered one named, left unsigned); the audit commands find that key under --data", async () => {
    const dataDir = join(dir, "earlier");
    const { audit } = createFilePorts(dataDir, { fsync: "off" });
    const append = (uid: string) => appendAuditEntry(audit, systemClock, uid, auditEntry({ userId: uid }) as ValidationAuditEntry);
    for (const uid of ["u1", "u1", "u2", "u2"]) await append(uid);
    const day = new Date().toISOString().slice(0, 10);
    const u2Day = join(dataDir, "audit", "audit-trails", `u2-${day}.json`);
    await writeFile(u2Day, (await readFile(u2Day, "utf8")).replace('"action":"', '"action":"x'));
    const served = await serve({ dataDir, env: { R2_KEY_SECRET: "k" } });
    expect(served.output()).toMatch(/^signing  the audit heads of 2 trails begun without AUDIT_SIGNING_KEY, each verified first/m);
    expect(served.output()).toMatch(/^signed   1 audit head; not signed: u2 \(tampered\): run `forensic-annotation audit sign-heads` with serve stopped/m);
    const verify = async (uid: string) => (await (await fetch(`${served.url}/audit/audit/verify?userId=${uid}`, { headers: { "X-Custom-Auth-Key": "k" } })).json()) as { valid: boolean; head: { seq: number; signature: string } };
    expect(await verify("u1")).toMatchObject({ valid: true, head: { seq: 2, signature: "valid" } });
    // Appends go on signing over the head signed at start.
    expect((await fetch(`${served.url}/audit/audit/?userId=u1`, { method: "POST", headers: { "X-Custom-Auth-Key": "k", "Content-Type": "application/json" }, body: JSON.stringify(auditEntry({ userId: "u1" })) })).status).toBe(200);
    expect(await verify("u1")).toMatchObject({ valid: true, head: { seq: 3, signature: "valid" } });
    expect((await verify("u2")).valid).toBe(false);
    running.pop();
    expect(await served.stop("SIGTERM")).toBe(0);

    // Without AUDIT_SIGNING_KEY in the environment, the commands use the key serve generated there.
    const run = async (args: string[]) => {
      const out: string[] = [];
      let err = "";
      const code = await runAuditCommand(args, { io: { out: (line) => out.push(line), err: { write: (text: string) => (err += text) }, env: {} } });
      return { code, out: out.join("\n"), err };
    };
    const verified = await run(["audit", "verify", "--user", "u1", "--data", dataDir]);
    expect(verified.code, verified.err).toBe(0);
    expect(verified.out).toContain("head seq 3, signature valid");
    // A trail written without the key (another tool) is "signature missing" while the key is set, and sign-heads signs it.
    await append("u3");
    const missing = await run(["audit", "verify", "--user", "u3", "--data", dataDir]);
    expect(missing.code).toBe(1);
    expect(missing.out).toContain("signature missing");
    const signing = await run(["audit", "sign-heads", "--user", "u3", "--force", "--data", dataDir]);
    expect(signing.code, signing.err).toBe(0);
    expect(signing.out).toContain("u3: signed (head seq 1");

    // A folder whose heads another key signed (restored without its secrets.json): named, not signed over.
    const restored = join(dir, "restored");
    const otherKey = JSON.stringify(await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"])).privateKey));
    await appendAuditEntry(createFilePorts(restored, { fsync: "off" }).audit, systemClock, "u9", auditEntry({ userId: "u9" }) as ValidationAuditEntry, { signer: auditKeys({ auditSigningKey: otherKey }).signer });
    const elsewhere = await serve({ dataDir: restored, env: { R2_KEY_SECRET: "k" } });
    expect(elsewhere.output()).toMatch(/^audit heads of earlier trails not signed: the store holds heads signed by another key \(u9\.\.\.\): a secrets\.json lost or not restored\?/m);
  });

  it("never hands out the exchange decryption key, even when KEYS_EXPOSED lists it", async () => {
    const key = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])).privateKey);
    const { kty, crv, x, y, d } = key;
    const env = { KEYS_AUTH: "k", KEYS_EXPOSED: "EXCHANGE_DECRYPTION_KEY,R2_KEY_SECRET", EXCHANGE_DECRYPTION_KEY: JSON.stringify({ kty, crv, x, y, d }) };
    const served = await serve({ dataDir: join(dir, "data"), env });
    const response = await fetch(`${served.url}/keys/EXCHANGE_DECRYPTION_KEY`, { headers: { "X-Custom-Auth-Key": "k" } });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(await response.text()).not.toContain(d);
    expect(served.output()).not.toContain(d);
  });

  it("reads .env from the working directory; the environment wins over it", async () => {
    await writeFile(join(dir, ".env"), "R2_KEY_SECRET=from-dotenv\nKEYS_AUTH=dotenv-keys\n");
    const served = await serve({ dataDir: join(dir, "data"), cwd: dir, env: { KEYS_AUTH: "env-keys" } });
    expect((await fetch(`${served.url}/data/a/b.json`, { headers: { "X-Custom-Auth-Key": "from-dotenv" } })).status).toBe(200);
    expect((await fetch(`${served.url}/keys/R2_KEY_SECRET`, { headers: { "X-Custom-Auth-Key": "env-keys" } })).status).toBe(200);
    expect((await fetch(`${served.url}/keys/R2_KEY_SECRET`, { headers: { "X-Custom-Auth-Key": "dotenv-keys" } })).status).toBe(403);
  });

  it("--help prints usage and exits 0; a bad flag exits 2", () => {
    const help = spawnSync(process.execPath, [CLI, "--help"], { encoding: "utf8" });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/Usage: forensic-annotation serve/);
    for (const flag of ["--port", "--host", "--data"]) expect(help.stdout).toContain(flag);
    expect(spawnSync(process.execPath, [CLI, "serve", "--bogus"], { encoding: "utf8" }).status).toBe(2);
    expect(spawnSync(process.execPath, [CLI, "serve", "--port", "http"], { encoding: "utf8" }).status).toBe(2);
  });

  it("a bad configuration is refused at start with the variable named", () => {
    const result = spawnSync(process.execPath, [CLI, "serve", "--port", "0", "--data", join(dir, "d")], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", MAIL_TRANSPORT: "pigeon" },
      timeout: 15_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("MAIL_TRANSPORT");
  });

  it("an audit key the service could not sign or verify with is refused at start in one line, not on every append", () => {
    // An RSA key whose modulus is one byte: JSON with a kty and a d, which jose cannot import.
    const broken = JSON.stringify({ kty: "RSA", n: "AA", e: "AQAB", d: "AA", p: "AA", q: "AA", dp: "AA", dq: "AA", qi: "AA" });
    for (const env of [{ AUDIT_SIGNING_KEY: "{}" }, { AUDIT_VERIFY_KEYS: "[1]" }, { AUDIT_SIGNING_KEY: broken }]) {
      const result = spawnSync(process.execPath, [CLI, "serve", "--port", "0", "--data", join(dir, "d")], {
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", ...env },
        timeout: 15_000,
      });
      const name = Object.keys(env)[0]!;
      expect(result.status, name).toBe(2);
      expect(result.stderr, name).toContain(`${name}: `);
      expect(result.stderr, name).not.toMatch(/\n\s+at /);
    }
  });

  it("a store that does not answer at start is said in one line (exit 1), not a stack trace", async () => {
    const { closedPort } = await import("../../helpers/http-server.ts");
    const result = spawnSync(process.execPath, [CLI, "serve", "--port", "0", "--data", join(dir, "d")], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", STORAGE: "redis", STORAGE_URL: `redis://127.0.0.1:${await closedPort()}/0` },
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/cannot start: The storage backend \(Redis\) is not answering/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("finishes an in-flight request after SIGTERM", async () => {
    const served = await serve({ dataDir: join(dir, "data"), env: { R2_KEY_SECRET: "k" } });
    // A slow upload: the body arrives in pieces after the signal.
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode('{"part":"'));
        await new Promise((resolve) => setTimeout(resolve, 300));
        served.proc.kill("SIGTERM");
        await new Promise((resolve) => setTimeout(resolve, 300));
        controller.enqueue(new TextEncoder().encode('two"}'));
        controller.close();
      },
    });
    const response = await fetch(`${served.url}/data/u1/slow.json`, {
      method: "PUT",
      body,
      headers: { "X-Custom-Auth-Key": "k" },
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(200);
    running.pop();
    expect(await served.exited).toBe(0);
    expect(JSON.parse(await readFile(join(dir, "data", "data", "u1", "slow.json"), "utf8"))).toEqual({ part: "two" });
  });

  it("64 concurrent audit POSTs over HTTP give exactly 64 entries on disk and counts 1..64", async () => {
    const served = await serve({ dataDir: join(dir, "data"), env: { R2_KEY_SECRET: "k" } });
    const responses = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        fetch(`${served.url}/data/audit/?userId=u1`, {
          method: "POST",
          headers: { "X-Custom-Auth-Key": "k", "Content-Type": "application/json" },
          body: JSON.stringify(auditEntry({ details: { validationErrors: [], seq: i } })),
        }).then((r) => r.json() as Promise<{ entryCount: number; filename: string }>)
      ),
    );
    expect(responses.map((r) => r.entryCount).sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    const filename = responses[0]!.filename;
    const onDisk = JSON.parse(await readFile(join(dir, "data", "audit", filename), "utf8")) as { details: { seq: number } }[];
    expect(onDisk.map((entry) => entry.details.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    const listed = await fetch(`${served.url}/audit/audit/?userId=u1`, { headers: { "X-Custom-Auth-Key": "k" } });
    expect(((await listed.json()) as { total: number }).total).toBe(64);
  });
});
