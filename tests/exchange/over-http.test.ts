/**
 * The exchange worker in process (docs/exchange.md#over-http), over the same stores as the
 * `export`/`import` commands: an export over HTTP and the command's differ only in dates and
 * signatures; an import over HTTP refuses exactly what the command refuses and writes nothing
 * then; identity mode; confirmations signed by the service both ways.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { strToU8, unzipSync } from "fflate";
import { exportJWK, generateKeyPair } from "jose";
import { createFilePorts } from "../../src/adapters/server/files/file-ports.ts";
import { runExchangeCommand } from "../../src/adapters/server/exchange-command.ts";
import { createService } from "../../src/core/service/service.ts";
import { parseConfig } from "../../src/core/config/mod.ts";
import { fixedClock, KEYS } from "../helpers/service.ts";
import { AUDIENCE, ISSUER, startIdentityProvider } from "../helpers/identity.ts";
import { ANALYST, auditEntries, CASE, flipped, putJson, REVIEWER, rezip, seedCase, storedImageIds, text, utf8 } from "./exchange-fixtures.ts";
import { buildZip, zeros } from "./zip-bombs.ts";
import { storageKeys } from "../../src/core/storage/keys.ts";
import type { ServicePorts } from "../../src/core/service/service.ts";

const data = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
const zipBody = (bytes: Uint8Array) => ({ method: "POST", headers: { ...data, "Content-Type": "application/zip" }, body: bytes as BodyInit });

async function signingKey(): Promise<string> {
  const { privateKey } = await generateKeyPair("Ed25519", { extractable: true });
  return JSON.stringify({ ...(await exportJWK(privateKey)), kid: "lab-1" });
}

function unsignedManifest(manifest: string): Record<string, unknown> {
  const { signature: _signature, ...rest } = JSON.parse(manifest) as Record<string, unknown>;
  return rest;
}

function serviceOver(ports: ServicePorts, env: Record<string, string> = {}) {
  return createService(ports, parseConfig({ ...KEYS, RATE_LIMITS: "off", ...env }));
}

/** What every store holds: the keys of data, images (spool included) and users. */
async function everything(ports: ServicePorts): Promise<string[]> {
  return [...(await ports.data.list("")).map((key) => `data:${key}`), ...(await ports.images.list("")).map((key) => `images:${key}`), ...(await ports.users.list("")).map((key) => `users:${key}`)].sort();
}

describe("the exchange worker over the command's stores", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "fa-exchange-http-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a ZIP, JSON and CSV export over HTTP is the command's but for its dates and signature", async () => {
    const seeded = await seedCase();
    const dataDir = join(dir, "data");
    // The seeded case copied to files under --data, as serve would have stored it.
    const ports = { ...createFilePorts(dataDir), clock: fixedClock("2026-11-23T08:00:00.000Z") };
    for (const key of await seeded.ports.data.list("")) await ports.data.put(key, (await seeded.ports.data.get(key))!);
    for (const key of await seeded.ports.images.list("")) await ports.images.put(key, (await seeded.ports.images.get(key))!);
    for (const key of await seeded.ports.users.list("")) await ports.users.put(key, (await seeded.ports.users.get(key))!);
    const env = { EXPORT_SIGNING_KEY: await signingKey() };
    const app = serviceOver(ports, env);
    for (const format of ["zip", "json", "csv"] as const) {
      const out = join(dir, `command.${format}`);
      const io = { io: { out: () => {}, err: { write: () => true }, env } };
      expect(await runExchangeCommand(["export", "--user", ANALYST, "--case", CASE, "--format", format, "--out", out, "--data", dataDir], io)).toBe(0);
      const command = new Uint8Array(await readFile(out));
      const response = await app.request(`/exchange/${ANALYST}/cases/${CASE}?format=${format}`, { headers: data });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-disposition")).toMatch(new RegExp(`^attachment; filename="${CASE}-export-20261123\\.${format}"`));
      const served = new Uint8Array(await response.arrayBuffer());
      const undated = (value: string) => value.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "DATE").replace(/[0-9a-f]{64}|[0-9A-F]{64}/g, "HASH");
      if (format !== "zip") {
        expect(undated(text(served))).toBe(undated(text(command)));
        continue;
      }
      const [ours, theirs] = [unzipSync(served), unzipSync(command)];
      expect(Object.keys(ours)).toEqual(Object.keys(theirs));
      for (const name of Object.keys(ours)) {
        if (name.startsWith("images/")) expect(ours[name], name).toEqual(theirs[name]);
        else if (name === "FORENSIC_MANIFEST.json") {
          const [a, b] = [JSON.parse(text(ours[name])), JSON.parse(text(theirs[name]))];
          expect(a.imageHashes).toEqual(b.imageHashes);
          expect(a.signature.keyId).toBe("lab-1");
          expect(Object.keys(a)).toEqual(Object.keys(b));
        } else expect(undated(text(ours[name])), name).toBe(undated(text(theirs[name])));
      }
    }
  });

  it("an import over HTTP refuses what the command refuses, with the same reason, and writes nothing; a same-number read-only case is a 409", async () => {
    const seeded = await seedCase();
    const env = { EXPORT_SIGNING_KEY: await signingKey() };
    const app = serviceOver(seeded.ports, env);
    const exported = await app.request(`/exchange/${ANALYST}/cases/${CASE}`, { headers: data });
    const zip = new Uint8Array(await exported.arrayBuffer());
    const entries = unzipSync(zip);
    const dataName = `${CASE}_data.json`;
    const imageName = Object.keys(entries).find((name) => name.startsWith("images/"))!;
    const { deflated, size, crc } = zeros(200);
    const hostile: [string, Uint8Array, Record<string, string>][] = [
      ["tampered data", rezip(zip, { [dataName]: utf8(text(entries[dataName]).replace("Q-7", "Q-9")) }), {}],
      ["tampered image", rezip(zip, { [imageName]: flipped(entries[imageName]!, 40) }), {}],
      ["unsigned while required", rezip(zip, { "FORENSIC_MANIFEST.json": utf8(JSON.stringify(unsignedManifest(text(entries["FORENSIC_MANIFEST.json"])), null, 2)) }), { EXPORT_REQUIRE_SIGNATURE: "true" }],
      ["a ZIP bomb", buildZip({}, [{ name: "images/bomb-0.png", compression: 8, data: deflated, size, crc }]), {}],
      ["not a ZIP", strToU8("just text, not an archive"), {}],
    ];
    for (const [what, body, extra] of hostile) {
      const before = await everything(seeded.ports);
      const over = serviceOver(seeded.ports, { ...env, ...extra });
      const response = await over.request(`/exchange/${REVIEWER}/imports`, zipBody(body));
      expect(response.status, what).toBe(400);
      const answer = await response.json() as { code: string; message: string; details: { result?: { errors: string[] } } };
      expect(answer.code, what).toBe("VALIDATION_ERROR");
      expect(await everything(seeded.ports), what).toEqual(before);
      if (what === "not a ZIP") continue;
      // The command says the same, and writes nothing either.
      const file = join(dir, "package.zip");
      await import("node:fs/promises").then((fs) => fs.writeFile(file, body));
      const dataDir = join(dir, `d-${what.replaceAll(" ", "-")}`);
      const filePorts = createFilePorts(dataDir);
      for (const key of await seeded.ports.users.list("")) await filePorts.users.put(key, (await seeded.ports.users.get(key))!);
      const errors: string[] = [];
      const code = await runExchangeCommand(["import", "--user", REVIEWER, "--json", file, "--data", dataDir], { io: { out: (line) => errors.push(...JSON.parse(line).errors), err: { write: () => true }, env: { ...env, ...extra } } });
      expect(code, what).toBe(1);
      expect(answer.details.result!.errors, what).toEqual(errors);
    }
    expect(await storedImageIds(seeded.ports)).toHaveLength(3);

    const imported = await app.request(`/exchange/${REVIEWER}/imports?fileName=case.zip`, zipBody(zip));
    expect(imported.status).toBe(200);
    expect(await imported.json()).toMatchObject({ success: true, caseNumber: CASE, filesImported: 3, signatureValid: true });
    const before = await everything(seeded.ports);
    const again = await app.request(`/exchange/${REVIEWER}/imports`, zipBody(zip));
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: "CONFLICT", details: { result: { overwritable: true, errors: [expect.stringMatching(/already exists/)] } } });
    expect(await everything(seeded.ports)).toEqual(before);
    const preview = await app.request(`/exchange/${REVIEWER}/imports?preview=true`, zipBody(zip));
    expect(await preview.json()).toMatchObject({ canImport: false, caseNumber: CASE });
    expect(await everything(seeded.ports)).toEqual(before);
    expect((await app.request(`/exchange/${REVIEWER}/imports?overwrite=true`, zipBody(zip))).status).toBe(200);
    // The imports' documents keep their versions (record history), written by the service.
    const history = await app.request(`/data/${REVIEWER}/${CASE}/data.json?history&verify=true`, { headers: data });
    expect(history.status).toBe(200);
    const { versions, current, valid } = (await history.json()) as { versions: { writtenBy: string; deleted: boolean }[]; current: number | null; valid: boolean };
    expect(valid).toBe(true);
    expect(current).toBe(versions.length);
    expect(versions.filter((version) => !version.deleted).length).toBeGreaterThanOrEqual(2);
    expect(new Set(versions.map((version) => version.writtenBy))).toEqual(new Set(["service"]));
    expect((await auditEntries(seeded.ports, REVIEWER)).filter((entry) => entry.action === "case-import").map((entry) => entry.result)).toEqual(["failure", "failure", "failure", "failure", "success", "failure", "success"]);
    expect((await auditEntries(seeded.ports, ANALYST)).filter((entry) => entry.action === "case-export")).toHaveLength(1);
  });

  it("a body over MAX_IMPORT_BYTES is a 413 before it is read, declared or streamed, and nothing is kept", async () => {
    const seeded = await seedCase();
    const app = serviceOver(seeded.ports, { MAX_IMPORT_BYTES: "1000" });
    const before = await everything(seeded.ports);
    const declared = await app.request(`/exchange/${REVIEWER}/imports`, { ...zipBody(new Uint8Array(5000)), headers: { ...data, "Content-Length": "5000" } });
    expect(declared.status).toBe(413);
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (pulled > 100) controller.close();
        else controller.enqueue(Uint8Array.of(0x50, 0x4b, 3, 4, ...new Uint8Array(600)));
      },
    });
    const streamed = await app.request(`/exchange/${REVIEWER}/imports`, { method: "POST", headers: data, body: stream, duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(pulled).toBeLessThan(10);
    expect(await everything(seeded.ports)).toEqual(before);
  });
});

describe("the exchange worker with identity tokens, and confirmations", () => {
  let idp: Awaited<ReturnType<typeof startIdentityProvider>>;
  beforeAll(async () => {
    idp = await startIdentityProvider();
  });
  afterAll(async () => await idp.close());

  it("a token's user exports and imports only under their own uid (403 and a security-violation entry otherwise); confirmations round-trip, signed", async () => {
    const seeded = await seedCase();
    const env = { AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, EXPORT_SIGNING_KEY: await signingKey(), EXPORT_REQUIRE_SIGNATURE: "true" };
    const app = serviceOver(seeded.ports, env);
    const as = async (uid: string) => ({ ...data, "X-Identity-Token": await idp.token(uid) });
    const crossed = await app.request(`/exchange/${ANALYST}/cases/${CASE}`, { headers: await as(REVIEWER) });
    expect(crossed.status).toBe(403);
    expect((await auditEntries(seeded.ports, REVIEWER)).map((entry) => entry.action)).toEqual(["security-violation"]);
    const exported = await app.request(`/exchange/${ANALYST}/cases/${CASE}`, { headers: await as(ANALYST) });
    expect(exported.status).toBe(200);
    const zip = new Uint8Array(await exported.arrayBuffer());
    expect((await app.request(`/exchange/${ANALYST}/imports`, { ...zipBody(zip), headers: { ...(await as(REVIEWER)), "Content-Type": "application/zip" } })).status).toBe(403);
    const imported = await app.request(`/exchange/${REVIEWER}/imports`, { ...zipBody(zip), headers: { ...(await as(REVIEWER)), "Content-Type": "application/zip" } });
    expect(imported.status).toBe(200);

    // The reviewer confirms an image (as the browser client does, in the read-only case document).
    const document = JSON.parse(text((await seeded.ports.data.get(storageKeys.case(REVIEWER, CASE)))!));
    const original = Object.keys(document.originalImageIds)[0]!;
    const confirmation = { fullName: "Rev Iewer", badgeId: "B-7", timestamp: "2026-11-22T12:00:00.000Z", confirmationId: "CONF-ABCDEFGH12", confirmedBy: REVIEWER, confirmedByEmail: `${REVIEWER}@lab.example`, confirmedByCompany: "State Lab", confirmedAt: "2026-11-22T12:00:00.000Z" };
    await putJson(seeded.ports, storageKeys.case(REVIEWER, CASE), { ...document, confirmations: { [original]: [confirmation] } });
    const file = await app.request(`/exchange/${REVIEWER}/cases/${CASE}/confirmations`, { headers: await as(REVIEWER) });
    expect(file.status).toBe(200);
    expect(file.headers.get("content-disposition")).toMatch(/^attachment; filename="confirmation-data-/);
    const confirmations = await file.text();
    expect(JSON.parse(confirmations).metadata.signature).toMatchObject({ keyId: "lab-1" });
    const post = async (body: string) => await app.request(`/exchange/${ANALYST}/confirmations`, { method: "POST", headers: { ...(await as(ANALYST)), "Content-Type": "application/json" }, body });
    // Changed after export: refused whole, nothing confirmed.
    const changed = await post(confirmations.replace("Rev Iewer", "Someone Else"));
    expect(changed.status).toBe(400);
    const back = await post(confirmations);
    expect(back.status).toBe(200);
    expect(await back.json()).toMatchObject({ success: true, imagesUpdated: 1, signatureValid: true });
    const annotations = JSON.parse(text((await seeded.ports.data.get(storageKeys.annotations(ANALYST, CASE, original)))!));
    expect(annotations).toMatchObject({ includeConfirmation: true, confirmationData: { confirmationId: "CONF-ABCDEFGH12" } });
    const actions = (uid: string) => auditEntries(seeded.ports, uid).then((entries) => entries.map((entry) => `${entry.action}:${entry.result}`));
    expect(await actions(ANALYST)).toEqual(["case-export:success", "confirmation-import:failure", "confirmation-import:success"]);
    expect(await actions(REVIEWER)).toEqual(["security-violation:blocked", "security-violation:blocked", "case-import:success", "confirmation-export:success"]);
    // Unsigned confirmations are refused while signatures are required.
    const unsigned = JSON.parse(confirmations);
    delete unsigned.metadata.signature;
    expect((await post(JSON.stringify(unsigned, null, 2))).status).toBe(400);
  });
});
