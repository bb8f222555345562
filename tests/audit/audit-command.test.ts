/**
 * `forensic-annotation audit verify|export` over the files under --data: exit codes, the first
 * bad entry named after a file is edited on disk, and exports a reviewer checks offline.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair } from "jose";
import { createFilePorts } from "../../src/adapters/server/files/file-ports.ts";
import { runAuditCommand } from "../../src/adapters/server/audit-command.ts";
import { appendAuditEntry } from "../../src/core/audit/trail.ts";
import { auditKeys } from "../../src/core/audit/signing-keys.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { publicAuditJwk } from "../../src/core/audit/head-signature.ts";
import type { ValidationAuditEntry } from "../../src/core/schemas/audit.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { headText } from "../helpers/head-file.ts";
import { pdfPages } from "../core/pdf/poppler.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const DAYS = ["2026-11-20", "2026-11-21"];

async function dataWithTrail(env: Record<string, string> = {}) {
  const dir = await mkdtemp(join(tmpdir(), "fa-audit-cli-"));
  dirs.push(dir);
  const { audit } = createFilePorts(dir, { fsync: "off" });
  const signer = auditKeys({ auditSigningKey: env.AUDIT_SIGNING_KEY }).signer;
  for (const day of DAYS) {
    for (let i = 0; i < 3; i++) {
      const clock = { now: () => new Date(`${day}T1${i}:00:00Z`) };
      await appendAuditEntry(audit, clock, "u1", auditEntry({ action: i === 1 ? "annotation-edit" : "case-create" }) as ValidationAuditEntry, { signer });
    }
  }
  return dir;
}

async function run(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  let err = "";
  const code = await runAuditCommand(args, { io: { out: (line) => out.push(line), err: { write: (text: string) => (err += text) }, env } });
  return { code, out: out.join("\n"), err };
}

describe("forensic-annotation audit", () => {
  it("verify: exit 0 on an intact trail; 1 naming the entry after a stored file is edited; 2 on bad usage", async () => {
    const dir = await dataWithTrail();
    const intact = await run(["audit", "verify", "--user", "u1", "--data", dir]);
    expect(intact.code, intact.err).toBe(0);
    expect(intact.out).toContain("intact (6 entries");
    const file = join(dir, "audit", "audit-trails", `u1-${DAYS[1]}.json`);
    const text = await readFile(file, "utf8");
    await writeFile(file, text.replace('"action":"annotation-edit"', '"action":"case-delete"'));
    const tampered = await run(["audit", "verify", "--user", "u1", "--data", dir]);
    expect(tampered.code).toBe(1);
    expect(tampered.out).toContain("TAMPERED");
    expect(tampered.out).toContain(`first bad entry: seq 5 on ${DAYS[1]} (position 1): edited`);
    const json = await run(["audit", "verify", "--user", "u1", "--data", dir, "--json", "--from", DAYS[0]!, "--to", DAYS[1]!]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toMatchObject({ valid: false, userId: "u1", from: DAYS[0], to: DAYS[1], entries: 6, firstBad: { seq: 5, reason: "edited" } });
    // --to alone starts at the trail's first day, as the help says of --from.
    const upTo = await run(["audit", "verify", "--user", "u1", "--data", dir, "--json", "--to", DAYS[0]!]);
    expect(JSON.parse(upTo.out)).toMatchObject({ valid: true, from: DAYS[0], to: DAYS[0], entries: 3 });
    const beforeAll = await run(["audit", "verify", "--user", "u1", "--data", dir, "--json", "--to", "2026-11-01"]);
    expect(JSON.parse(beforeAll.out)).toMatchObject({ valid: true, from: "2026-11-01", to: "2026-11-01", entries: 0 });
    const toSecond = await run(["audit", "verify", "--user", "u1", "--data", dir, "--json", "--to", DAYS[1]!]);
    expect(JSON.parse(toSecond.out)).toMatchObject({ from: DAYS[0], to: DAYS[1], entries: 6 });
    for (const args of [["audit", "verify"], ["audit", "check", "--user", "u1"], ["audit", "verify", "--user", "u1", "--from", "yesterday"], ["audit", "verify", "--user", "u1", "--to", "never"], ["audit", "export", "--user", "u1", "--format", "xml"], ["audit", "verify", "--user", "u1", "--bogus"]]) {
      expect((await run([...args, "--data", dir])).code, args.join(" ")).toBe(2);
    }
  });

  it("a bad --from or --to is named as the flag the user typed, not the HTTP query's startDate or endDate (exit 2)", async () => {
    const dir = await dataWithTrail();
    const cases: [string[], string][] = [
      [["--from", "yesterday"], "--from must be an ISO 8601 date or date-time"],
      [["--from", DAYS[1]!, "--to", DAYS[0]!], "--from must not be after --to (compared by UTC day)"],
    ];
    for (const [flags, message] of cases) {
      const refused = await run(["audit", "verify", "--user", "u1", "--data", dir, ...flags]);
      expect(refused.code, flags.join(" ")).toBe(2);
      expect(refused.err, flags.join(" ")).toContain(message);
      expect(refused.err, flags.join(" ")).not.toMatch(/startDate|endDate/);
    }
    // The built command says the same.
    const cli = fileURLToPath(new URL("../../dist/src/adapters/node/cli.js", import.meta.url));
    const built = spawnSync(process.execPath, [cli, "audit", "export", "--user", "u1", "--data", dir, "--from", DAYS[1]!, "--to", DAYS[0]!, "--format", "json"], { encoding: "utf8", timeout: 30_000 });
    expect(built.status, built.stderr).toBe(2);
    expect(built.stderr).toContain("--from must not be after --to");
  });

  it("sign-heads: with AUDIT_SIGNING_KEY verify calls an unsigned head signature missing; sign-heads signs intact trails, not a tampered one", async () => {
    const dir = await dataWithTrail();
    const { audit } = createFilePorts(dir, { fsync: "off" });
    for (let i = 0; i < 3; i++) await appendAuditEntry(audit, { now: () => new Date(`${DAYS[0]}T1${i}:00:00Z`) }, "u2", auditEntry({ userId: "u2" }) as ValidationAuditEntry);
    const u2Day = join(dir, "audit", "audit-trails", `u2-${DAYS[0]}.json`);
    await writeFile(u2Day, (await readFile(u2Day, "utf8")).replace('"action":"case-create"', '"action":"case-delete"'));
    const env = { AUDIT_SIGNING_KEY: JSON.stringify(await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey)) };
    const before = await run(["audit", "verify", "--user", "u1", "--data", dir], env);
    expect(before.code).toBe(1);
    expect(before.out).toContain("signature missing");
    const signing = await run(["audit", "sign-heads", "--data", dir], env);
    expect(signing.code, signing.err).toBe(1);
    expect(signing.out).toContain("u1: signed (head seq 6; entries up to 6 were appended under unsigned heads)");
    expect(signing.out).toContain("u2: TAMPERED, not signed: seq 1");
    const after = await run(["audit", "verify", "--user", "u1", "--data", dir], env);
    expect(after.code, after.out).toBe(0);
    expect(after.out).toContain("head seq 6, signature valid (entries up to seq 6 appended unsigned)");
    expect((await run(["audit", "verify", "--user", "u2", "--data", dir], env)).out).toContain(`first bad entry: seq 1 on ${DAYS[0]} (position 0): edited`);
    // Signing has begun (u1's head is signed): an unsigned head may now be a forgery, so a run must be forced.
    const again = await run(["audit", "sign-heads", "--user", "u1", "--data", dir], env);
    expect(again.code).toBe(1);
    expect(again.err).toContain('signing has begun in this store (the heads of "u1" are signed)');
    expect(again.out).toBe("");
    const forced = await run(["audit", "sign-heads", "--user", "u1", "--data", dir, "--force"], env);
    expect(forced.code).toBe(0);
    expect(forced.out).toBe("u1: already signed (head seq 6)");
    // A user id no store can hold is named, not a failure of the whole run.
    const odd = await run(["audit", "sign-heads", "--user", "a/b", "--data", dir, "--force"], env);
    expect(odd.code).toBe(1);
    expect(odd.out).toMatch(/^a\/b: not signed: /);
    // Without the key, or with options it does not take: usage (2).
    expect((await run(["audit", "sign-heads", "--data", dir])).code).toBe(2);
    expect((await run(["audit", "sign-heads", "--data", dir, "--format", "pdf"], env)).code).toBe(2);
    expect((await run(["audit", "verify", "--user", "u1", "--data", dir, "--force"], env)).code).toBe(2);
  });

  it("verify draws a progress bar on stderr for a long trail when stderr is a terminal, and none otherwise", async () => {
    const dir = await dataWithTrail();
    const { audit } = createFilePorts(dir, { fsync: "off" });
    for (let i = 0; i < 2_000; i++) await appendAuditEntry(audit, { now: () => new Date(`${DAYS[1]}T20:00:00Z`) }, "u1", auditEntry() as ValidationAuditEntry);
    let terminal = "";
    const code = await runAuditCommand(["audit", "verify", "--user", "u1", "--data", dir], { io: { out: () => {}, err: { write: (text: string) => (terminal += text), isTTY: true }, env: {} } });
    expect(code).toBe(0);
    expect(terminal).toContain("verifying [");
    // Within the long day too, not only at its end.
    expect(terminal).toContain("1003/2006");
    expect(terminal).toContain("2006/2006");
    const piped = await run(["audit", "verify", "--user", "u1", "--data", dir]);
    expect(piped.code).toBe(0);
    expect(piped.err).not.toContain("verifying [");
  }, 60_000);

  it("export json: the days and the signed head, which verifyAuditTrail re-checks offline with the public key", async () => {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = await exportJWK(privateKey);
    const env = { AUDIT_SIGNING_KEY: JSON.stringify(jwk) };
    const dir = await dataWithTrail(env);
    const out = join(dir, "trail.json");
    const exported = await run(["audit", "export", "--user", "u1", "--format", "json", "--out", out, "--data", dir], env);
    expect(exported.code, exported.err).toBe(0);
    const document = JSON.parse(await readFile(out, "utf8")) as Parameters<typeof verifyAuditTrail>[0] & { verification: { valid: boolean } };
    expect(document.verification.valid).toBe(true);
    const offline = await verifyAuditTrail(document, { publicKeys: [publicAuditJwk(jwk as JsonWebKey)] });
    expect(offline).toMatchObject({ valid: true, entries: 6, head: { seq: 6, signature: "valid" } });
    // Without the key the signature is reported unchecked; with another key it is invalid.
    expect((await verifyAuditTrail(document)).head?.signature).toBe("unchecked");
    const other = await exportJWK((await generateKeyPair("ES256", { extractable: true })).publicKey);
    expect((await verifyAuditTrail(document, { publicKeys: [other] })).firstBad?.reason).toBe("signature invalid");
    // An entry edited in the export is caught offline too.
    const edited = JSON.parse(JSON.stringify(document)) as typeof document & { days: { entries: Record<string, unknown>[] }[] };
    edited.days[0]!.entries[2]!.result = "failure";
    expect((await verifyAuditTrail(edited, { publicKeys: [publicAuditJwk(jwk as JsonWebKey)] })).firstBad).toMatchObject({ seq: 3, reason: "edited" });
  });

  it("export csv: one row per entry with seq and hash; pdf: verification, head hash and signature status on every page", async () => {
    const dir = await dataWithTrail();
    const csvPath = join(dir, "trail.csv");
    expect((await run(["audit", "export", "--user", "u1", "--format", "csv", "--out", csvPath, "--data", dir])).code).toBe(0);
    const rows = (await readFile(csvPath, "utf8")).trim().split("\n");
    expect(rows[0]).toBe('"seq","date","index","timestamp","receivedAt","userId","userEmail","action","result","prevHash","hash","details"');
    expect(rows.slice(1).map((row) => row.split(",")[0])).toEqual(['"1"', '"2"', '"3"', '"4"', '"5"', '"6"']);
    expect(rows.slice(1).every((row) => /"[0-9a-f]{64}","[0-9a-f]{64}"/.test(row))).toBe(true);

    // Enough entries for several pages.
    const { audit } = createFilePorts(dir, { fsync: "off" });
    for (let i = 0; i < 120; i++) await appendAuditEntry(audit, { now: () => new Date(`${DAYS[1]}T20:00:00Z`) }, "u1", auditEntry() as ValidationAuditEntry);
    const pdfPath = join(dir, "trail.pdf");
    const exported = await run(["audit", "export", "--user", "u1", "--format", "pdf", "--out", pdfPath, "--data", dir]);
    expect(exported.code, exported.err).toBe(0);
    const pages = pdfPages(new Uint8Array(await readFile(pdfPath)));
    expect(pages.length).toBeGreaterThan(1);
    const head = JSON.parse(headText(new Uint8Array(await readFile(join(dir, "audit", "audit-heads", "u1.json"))))) as { hash: string };
    for (const page of pages) {
      expect(page).toContain("Verification: INTACT");
      expect(page).toContain(`Head: seq 126, hash ${head.hash}`);
      expect(page).toContain("Head signature: unsigned");
    }
  });
});
