/**
 * Sealed packages through the exchange worker (docs/exchange.md#sealed-packages), in process:
 * two labs with their own EXCHANGE_DECRYPTION_KEY. The analyst's service seals a case for the
 * reviewer's public key (from its GET /exchange/keys, which needs no credential); the reviewer's
 * service imports it; any other service refuses it naming the thumbprint it was sealed for,
 * and a refused package writes nothing.
 */
import { describe, expect, it } from "vitest";
import { calculateJwkThumbprint, type JWK } from "jose";
import { createService, type ServicePorts } from "../../src/core/service/service.ts";
import { parseConfig } from "../../src/core/config/mod.ts";
import { fixedClock, KEYS, memoryPorts } from "../helpers/service.ts";
import { ANALYST, CASE, putUser, REVIEWER, seedCase } from "./exchange-fixtures.ts";

const data = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };

async function decryptionKey(kind: "EC" | "RSA"): Promise<JWK> {
  const pair = kind === "EC"
    ? await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])
    : await crypto.subtle.generateKey({ name: "RSA-OAEP", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["encrypt", "decrypt"]);
  const { kty, crv, x, y, d, n, e, p, q, dp, dq, qi } = await crypto.subtle.exportKey("jwk", pair.privateKey);
  return JSON.parse(JSON.stringify({ kty, crv, x, y, d, n, e, p, q, dp, dq, qi })) as JWK;
}

const serviceOver = (ports: ServicePorts, env: Record<string, string> = {}) => createService(ports, parseConfig({ ...KEYS, RATE_LIMITS: "off", ...env }));

async function everything(ports: ServicePorts): Promise<string[]> {
  return [...(await ports.data.list("")).map((key) => `data:${key}`), ...(await ports.images.list("")).map((key) => `images:${key}`), ...(await ports.users.list("")).map((key) => `users:${key}`)].sort();
}

async function reviewerLab(key: JWK | undefined) {
  const ports = memoryPorts({ clock: fixedClock("2026-11-23T08:00:00.000Z") });
  await putUser(ports, REVIEWER, ["REVIEWER-OWN-1"]);
  return { ports, app: serviceOver(ports, key === undefined ? {} : { EXCHANGE_DECRYPTION_KEY: JSON.stringify(key) }) };
}

const sealedRequest = (recipient: unknown) => ({ method: "POST", headers: { ...data, "Content-Type": "application/json" }, body: JSON.stringify({ recipient }) });
const importRequest = (bytes: Uint8Array) => ({ method: "POST", headers: { ...data, "Content-Type": "application/octet-stream" }, body: bytes as BodyInit });

describe("sealed packages between two services", () => {
  for (const kind of ["EC", "RSA"] as const) {
    it(`${kind}: sealed by the analyst's service for the reviewer's key, imported only by the reviewer's service`, async () => {
      const seeded = await seedCase();
      const analystKey = await decryptionKey("EC");
      const analyst = serviceOver(seeded.ports, { EXCHANGE_DECRYPTION_KEY: JSON.stringify(analystKey) });
      const reviewerKey = await decryptionKey(kind);
      const reviewer = await reviewerLab(reviewerKey);

      // The reviewer's public keys, without any credential: the sealing key only, no private member.
      const keys = await reviewer.app.request("/exchange/keys");
      expect(keys.status).toBe(200);
      const set = await keys.json() as { keys: JWK[] };
      expect(set.keys).toHaveLength(1);
      const recipient = set.keys[0]!;
      const thumbprint = await calculateJwkThumbprint(reviewerKey);
      expect(recipient).toMatchObject({ kty: kind, kid: thumbprint, use: "enc", alg: kind === "EC" ? "ECDH-ES+A256KW" : "RSA-OAEP-256" });
      for (const member of ["d", "p", "q", "dp", "dq", "qi"]) expect(recipient).not.toHaveProperty(member);

      const sealed = await analyst.request(`/exchange/${ANALYST}/cases/${CASE}/sealed`, sealedRequest(recipient));
      expect(sealed.status).toBe(200);
      expect(sealed.headers.get("content-type")).toBe("application/octet-stream");
      expect(sealed.headers.get("content-disposition")).toMatch(new RegExp(`^attachment; filename="${CASE}-export-20261122\\.sealed"`));
      const bytes = new Uint8Array(await sealed.arrayBuffer());
      expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe("FASEALED");

      // The analyst's own service holds another key: refused naming the key it was sealed for, nothing written.
      const analystBefore = await everything(seeded.ports);
      const wrong = await analyst.request(`/exchange/${ANALYST}/imports`, importRequest(bytes));
      expect(wrong.status).toBe(400);
      const wrongBody = await wrong.json() as { code: string; message: string; details: Record<string, unknown> };
      expect(wrongBody.code).toBe("VALIDATION_ERROR");
      expect(wrongBody.message).toContain(`it was sealed for the key ${thumbprint}`);
      expect(wrongBody.details).toMatchObject({ sealedFor: thumbprint, thumbprint: await calculateJwkThumbprint(analystKey) });
      expect(await everything(seeded.ports)).toEqual(analystBefore);

      // Altered on the way: refused, nothing written at the reviewer's.
      const reviewerBefore = await everything(reviewer.ports);
      const altered = bytes.slice();
      altered[altered.length - 100]! ^= 1;
      const tampered = await reviewer.app.request(`/exchange/${REVIEWER}/imports`, importRequest(altered));
      expect(tampered.status).toBe(400);
      expect((await tampered.json() as { message: string }).message).toMatch(/^Sealed package refused: chunk \d+ fails its authentication/);
      const cut = await reviewer.app.request(`/exchange/${REVIEWER}/imports`, importRequest(bytes.subarray(0, bytes.length - 20)));
      expect(cut.status).toBe(400);
      expect(await everything(reviewer.ports)).toEqual(reviewerBefore);

      // The reviewer's service opens it: a preview, then the import as a read-only case.
      const preview = await reviewer.app.request(`/exchange/${REVIEWER}/imports?preview=true`, importRequest(bytes));
      expect(preview.status).toBe(200);
      expect(await preview.json()).toMatchObject({ canImport: true, caseNumber: CASE, fileCount: 3 });
      const imported = await reviewer.app.request(`/exchange/${REVIEWER}/imports`, importRequest(bytes));
      expect(imported.status).toBe(200);
      expect(await imported.json()).toMatchObject({ success: true, caseNumber: CASE, filesImported: 3, isReadOnly: true });
    });
  }

  it("the sealed export refuses what it cannot seal for, and keeps the credential", async () => {
    const seeded = await seedCase();
    const app = serviceOver(seeded.ports);
    const recipient = (await reviewerLab(await decryptionKey("EC")).then(({ app: other }) => other.request("/exchange/keys")).then((r) => r.json()) as { keys: JWK[] }).keys[0]!;
    expect((await app.request(`/exchange/${ANALYST}/cases/${CASE}/sealed`, { ...sealedRequest(recipient), headers: { "Content-Type": "application/json" } })).status).toBe(403);
    expect((await app.request(`/exchange/${ANALYST}/cases/NO-SUCH-CASE/sealed`, sealedRequest(recipient))).status).toBe(404);
    const refused = async (body: BodyInit, pattern: RegExp) => {
      const response = await app.request(`/exchange/${ANALYST}/cases/${CASE}/sealed`, { method: "POST", headers: { ...data, "Content-Type": "application/json" }, body });
      expect(response.status, String(body)).toBe(400);
      expect((await response.json() as { message: string }).message).toMatch(pattern);
    };
    await refused("not json", /The body is not JSON/);
    await refused("{}", /The body needs "recipient"/);
    await refused(JSON.stringify({ recipient: { ...recipient, d: "AAAA" } }), /must be a public key/);
    await refused(JSON.stringify({ recipient: { kty: "oct", k: "AAAA" } }), /must be an EC P-256 or RSA key/);
    expect((await app.request(`/exchange/${ANALYST}/cases/${CASE}/sealed`, { headers: data })).status).toBe(405);
  });

  it("EXCHANGE_DECRYPTION_KEY given as a list of one key (as EXPORT_SIGNING_KEY may be) opens what was sealed for it", async () => {
    const seeded = await seedCase();
    const key = await decryptionKey("EC");
    const reviewer = memoryPorts({ clock: fixedClock("2026-11-23T08:00:00.000Z") });
    await putUser(reviewer, REVIEWER, ["REVIEWER-OWN-1"]);
    const app = serviceOver(reviewer, { EXCHANGE_DECRYPTION_KEY: JSON.stringify({ keys: [key] }) });
    expect((await app.request("/ready")).status).toBe(200);
    const recipient = (await (await app.request("/exchange/keys")).json() as { keys: JWK[] }).keys[0]!;
    expect(recipient.kid).toBe(await calculateJwkThumbprint(key));
    const bytes = new Uint8Array(await (await serviceOver(seeded.ports).request(`/exchange/${ANALYST}/cases/${CASE}/sealed`, sealedRequest(recipient))).arrayBuffer());
    expect((await app.request(`/exchange/${REVIEWER}/imports`, importRequest(bytes))).status).toBe(200);
  });

  it("a service without EXCHANGE_DECRYPTION_KEY lists no sealing key and refuses a sealed package with a 400 saying so", async () => {
    const seeded = await seedCase();
    const analyst = serviceOver(seeded.ports);
    const reviewer = await reviewerLab(undefined);
    expect(await (await reviewer.app.request("/exchange/keys")).json()).toEqual({ keys: [] });
    const other = await reviewerLab(await decryptionKey("EC"));
    const recipient = (await (await other.app.request("/exchange/keys")).json() as { keys: JWK[] }).keys[0]!;
    const bytes = new Uint8Array(await (await analyst.request(`/exchange/${ANALYST}/cases/${CASE}/sealed`, sealedRequest(recipient))).arrayBuffer());
    const response = await reviewer.app.request(`/exchange/${REVIEWER}/imports`, importRequest(bytes));
    expect(response.status).toBe(400);
    expect((await response.json() as { message: string }).message).toBe("This service has no EXCHANGE_DECRYPTION_KEY: it cannot open a sealed package");
  });

  it("GET /exchange/keys lists the signing key's public half too (never a private member; an HS256 secret never)", async () => {
    const signing = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"])).privateKey);
    const { kty, crv, x, y, d } = signing;
    const decryption = await decryptionKey("RSA");
    const app = serviceOver(memoryPorts(), { EXPORT_SIGNING_KEY: JSON.stringify({ kty, crv, x, y, d, kid: "lab-1" }), EXCHANGE_DECRYPTION_KEY: JSON.stringify(decryption) });
    const text = await (await app.request("/exchange/keys")).text();
    const set = JSON.parse(text) as { keys: JWK[] };
    expect(set.keys.map((key) => [key.kid, key.use, key.alg])).toEqual([["lab-1", "sig", "ES256"], [await calculateJwkThumbprint(decryption), "enc", "RSA-OAEP-256"]]);
    for (const secret of [d, decryption.d, decryption.p, decryption.q, decryption.dp, decryption.dq, decryption.qi]) expect(text).not.toContain(secret);
    const hs = serviceOver(memoryPorts(), { EXPORT_SIGNING_KEY: JSON.stringify({ kty: "oct", k: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0" }) });
    expect(await (await hs.request("/exchange/keys")).json()).toEqual({ keys: [] });
  });
});
