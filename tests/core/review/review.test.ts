/**
 * The review worker in process (docs/review.md): the blind and open workflows, every refusal,
 * signatures verified with jose against the published keys alone, and the attacks a reviewer
 * may try. The same workflows run over HTTP on every runtime in tests/conformance/suite.ts.
 */
import { describe, expect, it } from "vitest";
import { compactVerify, createLocalJWKSet, exportJWK, generateKeyPair } from "jose";
import { AUDIENCE, ISSUER } from "../../helpers/identity.ts";
import { reviewKeys } from "./review-keys.ts";
import { fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { canonicalJson } from "../../../src/core/encoding/canonical-json.ts";
import { pdfText } from "../pdf/poppler.ts";
import { GREY_PNG } from "../pdf/requests.ts";
import { createMemoryPorts } from "../../../src/core/service/memory-ports.ts";
import type { BlobStore } from "../../../src/core/ports.ts";

const NOW = "2026-11-22T12:00:00.000Z";
const ADMIN = "admin-key-0123456789";
const data = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
const nowSeconds = Date.parse(NOW) / 1000;

describe("review worker (in process)", () => {
  const keys = reviewKeys();

  const setup = async () => {
    const clock = fixedClock(NOW);
    const built = testService({ AUTH_JWKS_URL: keys.idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, ADMIN_AUTH: ADMIN, RATE_LIMITS: "off", AUDIT_SIGNING_KEY: keys.signingKey }, { clock });
    const { app } = built;
    const as = async (uid: string, claims: Record<string, unknown> = {}) => ({ "X-Identity-Token": await keys.idp.token(uid, { lab: uid.startsWith("x") ? "Lab X" : "Lab A", roles: uid.startsWith("rev") ? ["reviewer"] : ["examiner"], auth_time: nowSeconds - 10, ...claims }) });
    const call = async (path: string, uid: string, init: RequestInit & { claims?: Record<string, unknown> } = {}) => {
      const { claims, ...rest } = init;
      return app.request(path, { ...rest, headers: { ...(await as(uid, claims)), ...(rest.headers as Record<string, string> | undefined) } });
    };
    // The owner's case: two files with annotations.
    const owner = { ...data, ...(await as("owner")) };
    const put = (path: string, body: unknown) => app.request(`/data/${path}`, { method: "PUT", headers: owner, body: JSON.stringify(body) });
    expect((await put("owner/C-1/data.json", { caseNumber: "C-1", createdAt: NOW, files: [{ id: "f1", originalFilename: "a.png", uploadedAt: NOW }, { id: "f2", originalFilename: "b.png", uploadedAt: NOW }] })).status).toBe(200);
    const annotations = (fileId: string) => ({ leftCase: "C-1", rightCase: "C-1", leftItem: "1", rightItem: "2", includeConfirmation: false, supportLevel: "ID", classType: "Bullet", additionalNotes: `secret notes ${fileId}`, updatedAt: NOW });
    for (const fileId of ["f1", "f2"]) expect((await put(`owner/C-1/${fileId}/data.json`, annotations(fileId))).status).toBe(200);
    // The reviewer has opened the service once (their token's lab and roles are remembered).
    expect((await call("/review/inbox/rev1", "rev1")).status).toBe(200);
    return { ...built, clock, call, put, owner };
  };
  const listedConfirmation = (view: { body: Record<string, any> }) => {
    const { version, sha256 } = view.body.review.confirmations[0];
    return { version, sha256 };
  };
  const json = async (response: Response) => ({ status: response.status, body: await response.json() as Record<string, any> });

  it("a verified signature stored before a store failed kept the confirmation from being written: the reviewer's repeat finishes it (200), and only then", async () => {
    const base = createMemoryPorts().data;
    let failing = false;
    const data: BlobStore = {
      ...base,
      appendToJsonArray: (key, item, atIndex, options) => {
        if (failing && key === "#history/owner/C-1/f1/data.json/log") {
          failing = false;
          // The new version is made (the signature is stored inside the update's change), then the store fails to append it.
          return Promise.reject(new Error("store went away"));
        }
        return base.appendToJsonArray(key, item, atIndex, options);
      },
    };
    const clock = fixedClock(NOW);
    const { app } = testService({ AUTH_JWKS_URL: keys.idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, RATE_LIMITS: "off", AUDIT_SIGNING_KEY: keys.signingKey }, { clock, data });
    const as = async (uid: string) => ({ "X-Identity-Token": await keys.idp.token(uid, { lab: "Lab A", roles: uid.startsWith("rev") ? ["reviewer"] : ["examiner"], auth_time: nowSeconds - 10 }) });
    const ownerKey = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET, ...(await as("owner")) };
    expect((await app.request("/data/owner/C-1/data.json", { method: "PUT", headers: ownerKey, body: JSON.stringify({ caseNumber: "C-1", createdAt: NOW, files: [{ id: "f1", originalFilename: "a.png", uploadedAt: NOW }] }) })).status).toBe(200);
    expect((await app.request("/data/owner/C-1/f1/data.json", { method: "PUT", headers: ownerKey, body: JSON.stringify({ leftCase: "C-1", rightCase: "C-1", includeConfirmation: false, supportLevel: "ID", updatedAt: NOW }) })).status).toBe(200);
    expect((await app.request("/review/inbox/rev1", { headers: await as("rev1") })).status).toBe(200);
    const created = await app.request("/review/cases/owner/C-1", { method: "POST", headers: await as("owner"), body: JSON.stringify({ reviewer: "rev1", kind: "verification", blind: false }) });
    const id = ((await created.json()) as { id: string }).id;
    const sign = async (meaning = "verified", authTime = nowSeconds - 10) => await app.request(`/review/r/${id}/signatures`, {
      method: "POST",
      headers: { "X-Identity-Token": await keys.idp.token("rev1", { lab: "Lab A", roles: ["reviewer"], auth_time: authTime }) },
      body: JSON.stringify({ fileId: "f1", meaning, printedName: "Rita Reviewer" }),
    });
    failing = true;
    expect((await sign()).status).toBe(500);
    const annotations = async () => (await (await app.request("/data/owner/C-1/f1/data.json", { headers: ownerKey })).json()) as { includeConfirmation?: boolean };
    expect((await annotations()).includeConfirmation).toBe(false);
    // Another meaning is not a repeat: the file is signed. A repeat needs the fresh sign-in too.
    expect((await sign("reviewed")).status).toBe(409);
    expect((await sign("verified", nowSeconds - 3600)).status).toBe(401);
    const repeated = await sign();
    expect(repeated.status).toBe(200);
    expect(await repeated.json()).toMatchObject({ signer: "rev1", meaning: "verified", record: { key: "owner/C-1/f1/data.json" } });
    expect((await annotations()).includeConfirmation).toBe(true);
    const review = (await (await app.request(`/review/r/${id}`, { headers: await as("owner") })).json()) as { review: { state: string; confirmations: unknown[] } };
    expect(review.review).toMatchObject({ state: "completed" });
    expect(review.review.confirmations).toHaveLength(1);
    // Finished, a further repeat is the plain refusal.
    expect((await sign()).status).toBe(409);
  });

  it("the blind workflow: the owner's conclusions withheld until the reviewer's, signatures, the confirmation, completion, verify", async () => {
    const { call, app } = await setup();
    const created = await json(await call("/review/cases/owner/C-1", "owner", { method: "POST", body: JSON.stringify({ reviewer: "rev1", kind: "verification", blind: true }) }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ owner: "owner", caseNumber: "C-1", reviewer: "rev1", kind: "verification", blind: true, state: "open", files: [{ fileId: "f1", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }, { fileId: "f2" }] });
    const id = created.body.id as string;
    const inbox = await json(await call("/review/inbox/rev1", "rev1"));
    expect(inbox.body.reviews.map((review: { id: string }) => review.id)).toEqual([id]);
    const seen = await json(await call(`/review/r/${id}`, "rev1"));
    expect(seen.status).toBe(200);
    expect(seen.body.files[0].annotations).toMatchObject({ leftCase: "C-1" });
    expect(seen.body.files[0].annotations.supportLevel).toBeUndefined();
    expect(JSON.stringify(seen.body)).not.toContain("secret notes");
    // Signing before the reviewer's conclusion: 409.
    expect((await call(`/review/r/${id}/signatures`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f1", meaning: "verified", printedName: "Rita Reviewer" }) })).status).toBe(409);
    expect((await call(`/review/r/${id}/conclusions`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f1", supportLevel: "ID", classType: "Bullet" }) })).status).toBe(201);
    expect((await call(`/review/r/${id}/conclusions`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f1", supportLevel: "Exclusion" }) })).status).toBe(409);
    const after = await json(await call(`/review/r/${id}`, "rev1"));
    expect(after.body.files[0].annotations.supportLevel).toBe("ID");
    expect(after.body.files[1].annotations.supportLevel).toBeUndefined();
    const signed = await json(await call(`/review/r/${id}/signatures`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f1", meaning: "verified", printedName: "Rita Reviewer" }) }));
    expect(signed.status).toBe(201);
    expect(signed.body).toMatchObject({ signer: "rev1", printedName: "Rita Reviewer", meaning: "verified", signedAt: NOW, reviewId: id, record: { key: "owner/C-1/f1/data.json", version: 1, sha256: created.body.files[0].sha256 } });
    expect(created.body.files.map((file: { version: number }) => file.version)).toEqual([1, 1]);
    // Verified with jose against the published keys alone.
    const jwks = await (await app.request("/review/keys")).json() as { keys: Record<string, unknown>[] };
    expect(JSON.stringify(jwks)).not.toContain('"d"');
    const { jws, ...facts } = signed.body;
    const { payload } = await compactVerify(jws, createLocalJWKSet(jwks as never));
    expect(new TextDecoder().decode(payload)).toBe(canonicalJson(facts));
    // The owner's annotations carry the v1.0 confirmation.
    const stored = await (await app.request("/data/owner/C-1/f1/data.json", { headers: { ...data, "X-Identity-Token": await keys.idp.token("owner") } })).json() as Record<string, any>;
    expect(stored).toMatchObject({ includeConfirmation: true, confirmationData: { fullName: "Rita Reviewer", confirmedBy: "rev1", confirmedAt: NOW, confirmationId: expect.stringMatching(/^CONF-[A-Z0-9]{10}$/) } });
    expect((await json(await call(`/review/r/${id}/verify`, "owner"))).body).toEqual({ signatures: [{ fileId: "f1", status: "valid" }] });
    // The confirmation is version 2 of the owner's annotations, written by the reviewer; version 1 is what was signed.
    const ownerHeaders = { ...data, "X-Identity-Token": await keys.idp.token("owner") };
    const history = await (await app.request("/data/owner/C-1/f1/data.json?history", { headers: ownerHeaders })).json() as { versions: { version: number; writtenBy: string; sha256: string }[] };
    expect(history.versions.map((version) => [version.version, version.writtenBy])).toEqual([[1, "owner"], [2, "rev1"]]);
    expect(history.versions[0]!.sha256).toBe(signed.body.record.sha256);
    expect(listedConfirmation(await json(await call(`/review/r/${id}`, "owner")))).toEqual({ version: 2, sha256: history.versions[1]!.sha256 });
    // The PDF report prints nothing of a forged signature, nor of a genuine one over a data: URL's image (it names no file:
    // tests/core/review/review-attacks.test.ts prints one signed over the file's own image).
    const report = async (annotationData: unknown, caseNumber = "C-1") => {
      const response = await app.request("/pdf", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ imageUrl: GREY_PNG, caseNumber, annotationData, activeAnnotations: [] }) });
      expect(response.status).toBe(200);
      return pdfText(new Uint8Array(await response.arrayBuffer())).replace(/\s+/g, " ");
    };
    const printed = await report(stored);
    expect(printed).toContain("Confirmation by:");
    expect(printed).not.toContain("electronically signed");
    const forged = { ...stored, confirmationData: { ...stored.confirmationData, signature: { ...stored.confirmationData.signature, printedName: "Mallory Forger" } } };
    const forgedText = await report(forged);
    expect(forgedText).toContain("Confirmation by:");
    expect(forgedText).not.toContain("electronically signed");
    expect(forgedText).not.toContain("Mallory");
    // The genuine signature copied into another case's report is not shown as that case's.
    const copied = await report(stored, "C-2");
    expect(copied).toContain("Confirmation by:");
    expect(copied).not.toContain("electronically signed");
    // The second file: a disagreement, which writes no confirmation; then the review is complete.
    expect((await call(`/review/r/${id}/conclusions`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f2", supportLevel: "Inconclusive" }) })).status).toBe(201);
    expect((await call(`/review/r/${id}/signatures`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f2", meaning: "disagreed", printedName: "Rita Reviewer" }) })).status).toBe(201);
    const listed = await json(await call("/review/cases/owner/C-1", "owner"));
    expect(listed.body.reviews[0]).toMatchObject({ id, state: "completed", signatures: [{ fileId: "f1" }, { fileId: "f2", meaning: "disagreed" }] });
    // Each step is in both trails.
    for (const uid of ["owner", "rev1"]) {
      const trail = await (await app.request(`/audit/audit/?userId=${uid}`, { headers: { ...data, "X-Admin-Key": ADMIN } })).json() as { entries: { action: string; details: { reviewDetails?: { step: string } } }[] };
      const steps = trail.entries.filter((entry) => entry.details.reviewDetails !== undefined).map((entry) => entry.details.reviewDetails!.step).reverse();
      // (the trail reads newest first)
      expect(steps, uid).toEqual(["request", "conclusion", "signature", "conclusion", "signature", "completion"]);
      // The reviewer's trail holds nothing of the owner's conclusions.
      if (uid === "rev1") expect(JSON.stringify(trail)).not.toContain("secret notes");
    }
  });

  it("the open workflow: the reviewer sees the conclusions at once and signs without one; the owner cancels another", async () => {
    const { call } = await setup();
    const created = await json(await call("/review/cases/owner/C-1", "owner", { method: "POST", body: JSON.stringify({ reviewer: "rev1", kind: "technical", blind: false, fileIds: ["f2"] }) }));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const seen = await json(await call(`/review/r/${id}`, "rev1"));
    expect(seen.body.files).toHaveLength(1);
    expect(seen.body.files[0].annotations).toMatchObject({ supportLevel: "ID", additionalNotes: "secret notes f2" });
    const signed = await call(`/review/r/${id}/signatures`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f2", meaning: "reviewed", printedName: "Rita Reviewer" }) });
    expect(signed.status).toBe(201);
    expect((await json(await call(`/review/r/${id}`, "owner"))).body.review.state).toBe("completed");
    const other = (await json(await call("/review/cases/owner/C-1", "owner", { method: "POST", body: JSON.stringify({ reviewer: "rev1", kind: "technical", blind: false }) }))).body.id as string;
    expect((await call(`/review/r/${other}`, "rev1", { method: "DELETE" })).status).toBe(403);
    expect((await json(await call(`/review/r/${other}`, "owner", { method: "DELETE" }))).body).toMatchObject({ state: "cancelled" });
    expect((await call(`/review/r/${other}`, "owner", { method: "DELETE" })).status).toBe(409);
    expect((await call(`/review/r/${other}/conclusions`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f1", supportLevel: "ID" }) })).status).toBe(409);
  });

  it("refusals: outside the lab, no role, the owner reviewing, a stranger, a stale authentication, an amended file, key-only mode", async () => {
    const { call, put } = await setup();
    expect((await call("/review/inbox/xrev", "xrev", { claims: { roles: ["reviewer"] } })).status).toBe(200);
    const ask = (reviewer: string) => call("/review/cases/owner/C-1", "owner", { method: "POST", body: JSON.stringify({ reviewer, kind: "verification", blind: false }) });
    const outside = await json(await ask("xrev"));
    expect(outside).toMatchObject({ status: 400, body: { message: expect.stringContaining("not in your lab") } });
    expect((await call("/review/inbox/plain", "plain")).status).toBe(200);
    expect(await json(await ask("plain"))).toMatchObject({ status: 400, body: { message: expect.stringContaining("role reviewer") } });
    expect(await json(await ask("owner"))).toMatchObject({ status: 400, body: { details: { field: "reviewer" } } });
    const id = (await json(await ask("rev1"))).body.id as string;
    // A stranger (another user of the lab) is refused on every route, with an entry in their trail.
    for (const [path, method] of [[`/review/r/${id}`, "GET"], [`/review/r/${id}/verify`, "GET"], [`/review/r/${id}/conclusions`, "POST"], [`/review/r/${id}/signatures`, "POST"], [`/review/r/${id}`, "DELETE"], ["/review/inbox/rev1", "GET"], ["/review/cases/owner/C-1", "GET"], ["/review/cases/owner/C-1", "POST"]] as const) {
      const refused = await call(path, "rev2", { method, ...(method === "POST" ? { body: JSON.stringify({ fileId: "f1", supportLevel: "ID", meaning: "verified", printedName: "X", reviewer: "rev2", kind: "verification", blind: false }) } : {}) });
      expect(refused.status, `${method} ${path}`).toBe(403);
    }
    // The owner cannot review their own case's review.
    expect((await call(`/review/r/${id}/conclusions`, "owner", { method: "POST", body: JSON.stringify({ fileId: "f1", supportLevel: "ID" }) })).status).toBe(403);
    // A reviewer moved to another lab, or without the role, can no longer act.
    expect((await call(`/review/r/${id}/conclusions`, "rev1", { claims: { lab: "Lab X" }, method: "POST", body: JSON.stringify({ fileId: "f1", supportLevel: "ID" }) })).status).toBe(403);
    expect((await call(`/review/r/${id}/conclusions`, "rev1", { claims: { roles: [] }, method: "POST", body: JSON.stringify({ fileId: "f1", supportLevel: "ID" }) })).status).toBe(403);
    // A stale authentication.
    const sign = (claims: Record<string, unknown> = {}, fileId = "f1") => call(`/review/r/${id}/signatures`, "rev1", { claims, method: "POST", body: JSON.stringify({ fileId, meaning: "verified", printedName: "Rita Reviewer" }) });
    expect(await json(await sign({ auth_time: nowSeconds - 301 }))).toMatchObject({ status: 401, body: { details: { reason: "reauthentication required" } } });
    expect(await json(await sign({ auth_time: undefined }))).toMatchObject({ status: 401, body: { details: { reason: "reauthentication required" } } });
    // An amended file.
    expect((await put("owner/C-1/f1/data.json", { leftCase: "C-1", rightCase: "C-1", leftItem: "1", rightItem: "2", includeConfirmation: false, supportLevel: "Exclusion", updatedAt: NOW })).status).toBe(200);
    expect(await json(await sign())).toMatchObject({ status: 409, body: { details: { changed: true } } });
    expect((await json(await call(`/review/r/${id}`, "owner"))).body.review.files[0]).toMatchObject({ fileId: "f1", changed: true });
    expect((await sign({}, "f2")).status).toBe(201);
    expect((await sign({}, "f2")).status).toBe(409);
  });

  it("account deletion of either party keeps the review, its conclusions and signatures (in the audit store, which a backup copies whole)", async () => {
    const { call, app, ports } = await setup();
    const userKey = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
    for (const uid of ["owner", "rev1"]) {
      const profile = { email: `${uid}@lab.example`, firstName: uid, lastName: "X", company: "Lab", permitted: true };
      expect((await call(`/user/${uid}`, uid, { method: "PUT", headers: userKey, body: JSON.stringify(profile) })).status).toBe(201);
    }
    const id = (await json(await call("/review/cases/owner/C-1", "owner", { method: "POST", body: JSON.stringify({ reviewer: "rev1", kind: "verification", blind: false, fileIds: ["f1"] }) }))).body.id as string;
    expect((await call(`/review/r/${id}/conclusions`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f1", supportLevel: "ID" }) })).status).toBe(201);
    expect((await call(`/review/r/${id}/signatures`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f1", meaning: "reviewed", printedName: "Rita Reviewer" }) })).status).toBe(201);
    expect((await call("/user/rev1", "rev1", { method: "DELETE", headers: userKey })).status).toBe(200);
    const kept = await json(await call(`/review/r/${id}`, "owner"));
    expect(kept.body.review).toMatchObject({ state: "completed", conclusions: [{ fileId: "f1", reviewer: "rev1" }], signatures: [{ fileId: "f1", signer: "rev1" }] });
    expect((await call("/user/owner", "owner", { method: "DELETE", headers: userKey })).status).toBe(200);
    expect((await json(await call(`/review/r/${id}`, "rev1"))).body.review.signatures).toHaveLength(1);
    expect((await ports.audit.list("reviews/")).filter((key) => key.startsWith(`reviews/${id}/`)).sort()).toEqual([`reviews/${id}/case.json`, `reviews/${id}/files/f1.json`, `reviews/${id}/review.json`]);
    void app;
  });

  it("/review/keys publishes the public halves of AUDIT_SIGNING_KEY and AUDIT_VERIFY_KEYS; review.write is rate limited", async () => {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const old = { ...(await exportJWK(privateKey)), kid: "old-key" };
    const { app } = testService({ AUTH_JWKS_URL: keys.idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, AUDIT_SIGNING_KEY: keys.signingKey, AUDIT_VERIFY_KEYS: JSON.stringify([old]), RATE_LIMITS: "review.write=1/60s" }, { clock: fixedClock(NOW) });
    const jwks = await (await app.request("/review/keys")).json() as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toHaveLength(2);
    expect(jwks.keys[1]).toMatchObject({ kid: "old-key", kty: "EC" });
    for (const key of jwks.keys) expect(key.d, String(key.kid)).toBeUndefined();
    // A shared secret among AUDIT_VERIFY_KEYS is never published (its "k" is the secret itself).
    const withSecret = testService({ AUDIT_SIGNING_KEY: keys.signingKey, AUDIT_VERIFY_KEYS: JSON.stringify([old, { kty: "oct", k: "c2hhcmVkLXNlY3JldC1vZi10aGUtbGFi", kid: "shared" }]) }, { clock: fixedClock(NOW) });
    const published = await (await withSecret.app.request("/review/keys")).json() as { keys: Record<string, unknown>[] };
    expect(published.keys.map((key) => key.kid)).not.toContain("shared");
    for (const key of published.keys) expect(key.k).toBeUndefined();
    const headers = { "X-Identity-Token": await keys.idp.token("owner", { lab: "Lab A" }) };
    const body = JSON.stringify({ reviewer: "nobody", kind: "verification", blind: true });
    expect((await app.request("/review/cases/owner/C-9", { method: "POST", headers, body })).status).toBe(400);
    const limited = await app.request("/review/cases/owner/C-9", { method: "POST", headers, body });
    expect(limited.status).toBe(429);
  });

  it("key-only mode: 403 saying reviews need identity tokens; /review/keys stays open", async () => {
    const { app } = testService({ RATE_LIMITS: "off", AUDIT_SIGNING_KEY: keys.signingKey });
    const refused = await app.request("/review/inbox/u1", { headers: data });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("identity tokens") });
    expect((await app.request("/review/keys")).status).toBe(200);
  });
});
