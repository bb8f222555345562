/**
 * Review inside the service (docs/review.md) over real HTTP, on every runtime: `serve` in
 * identity-token mode with an audit signing key; the blind and open workflows, every refusal,
 * a signature verified with jose against the published keys alone, and what a reviewer may try
 * against the owner's data.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compactVerify, createLocalJWKSet, exportJWK, generateKeyPair } from "jose";
import { type Runtime, spawnServe, type Served } from "../helpers/spawn-serve.ts";
import { AUDIENCE, ISSUER, startIdentityProvider } from "../helpers/identity.ts";
import { fixture, uploadForm } from "../helpers/images.ts";
import { canonicalJson } from "../../src/core/encoding/canonical-json.ts";
import { createClient, ServiceClientError } from "../../src/client/mod.ts";
import { pdfText } from "../core/pdf/poppler.ts";
import { GREY_PNG } from "../core/pdf/requests.ts";

const SECRETS = {
  USER_DB_AUTH: "rev-user-key",
  R2_KEY_SECRET: "rev-data-key",
  KEYS_AUTH: "rev-keys-key",
  IMAGES_API_TOKEN: "rev-images-token",
  HMAC_KEY: "rev-hmac-key",
  ACCOUNT_HASH: "rev-account-hash",
  ALLOWED_ORIGIN: "https://lab.example",
  ADMIN_AUTH: "rev-admin-key-0123456789",
};
const dataKey = { "X-Custom-Auth-Key": SECRETS.R2_KEY_SECRET };
type Json = Record<string, any>;

/** Registers the review cases for one runtime. */
export function reviewConformance(runtime: Runtime): void {
  describe(`review on ${runtime}`, () => {
    let dir: string;
    let served: Served;
    let url: string;
    let idp: Awaited<ReturnType<typeof startIdentityProvider>>;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `fa-review-${runtime}-`));
      idp = await startIdentityProvider();
      const { privateKey } = await generateKeyPair("ES256", { extractable: true });
      const env = {
        ...SECRETS,
        AUTH_JWKS_URL: idp.jwksUrl,
        AUTH_ISSUER: ISSUER,
        AUTH_AUDIENCE: AUDIENCE,
        AUDIT_SIGNING_KEY: JSON.stringify({ ...(await exportJWK(privateKey)), kid: "review-key-1" }),
        RATE_LIMITS: "off",
      };
      served = await spawnServe({ runtime, dataDir: join(dir, "data"), env, timeoutMs: 60_000 });
      url = served.url;
    }, 90_000);
    afterAll(async () => {
      const code = await served?.stop("SIGTERM");
      await idp?.close();
      await rm(dir, { recursive: true, force: true });
      expect(code, `${runtime} exit code after SIGTERM`).toBe(0);
    }, 30_000);

    const t = (name: string) => `[${runtime}] ${name}`;
    const seconds = () => Math.floor(Date.now() / 1000);
    /** A token of the service's own time: lab and roles by name (x…: Lab X; rev…: reviewer), signed in 10 s ago. */
    const token = (uid: string, claims: Record<string, unknown> = {}) =>
      idp.token(uid, { lab: uid.startsWith("x") ? "Lab X" : "Lab A", roles: uid.startsWith("rev") || uid.startsWith("xrev") ? ["reviewer"] : ["examiner"], auth_time: seconds() - 10, ...claims }, { now: new Date() });
    const call = async (path: string, uid: string, init: RequestInit & { claims?: Record<string, unknown> } = {}): Promise<{ status: number; body: Json }> => {
      const { claims, ...rest } = init;
      const response = await fetch(`${url}${path}`, { ...rest, headers: { "X-Identity-Token": await token(uid, claims), ...(rest.headers as Record<string, string> | undefined) } });
      const text = await response.text();
      return { status: response.status, body: text === "" ? {} : JSON.parse(text) as Json };
    };
    const post = (path: string, uid: string, body: unknown, claims?: Record<string, unknown>) => call(path, uid, { method: "POST", body: JSON.stringify(body), ...(claims === undefined ? {} : { claims }) });
    const NOW = new Date().toISOString();
    const annotations = (caseNumber: string, fileId: string) => ({
      leftCase: caseNumber, rightCase: caseNumber, leftItem: "1", rightItem: "2", includeConfirmation: false,
      supportLevel: "ID", classType: "Bullet", classNote: "blind-secret-class", additionalNotes: `blind-secret-notes ${fileId}`, updatedAt: NOW,
    });
    /** The owner's case with files whose ids are uploaded images; answers the file ids. */
    const ownerCase = async (owner: string, caseNumber: string, files = 2): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < files; i++) {
        const uploaded = await fetch(`${url}/image/`, { method: "POST", body: uploadForm(fixture("sample.png"), `f${i}.png`), headers: { Authorization: `Bearer ${SECRETS.IMAGES_API_TOKEN}`, "X-Identity-Token": await token(owner) } });
        expect(uploaded.status).toBe(200);
        ids.push(((await uploaded.json()) as { result: { id: string } }).result.id);
      }
      const put = async (path: string, body: unknown) => expect((await call(`/data/${owner}/${caseNumber}/${path}`, owner, { method: "PUT", headers: dataKey, body: JSON.stringify(body) })).status).toBe(200);
      await put("data.json", { caseNumber, createdAt: NOW, files: ids.map((id, i) => ({ id, originalFilename: `f${i}.png`, uploadedAt: NOW })) });
      for (const id of ids) await put(`${id}/data.json`, annotations(caseNumber, id));
      return ids;
    };
    const trail = async (uid: string): Promise<Json[]> => {
      const response = await call(`/audit/audit/?userId=${uid}`, uid, { headers: dataKey });
      expect(response.status).toBe(200);
      return response.body.entries as Json[];
    };

    it(t("the blind workflow: conclusions withheld until the reviewer's own, signed, confirmed into the owner's annotations, verified with jose against /review/keys alone"), async () => {
      const [f1, f2] = await ownerCase("owner-b", "BLIND-1");
      // The reviewer opens the service once: their token's lab and roles are remembered.
      expect((await call("/review/inbox/rev-b", "rev-b")).body).toEqual({ reviews: [] });
      const created = await post("/review/cases/owner-b/BLIND-1", "owner-b", { reviewer: "rev-b", kind: "verification", blind: true });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ owner: "owner-b", caseNumber: "BLIND-1", reviewer: "rev-b", blind: true, state: "open", files: [{ fileId: f1 }, { fileId: f2 }] });
      const id = created.body.id as string;
      expect((await call("/review/inbox/rev-b", "rev-b")).body.reviews.map((review: Json) => review.id)).toEqual([id]);
      const blind = await call(`/review/r/${id}`, "rev-b");
      expect(blind.status).toBe(200);
      expect(blind.body.files[0].annotations).toMatchObject({ leftCase: "BLIND-1" });
      expect(blind.body.files[0].withheld).toEqual(["supportLevel", "classType", "customClass", "classNote", "additionalNotes", "hasSubclass", "includeConfirmation", "confirmationData"]);
      // No hash of the pinned annotations either: from it and the fields shown, the few possible conclusions could be tried.
      expect(blind.body.files.map((file: Json) => file.sha256)).toEqual([null, null]);
      expect(blind.body.review.files.map((file: Json) => file.sha256)).toEqual([null, null]);
      expect((await call("/review/inbox/rev-b", "rev-b")).body.reviews[0].files.map((file: Json) => file.sha256)).toEqual([null, null]);
      expect(JSON.stringify(blind.body)).not.toMatch(/blind-secret/);
      // The signed image URL of the owner's image answers its bytes.
      const image = await fetch(blind.body.files[0].imageUrl as string);
      expect(image.status).toBe(200);
      expect(image.headers.get("content-type")).toBe("image/png");
      // Signing before the conclusion: 409; one conclusion per file.
      expect((await post(`/review/r/${id}/signatures`, "rev-b", { fileId: f1, meaning: "verified", printedName: "Rita Reviewer" })).status).toBe(409);
      expect((await post(`/review/r/${id}/conclusions`, "rev-b", { fileId: f1, supportLevel: "ID", classType: "Bullet" })).status).toBe(201);
      expect((await post(`/review/r/${id}/conclusions`, "rev-b", { fileId: f1, supportLevel: "Exclusion" })).status).toBe(409);
      const opened = await call(`/review/r/${id}`, "rev-b");
      expect(opened.body.files[0].annotations).toMatchObject({ supportLevel: "ID", additionalNotes: `blind-secret-notes ${f1}` });
      expect(opened.body.files[1].annotations.supportLevel).toBeUndefined();
      expect(opened.body.files.map((file: Json) => file.sha256)).toEqual([created.body.files[0].sha256, null]);
      const signed = await post(`/review/r/${id}/signatures`, "rev-b", { fileId: f1, meaning: "verified", printedName: "Rita Reviewer", signer: "owner-b" });
      expect(signed.status).toBe(201);
      expect(signed.body).toMatchObject({ fileId: f1, signer: "rev-b", printedName: "Rita Reviewer", meaning: "verified", reviewId: id, record: { key: `owner-b/BLIND-1/${f1}/data.json`, sha256: created.body.files[0].sha256 } });
      // Verified outside the service: the published JWKS alone, fetched without credentials.
      const jwks = await (await fetch(`${url}/review/keys`)).json() as { keys: Json[] };
      expect(jwks.keys.map((key) => key.kid)).toEqual(["review-key-1"]);
      expect(jwks.keys[0]!.d).toBeUndefined();
      const { jws, ...facts } = signed.body;
      const { payload } = await compactVerify(jws as string, createLocalJWKSet(jwks as never));
      expect(new TextDecoder().decode(payload)).toBe(canonicalJson(facts));
      // Pinned at version 1 of the history; the confirmation is version 2, written by the reviewer.
      expect(signed.body.record.version).toBe(1);
      const history = await call(`/data/owner-b/BLIND-1/${f1}/data.json?history`, "owner-b", { headers: dataKey });
      expect(history.body.versions.map((version: Json) => [version.version, version.writtenBy])).toEqual([[1, "owner-b"], [2, "rev-b"]]);
      const pinnedBytes = await fetch(`${url}/data/owner-b/BLIND-1/${f1}/data.json?version=1`, { headers: { ...dataKey, "X-Identity-Token": await token("owner-b") } });
      const { createHash } = await import("node:crypto");
      expect(createHash("sha256").update(new Uint8Array(await pinnedBytes.arrayBuffer())).digest("hex")).toBe(signed.body.record.sha256);
      // The v1.0 confirmation in the owner's annotations, read back through the data worker.
      const stored = await call(`/data/owner-b/BLIND-1/${f1}/data.json`, "owner-b", { headers: dataKey });
      expect(stored.body).toMatchObject({ includeConfirmation: true, supportLevel: "ID", confirmationData: { fullName: "Rita Reviewer", confirmedBy: "rev-b", confirmedAt: signed.body.signedAt, confirmationId: expect.stringMatching(/^CONF-[A-Z0-9]{10}$/) } });
      expect((await call(`/review/r/${id}/verify`, "owner-b")).body).toEqual({ signatures: [{ fileId: f1, status: "valid" }] });
      expect((await post(`/review/r/${id}/conclusions`, "rev-b", { fileId: f2, supportLevel: "Inconclusive" })).status).toBe(201);
      expect((await post(`/review/r/${id}/signatures`, "rev-b", { fileId: f2, meaning: "disagreed", printedName: "Rita Reviewer" })).status).toBe(201);
      const listed = await call("/review/cases/owner-b/BLIND-1", "owner-b");
      expect(listed.body.reviews[0]).toMatchObject({ id, state: "completed", signatures: [{ fileId: f1, meaning: "verified" }, { fileId: f2, meaning: "disagreed" }] });
      // Each step in both trails; the reviewer's holds none of the owner's conclusions.
      for (const uid of ["owner-b", "rev-b"]) {
        const steps = (await trail(uid)).filter((entry) => entry.details?.reviewDetails?.reviewId === id).map((entry) => entry.details.reviewDetails.step as string).sort();
        expect(steps, uid).toEqual(["completion", "conclusion", "conclusion", "request", "signature", "signature"]);
      }
      expect(JSON.stringify(await trail("rev-b"))).not.toMatch(/blind-secret/);
      // A later amendment by the owner makes the signature stale.
      expect((await call(`/data/owner-b/BLIND-1/${f1}/data.json`, "owner-b", { method: "PUT", headers: dataKey, body: JSON.stringify({ ...stored.body, supportLevel: "Exclusion" }) })).status).toBe(200);
      expect((await call(`/review/r/${id}/verify`, "rev-b")).body.signatures).toEqual([{ fileId: f1, status: "stale", reason: expect.any(String) }, { fileId: f2, status: "valid" }]);
    }, 60_000);

    it(t("the open workflow: the owner's conclusions shown at once, signed without a conclusion; cancellation"), async () => {
      const [f1] = await ownerCase("owner-o", "OPEN-1", 1);
      expect((await call("/review/inbox/rev-o", "rev-o")).status).toBe(200);
      const created = await post("/review/cases/owner-o/OPEN-1", "owner-o", { reviewer: "rev-o", kind: "technical", blind: false });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      expect((await call(`/review/r/${id}`, "rev-o")).body.files[0].annotations).toMatchObject({ supportLevel: "ID", classNote: "blind-secret-class" });
      const signed = await post(`/review/r/${id}/signatures`, "rev-o", { fileId: f1, meaning: "reviewed", printedName: "Otto Open" });
      expect(signed.status).toBe(201);
      expect((await call(`/review/r/${id}`, "owner-o")).body.review).toMatchObject({ state: "completed" });
      // A reviewed signature writes no confirmation.
      expect((await call(`/data/owner-o/OPEN-1/${f1}/data.json`, "owner-o", { headers: dataKey })).body).toMatchObject({ includeConfirmation: false });
      const other = (await post("/review/cases/owner-o/OPEN-1", "owner-o", { reviewer: "rev-o", kind: "technical", blind: false })).body.id as string;
      expect((await call(`/review/r/${other}`, "rev-o", { method: "DELETE" })).status).toBe(403);
      expect((await call(`/review/r/${other}`, "owner-o", { method: "DELETE" })).body).toMatchObject({ state: "cancelled" });
      expect((await call(`/review/r/${other}`, "owner-o", { method: "DELETE" })).status).toBe(409);
      expect((await post(`/review/r/${other}/signatures`, "rev-o", { fileId: f1, meaning: "reviewed", printedName: "Otto Open" })).status).toBe(409);
    }, 60_000);

    it(t("a reviewer known only by their token's claims can be asked once they used any worker (here the data worker), no review route needed; one the service never saw is a 400 saying so"), async () => {
      await ownerCase("owner-t", "TOK-1", 1);
      const ask = (reviewer: string) => post("/review/cases/owner-t/TOK-1", "owner-t", { reviewer, kind: "verification", blind: false });
      expect(await ask("rev-t")).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR", details: { field: "reviewer" }, message: expect.stringContaining("lab is not known") } });
      // The reviewer signs in to the client, which reads their cases: that request states their lab and role.
      expect((await call("/data/rev-t/ANY-1/data.json", "rev-t", { headers: dataKey })).status).toBe(200);
      const asked = await ask("rev-t");
      expect(asked.status, JSON.stringify(asked.body)).toBe(201);
      expect((await call("/review/inbox/rev-t", "rev-t")).body.reviews.map((review: Json) => review.id)).toEqual([asked.body.id]);
    }, 60_000);

    it(t("refusals: outside the lab, no role, the owner reviewing, a stranger, a stale authentication, an amended file"), async () => {
      const [f1, f2] = await ownerCase("owner-r", "REF-1");
      for (const uid of ["xrev-r", "plain-r", "rev-r"]) expect((await call(`/review/inbox/${uid}`, uid)).status).toBe(200);
      const ask = (reviewer: string) => post("/review/cases/owner-r/REF-1", "owner-r", { reviewer, kind: "verification", blind: false });
      expect(await ask("xrev-r")).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR", message: expect.stringContaining("not in your lab") } });
      expect(await ask("plain-r")).toMatchObject({ status: 400, body: { message: expect.stringContaining("role reviewer") } });
      expect(await ask("owner-r")).toMatchObject({ status: 400, body: { details: { field: "reviewer" } } });
      const id = (await ask("rev-r")).body.id as string;
      // The owner cannot act as the reviewer; a stranger is refused everywhere, with an entry in their own trail.
      expect((await post(`/review/r/${id}/conclusions`, "owner-r", { fileId: f1, supportLevel: "ID" })).status).toBe(403);
      for (const [path, method] of [[`/review/r/${id}`, "GET"], [`/review/r/${id}/verify`, "GET"], [`/review/r/${id}/signatures`, "POST"], [`/review/r/${id}`, "DELETE"], ["/review/cases/owner-r/REF-1", "GET"], ["/review/inbox/rev-r", "GET"]] as const) {
        const refused = await call(path, "rev-stranger", { method, ...(method === "POST" ? { body: JSON.stringify({ fileId: f1, meaning: "verified", printedName: "S" }) } : {}) });
        expect(refused.status, `${method} ${path}`).toBe(403);
        expect(refused.body.code).toBe("FORBIDDEN");
      }
      expect((await trail("rev-stranger")).filter((entry) => entry.action === "security-violation")).toHaveLength(6);
      // Stale authentication: auth_time too old, or none.
      const sign = (claims: Record<string, unknown> = {}, fileId = f1) => post(`/review/r/${id}/signatures`, "rev-r", { fileId, meaning: "verified", printedName: "Rita Reviewer" }, claims);
      expect(await sign({ auth_time: seconds() - 400 })).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED", details: { reason: "reauthentication required" } } });
      expect(await sign({ auth_time: undefined })).toMatchObject({ status: 401, body: { details: { reason: "reauthentication required" } } });
      // An amended file: 409, and the review shows it changed.
      const amended = { ...annotations("REF-1", f1!), supportLevel: "Exclusion" };
      expect((await call(`/data/owner-r/REF-1/${f1}/data.json`, "owner-r", { method: "PUT", headers: dataKey, body: JSON.stringify(amended) })).status).toBe(200);
      expect(await sign()).toMatchObject({ status: 409, body: { code: "CONFLICT", details: { changed: true } } });
      expect((await call(`/review/r/${id}`, "rev-r")).body.review.files).toEqual([expect.objectContaining({ fileId: f1, changed: true }), expect.objectContaining({ fileId: f2, changed: false })]);
      // A second conclusion on a file.
      expect((await post(`/review/r/${id}/conclusions`, "rev-r", { fileId: f2, supportLevel: "ID" })).status).toBe(201);
      expect((await post(`/review/r/${id}/conclusions`, "rev-r", { fileId: f2, supportLevel: "ID" })).status).toBe(409);
    }, 60_000);

    it(t("attacks: a reviewer reads no other lab's case, signs for no one else, replays no signature, sees no blind conclusion through another route"), async () => {
      const [f1, f2] = await ownerCase("owner-a", "ATT-1");
      const [g1 = ""] = await ownerCase("xowner-a", "OTHER-LAB", 1);
      expect((await call("/review/inbox/rev-a", "rev-a")).status).toBe(200);
      const id = (await post("/review/cases/owner-a/ATT-1", "owner-a", { reviewer: "rev-a", kind: "verification", blind: true })).body.id as string;
      // Another lab's case: not through the data worker, the image worker, nor a review it is no party to.
      expect((await call(`/data/xowner-a/OTHER-LAB/${g1}/data.json`, "rev-a", { headers: dataKey })).status).toBe(403);
      expect((await call("/review/cases/xowner-a/OTHER-LAB", "rev-a")).status).toBe(403);
      expect((await post("/review/cases/xowner-a/OTHER-LAB", "rev-a", { reviewer: "rev-a", kind: "verification", blind: false })).status).toBe(403);
      // The blind conclusions: not through the data worker, the image worker, the audit trail, nor the PDF worker (which reads no stored data).
      for (const path of [`/data/owner-a/ATT-1/${f1}/data.json`, "/data/owner-a/ATT-1/data.json"]) expect((await call(path, "rev-a", { headers: dataKey })).status).toBe(403);
      expect((await call(`/image/${encodeURIComponent(`${url}/image/delivery/${f1}/public`)}`, "rev-a", { headers: { Authorization: `Bearer ${SECRETS.IMAGES_API_TOKEN}` } })).status).toBe(403);
      expect((await call("/audit/audit/?userId=owner-a", "rev-a", { headers: dataKey })).status).toBe(403);
      expect((await call("/data/audit/?userId=owner-a", "rev-a", { headers: dataKey })).status).toBe(403);
      // Nor through the exchange worker: exports (ZIP, JSON, CSV, every case), the confirmation export, a sealed export, the history of a key.
      for (const path of ["/exchange/owner-a/cases/ATT-1", "/exchange/owner-a/cases/ATT-1?format=json", "/exchange/owner-a/cases/ATT-1?format=csv", "/exchange/owner-a/cases", "/exchange/owner-a/cases/ATT-1/confirmations", `/data/owner-a/ATT-1/${f1}/data.json?history`, `/data/owner-a/ATT-1/${f1}/data.json?version=1`]) {
        expect((await call(path, "rev-a", { headers: dataKey })).status, path).toBe(403);
      }
      expect((await call("/exchange/owner-a/cases/ATT-1/sealed", "rev-a", { method: "POST", headers: { ...dataKey, "Content-Type": "application/json" }, body: JSON.stringify({ recipient: { kty: "EC", crv: "P-256", x: "x", y: "y" } }) })).status).toBe(403);
      for (const path of ["/review/inbox/rev-a", `/review/r/${id}`, `/review/r/${id}/verify`]) expect(JSON.stringify((await call(path, "rev-a")).body), path).not.toMatch(/blind-secret|"supportLevel":"ID"/);
      expect(JSON.stringify(await trail("rev-a"))).not.toMatch(/blind-secret/);
      // Sign for someone else: only the named reviewer signs, and as themselves.
      expect((await post(`/review/r/${id}/conclusions`, "rev-a2", { fileId: f1, supportLevel: "ID" })).status).toBe(403);
      expect((await post(`/review/r/${id}/conclusions`, "rev-a", { fileId: f1, supportLevel: "ID" })).status).toBe(201);
      const signed = await post(`/review/r/${id}/signatures`, "rev-a", { fileId: f1, meaning: "verified", printedName: "Rita Reviewer", signer: "rev-a2", record: { key: `owner-a/ATT-1/${f2}/data.json` } });
      expect(signed.body).toMatchObject({ signer: "rev-a", record: { key: `owner-a/ATT-1/${f1}/data.json` } });
      // Replayed onto another file or version, the signature no longer verifies against the published keys.
      const jwks = createLocalJWKSet(await (await fetch(`${url}/review/keys`)).json() as never);
      const { jws, ...facts } = signed.body;
      const payload = new TextDecoder().decode((await compactVerify(jws as string, jwks)).payload);
      expect(payload).toBe(canonicalJson(facts));
      for (const replayed of [{ ...facts, fileId: f2, record: { ...facts.record, key: `owner-a/ATT-1/${f2}/data.json` } }, { ...facts, record: { ...facts.record, sha256: "0".repeat(64), version: 2 } }]) {
        expect(payload).not.toBe(canonicalJson(replayed));
      }
      // The same signature cannot be placed twice, nor on the other file through the API.
      expect((await post(`/review/r/${id}/signatures`, "rev-a", { fileId: f1, meaning: "verified", printedName: "Rita Reviewer" })).status).toBe(409);
      // The report prints the confirmation signed only over the results its seal binds: pasted into other results, unsigned.
      const confirmed = (await call(`/data/owner-a/ATT-1/${f1}/data.json`, "owner-a", { headers: dataKey })).body;
      const imageUrls = (await call(`/review/r/${id}`, "owner-a")).body.files.map((file: Json) => file.imageUrl as string);
      const report = async (annotationData: Json, imageUrl: string) => {
        const response = await fetch(`${url}/pdf`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ imageUrl, caseNumber: "ATT-1", annotationData, activeAnnotations: [] }) });
        expect(response.status).toBe(200);
        return pdfText(new Uint8Array(await response.arrayBuffer())).replace(/\s+/g, " ");
      };
      expect(await report(confirmed, imageUrls[0])).toContain(`verified, electronically signed by rev-a for file ${(f1 ?? "").slice(0, 8)}`);
      for (const [annotationData, imageUrl] of [[{ ...confirmed, supportLevel: "Exclusion" }, imageUrls[0]], [confirmed, imageUrls[1]], [confirmed, GREY_PNG]] as const) {
        expect(await report(annotationData, imageUrl)).not.toContain("electronically signed");
      }
      // Another user's image listed in the owner's own case: the review gives no URL of it.
      await call("/data/owner-a/ATT-2/data.json", "owner-a", { method: "PUT", headers: dataKey, body: JSON.stringify({ caseNumber: "ATT-2", createdAt: NOW, files: [{ id: g1, originalFilename: "theirs.png", uploadedAt: NOW }] }) });
      await call(`/data/owner-a/ATT-2/${g1}/data.json`, "owner-a", { method: "PUT", headers: dataKey, body: JSON.stringify(annotations("ATT-2", g1)) });
      const listed = await post("/review/cases/owner-a/ATT-2", "owner-a", { reviewer: "rev-a", kind: "verification", blind: false });
      expect(listed.status).toBe(201);
      const view = await call(`/review/r/${listed.body.id as string}`, "owner-a");
      expect(view.body.files[0]).toMatchObject({ fileId: g1 });
      expect(view.body.files[0].imageUrl).toBeUndefined();
    }, 60_000);

    it(t("the typed client: request, inbox, read, conclude, sign, verify, keys; refusals as ServiceClientError"), async () => {
      const [f1] = await ownerCase("owner-c", "CLIENT-1", 1);
      const as = (uid: string) => createClient({ baseUrl: url, dataKey: SECRETS.R2_KEY_SECRET, identityToken: () => token(uid) });
      const owner = as("owner-c");
      const reviewer = as("rev-c");
      expect(await reviewer.review.inbox("rev-c")).toEqual([]);
      const review = await owner.review.request("owner-c", "CLIENT-1", { reviewer: "rev-c", kind: "verification", blind: true });
      expect((await reviewer.review.inbox("rev-c")).map((each) => each.id)).toEqual([review.id]);
      expect((await reviewer.review.get(review.id)).files[0]!.withheld).toContain("supportLevel");
      const refused = await reviewer.review.sign(review.id, { fileId: f1!, meaning: "verified", printedName: "Cleo Client" }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ServiceClientError);
      expect(refused).toMatchObject({ status: 409, code: "CONFLICT" });
      expect(await reviewer.review.conclude(review.id, { fileId: f1!, supportLevel: "ID" })).toMatchObject({ fileId: f1, reviewer: "rev-c" });
      const signature = await reviewer.review.sign(review.id, { fileId: f1!, meaning: "verified", printedName: "Cleo Client" });
      const { jws, ...facts } = signature;
      const { payload } = await compactVerify(jws, createLocalJWKSet(await createClient({ baseUrl: url }).review.keys() as never));
      expect(new TextDecoder().decode(payload)).toBe(canonicalJson(facts));
      expect(await owner.review.verify(review.id)).toEqual({ signatures: [{ fileId: f1, status: "valid" }] });
      expect((await owner.review.ofCase("owner-c", "CLIENT-1"))[0]).toMatchObject({ id: review.id, state: "completed" });
      expect(await owner.review.cancel(review.id).catch((err: unknown) => err)).toMatchObject({ status: 409 });
    }, 60_000);

    it(t("legal holds by an identity token with role admin (the claim, or the record the admin key set): placed, listed, lifted on another user's case; other tokens 403"), async () => {
      const userKey = { "X-Custom-Auth-Key": SECRETS.USER_DB_AUTH };
      const holds = (uid: string, as: string, method = "GET", body?: unknown, claims?: Record<string, unknown>) =>
        call(`/user/${uid}/holds`, as, { method, headers: userKey, ...(body === undefined ? {} : { body: JSON.stringify(body) }), ...(claims === undefined ? {} : { claims }) });
      const admin = { roles: ["admin"] };
      expect(await holds("owner-h", "boss-h", "PUT", { caseNumber: "TH-1", reason: "State v. Doe" }, admin)).toMatchObject({ status: 201, body: { userUid: "owner-h", holds: [{ caseNumber: "TH-1", heldBy: "boss-h" }] } });
      expect(await holds("owner-h", "boss-h", "GET", undefined, admin)).toMatchObject({ status: 200, body: { holds: [{ caseNumber: "TH-1" }] } });
      // The held case's document cannot be deleted by its owner.
      await call("/data/owner-h/TH-1/data.json", "owner-h", { method: "PUT", headers: dataKey, body: JSON.stringify({ caseNumber: "TH-1" }) });
      expect((await call("/data/owner-h/TH-1/data.json", "owner-h", { method: "DELETE", headers: dataKey })).status).toBe(409);
      // Neither the owner nor another examiner nor a reviewer places, reads or lifts a hold.
      for (const as of ["owner-h", "other-h", "rev-h"]) {
        expect((await holds("owner-h", as)).status, as).toBe(403);
        expect((await holds("owner-h", as, "DELETE", { caseNumber: "TH-1" })).status, as).toBe(403);
        expect((await holds(as, as, "PUT", { caseNumber: "TH-2", reason: "mine" })).status, as).toBe(403);
      }
      // A token stating no roles: the record's, which only an administrator sets.
      const noRoles = { roles: undefined };
      expect((await holds("owner-h", "chief-h", "DELETE", { caseNumber: "TH-1" }, noRoles)).status).toBe(403);
      const record = await fetch(`${url}/user/chief-h`, { method: "PUT", headers: { ...userKey, "X-Admin-Key": SECRETS.ADMIN_AUTH }, body: JSON.stringify({ email: "chief@lab.example", firstName: "C", lastName: "H", company: "Lab", permitted: true, roles: ["admin"] }) });
      expect(record.status).toBe(201);
      expect(await holds("owner-h", "chief-h", "DELETE", { caseNumber: "TH-1" }, noRoles)).toMatchObject({ status: 200, body: { holds: [] } });
      expect((await call("/data/owner-h/TH-1/data.json", "owner-h", { method: "DELETE", headers: dataKey })).status).toBe(200);
      // The history prune is an administrator's too: 409 here (no HISTORY_RETENTION_DAYS), an examiner's 403.
      expect((await call("/data/history/prune", "boss-h", { method: "POST", headers: dataKey, claims: admin })).status).toBe(409);
      expect((await call("/data/history/prune", "owner-h", { method: "POST", headers: dataKey })).status).toBe(403);
    }, 60_000);

    it(t("key-only callers and the worker key alone are refused; /review/keys and /openapi.json are open"), async () => {
      const refused = await fetch(`${url}/review/inbox/rev-b`, { headers: dataKey });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as Json).message).toContain("X-Identity-Token");
      const doc = await (await fetch(`${url}/openapi.json`)).json() as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/review/r/{id}/signatures", "/review/keys"]));
    });
  });
}
