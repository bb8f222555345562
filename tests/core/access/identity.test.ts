/**
 * Identity-token mode (issue 7, CONTRACT "Identity tokens"): tokens verified against a local
 * JWKS server with keys made here; ownership of user, data, audit and image paths; the keys
 * worker on a token alone; the admin key; and the service's own audit entries.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, SignJWT } from "jose";
import { AUDIENCE, b64url, ISSUER, startIdentityProvider } from "../../helpers/identity.ts";
import { dataHeaders, fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { fixture, uploadForm } from "../../helpers/images.ts";
import { parseConfig } from "../../../src/core/config/mod.ts";
import { FIREBASE_JWKS_URL } from "../../../src/core/identity/identity-token.ts";

type Provider = Awaited<ReturnType<typeof startIdentityProvider>>;

const NOW = "2026-11-22T12:00:00Z";
const userKey = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
const bearer = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };
const ADMIN = "admin-key-0123456789";

describe("identity tokens (AUTH_JWKS_URL)", () => {
  let idp: Provider;
  beforeAll(async () => {
    idp = await startIdentityProvider();
  });
  afterAll(async () => await idp.close());

  const service = (env: Record<string, string> = {}) => {
    const clock = fixedClock(NOW);
    const built = testService(
      { AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, ADMIN_AUTH: ADMIN, RATE_LIMITS: "off", ...env },
      { clock },
    );
    return { ...built, clock };
  };
  const as = async (uid: string, headers: Record<string, string> = {}) => ({ ...headers, "X-Identity-Token": await idp.token(uid) });
  const trail = async (app: ReturnType<typeof service>["app"], uid: string) => {
    const response = await app.request(`/audit/audit/?userId=${uid}`, { headers: { ...dataHeaders, "X-Admin-Key": ADMIN } });
    expect(response.status).toBe(200);
    return ((await response.json()) as { entries: { action: string; result: string; userId: string; details: { securityDetails?: Record<string, unknown> } }[] }).entries;
  };

  it("own paths answer 200; the worker key alone is no longer enough", async () => {
    const { app } = service();
    const u1 = await as("u1", dataHeaders);
    expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: u1, body: '{"caseNumber":"C-1"}' })).status).toBe(200);
    expect(await (await app.request("/data/u1/C-1/data.json", { headers: u1 })).json()).toEqual({ caseNumber: "C-1" });
    const missing = await app.request("/data/u1/C-1/data.json", { headers: dataHeaders });
    expect(missing.status).toBe(403);
    expect(await missing.json()).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("X-Identity-Token") });
    // The user worker refuses with 401 (spec 5.2), also for a missing token.
    expect((await app.request("/user/u1", { headers: userKey })).status).toBe(401);
    expect((await app.request("/user/u1", { method: "PUT", headers: await as("u1", userKey), body: JSON.stringify({ email: "u1@lab.example", firstName: "A", lastName: "B", company: "Lab", permitted: false }) })).status).toBe(201);
    expect((await app.request("/user/u1", { headers: await as("u1", userKey) })).status).toBe(200);
    const entry = { timestamp: NOW, userId: "u1", userEmail: "u1@lab.example", action: "case-create", result: "success", details: {} };
    expect((await app.request("/audit/audit/?userId=u1", { method: "POST", headers: u1, body: JSON.stringify(entry) })).status).toBe(200);
    expect((await app.request("/data/audit/?userId=u1", { headers: u1 })).status).toBe(200);
  });

  it("another user's user, data, audit and image paths are 403, each leaving a security-violation entry", async () => {
    const { app } = service();
    const u2Image = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "u2.png"), headers: await as("u2", bearer) });
    expect(u2Image.status).toBe(200);
    const { result } = (await u2Image.json()) as { result: { id: string; variants: string[] } };
    const entry = { timestamp: NOW, userId: "u2", userEmail: "", action: "case-create", result: "success", details: {} };
    const attempts: [string, RequestInit][] = [
      ["/user/u2", { headers: await as("u1", userKey) }],
      ["/user/u2", { method: "DELETE", headers: await as("u1", userKey) }],
      ["/user/u2/cases", { method: "PUT", headers: await as("u1", userKey), body: '{"cases":[{"caseNumber":"C-9"}]}' }],
      ["/data/u2/C-1/data.json", { headers: await as("u1", dataHeaders) }],
      ["/data/u2/C-1/data.json", { method: "PUT", headers: await as("u1", dataHeaders), body: "{}" }],
      ["/data/u2/C-1/data.json", { method: "DELETE", headers: await as("u1", dataHeaders) }],
      ["/data/audit/?userId=u2", { headers: await as("u1", dataHeaders) }],
      ["/audit/audit/?userId=u2", { method: "POST", headers: await as("u1", dataHeaders), body: JSON.stringify(entry) }],
      // Own trail in the query, someone else's in the entry.
      ["/audit/audit/?userId=u1", { method: "POST", headers: await as("u1", dataHeaders), body: JSON.stringify(entry) }],
      [`/image/${result.variants[0]}`, { headers: await as("u1", bearer) }],
      [`/image/${result.id}`, { method: "DELETE", headers: await as("u1", bearer) }],
    ];
    for (const [path, init] of attempts) {
      const response = await app.request(path, init);
      expect(response.status, `${init.method ?? "GET"} ${path}`).toBe(403);
      expect(await response.json()).toMatchObject({ code: "FORBIDDEN" });
    }
    const violations = (await trail(app, "u1")).filter((e) => e.action === "security-violation");
    expect(violations).toHaveLength(attempts.length);
    expect(violations.every((e) => e.result === "blocked" && e.details.securityDetails?.source === "service")).toBe(true);
    // The caller sent a uid for the other paths, which the entry names; for an image it sent only the id,
    // and its own trail (which it may read) must not tell it whose image that is.
    const imageViolations = violations.filter((e) => JSON.stringify(e.details).includes(result.id));
    expect(imageViolations).toHaveLength(2);
    for (const violation of imageViolations) {
      expect(JSON.stringify(violation.details)).not.toContain('"u2"');
      expect(violation.details.securityDetails).toMatchObject({ reason: "cross-user access", imageId: result.id });
    }
    // The owner still reaches the image.
    expect((await app.request(`/image/${result.variants[0]}`, { headers: await as("u2", bearer) })).status).toBe(200);
    expect((await app.request(`/image/${result.id}`, { method: "DELETE", headers: await as("u2", bearer) })).status).toBe(200);
  });

  it("an image without a recorded owner is the admin's: listing it in one's own case does not make it one's own", async () => {
    const { app } = service();
    // Uploaded with the admin key: no owner in its metadata (as images from before identity mode).
    const uploaded = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "old.png"), headers: { ...bearer, "X-Admin-Key": ADMIN } });
    const { result } = (await uploaded.json()) as { result: { id: string; variants: string[] } };
    const u1 = await as("u1", userKey);
    await app.request("/user/u1", { method: "PUT", headers: u1, body: JSON.stringify({ email: "u1@lab.example", firstName: "A", lastName: "B", company: "Lab", permitted: false }) });
    await app.request("/user/u1/cases", { method: "PUT", headers: u1, body: '{"cases":[{"caseNumber":"C-1"}]}' });
    await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: await as("u1", dataHeaders), body: JSON.stringify({ files: [{ id: result.id }] }) });
    expect((await app.request(`/image/${result.variants[0]}`, { headers: await as("u1", bearer) })).status).toBe(403);
    expect((await app.request(`/image/${result.id}`, { method: "DELETE", headers: await as("u1", bearer) })).status).toBe(403);
    expect((await app.request(`/image/${result.variants[0]}`, { headers: { ...bearer, "X-Admin-Key": ADMIN } })).status).toBe(200);
  });

  it("deleting one's own account never deletes another user's image listed in one's case", async () => {
    const { app } = service();
    const victim = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "victim.png"), headers: await as("u2", bearer) });
    const { result: theirs } = (await victim.json()) as { result: { id: string; variants: string[] } };
    const mine = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "mine.png"), headers: await as("u1", bearer) });
    const { result: own } = (await mine.json()) as { result: { id: string; variants: string[] } };
    const u1 = await as("u1", userKey);
    await app.request("/user/u1", { method: "PUT", headers: u1, body: JSON.stringify({ email: "u1@lab.example", firstName: "A", lastName: "B", company: "Lab", permitted: false }) });
    await app.request("/user/u1/cases", { method: "PUT", headers: u1, body: '{"cases":[{"caseNumber":"C-1"}]}' });
    await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: await as("u1", dataHeaders), body: JSON.stringify({ files: [{ id: theirs.id }, { id: own.id }] }) });
    expect((await app.request("/user/u1", { method: "DELETE", headers: u1 })).status).toBe(200);
    expect((await app.request(`/image/${theirs.variants[0]}`, { headers: await as("u2", bearer) })).status).toBe(200);
    expect((await app.request(`/image/${own.variants[0]}`, { headers: { ...bearer, "X-Admin-Key": ADMIN } })).status).toBe(404);
  });

  it("rejects expired, not-yet-valid, wrong issuer, wrong audience, wrong key, alg none, HS256 and malformed tokens", async () => {
    const { app } = service();
    const now = Math.floor(new Date(NOW).getTime() / 1000);
    const stranger = await generateKeyPair("RS256");
    const unsigned = `${b64url({ alg: "none", typ: "JWT" })}.${b64url({ sub: "u1", iss: ISSUER, aud: AUDIENCE, exp: now + 60 })}.`;
    const hs256 = await new SignJWT({ sub: "u1", iss: ISSUER, aud: AUDIENCE, exp: now + 60 })
      .setProtectedHeader({ alg: "HS256", kid: "k1" })
      .sign(new TextEncoder().encode("a shared secret of at least 32 bytes!!"));
    const cases: [string, string][] = [
      [await idp.token("u1", { exp: now - 120 }), "expired"],
      [await idp.token("u1", { nbf: now + 120 }), "not yet valid"],
      [await idp.token("u1", { iss: "https://evil.example" }), "wrong issuer"],
      [await idp.token("u1", { aud: "someone-else" }), "wrong audience"],
      [await idp.token("u1", {}, { pair: stranger }), "bad signature"],
      [await idp.token("u1", {}, { kid: "no-such-key" }), "unknown key"],
      [unsigned, "algorithm not allowed"],
      [hs256, "algorithm not allowed"],
      [await idp.token("u1", { exp: undefined }), "claim exp missing"],
      ["not.a.token", "malformed"],
      ["abc", "malformed"],
    ];
    for (const [token, reason] of cases) {
      const response = await app.request("/data/u1/C-1/data.json", { headers: { ...dataHeaders, "X-Identity-Token": token } });
      expect(response.status, reason).toBe(403);
      const body = (await response.json()) as { message: string };
      expect(body.message, reason).toContain(reason);
      // The token itself never comes back.
      expect(body.message).not.toContain(token.slice(0, 20));
    }
    // Within the 30 s clock skew an expired-just-now token still passes.
    const justExpired = await idp.token("u1", { exp: now - 10 });
    expect((await app.request("/data/u1/C-1/data.json", { headers: { ...dataHeaders, "X-Identity-Token": justExpired } })).status).toBe(200);
  });

  it("a rotated key (new key id) is picked up without a restart; the set is kept as long as Cache-Control says", async () => {
    const local = await startIdentityProvider({ cacheControl: "public, max-age=120" });
    try {
      const clock = fixedClock(NOW);
      const { app } = testService({ AUTH_JWKS_URL: local.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, RATE_LIMITS: "off" }, { clock });
      const get = async (token: string) => (await app.request("/data/u1/C-1/data.json", { headers: { ...dataHeaders, "X-Identity-Token": token } })).status;
      expect(await get(await local.token("u1"))).toBe(200);
      expect(await get(await local.token("u1"))).toBe(200);
      expect(local.fetches).toBe(1);
      clock.set("2026-11-22T12:01:00Z");
      expect(await get(await local.token("u1"))).toBe(200);
      expect(local.fetches).toBe(1); // within max-age=120
      clock.set("2026-11-22T12:02:01Z");
      expect(await get(await local.token("u1"))).toBe(200);
      expect(local.fetches).toBe(2); // max-age passed: fetched again

      await local.rotate("k2", "ES256");
      clock.set("2026-11-22T12:02:40Z"); // past the 30 s cooldown since the last fetch
      expect(await get(await local.token("u1"))).toBe(200);
      expect(local.fetches).toBe(3);
      // The old key is gone from the set: its tokens no longer pass once the set is refetched.
    } finally {
      await local.close();
    }
  });

  it("the keys worker hands allow-listed keys to a valid token without KEYS_AUTH, and to nothing else", async () => {
    const { app } = service();
    const withToken = await app.request("/keys/ACCOUNT_HASH", { headers: await as("u1") });
    expect(withToken.status).toBe(200);
    expect(await withToken.text()).toBe(KEYS.ACCOUNT_HASH);
    expect((await app.request("/keys/ACCOUNT_HASH", { headers: { "X-Custom-Auth-Key": KEYS.KEYS_AUTH } })).status).toBe(403);
    expect((await app.request("/keys/ACCOUNT_HASH", { headers: { "X-Identity-Token": "abc" } })).status).toBe(403);
    expect((await app.request("/keys/HMAC_KEY", { headers: await as("u1") })).status).toBe(404);
  });

  it("only the admin key raises an existing record's permitted; sign-up follows SELF_REGISTRATION (tests/client-compat/user.test.ts)", async () => {
    const { app } = service();
    const record = { email: "u1@lab.example", firstName: "A", lastName: "B", company: "Lab" };
    expect((await app.request("/user/u1", { method: "PUT", headers: await as("u1", userKey), body: JSON.stringify({ ...record, permitted: false }) })).status).toBe(201);
    const raise = await app.request("/user/u1", { method: "PUT", headers: await as("u1", userKey), body: '{"permitted":true}' });
    expect(raise.status).toBe(403);
    expect(await raise.json()).toMatchObject({ code: "FORBIDDEN", details: { field: "permitted" } });
    expect((await app.request("/user/u1", { method: "PUT", headers: await as("u1", userKey), body: '{"firstName":"Ana"}' })).status).toBe(200);
    const admin = await app.request("/user/u1", { method: "PUT", headers: { ...userKey, "X-Admin-Key": ADMIN }, body: '{"permitted":true}' });
    expect(admin.status).toBe(200);
    expect(await admin.json()).toMatchObject({ permitted: true, firstName: "Ana" });
    // Keeping permitted: true is not raising it.
    expect((await app.request("/user/u1", { method: "PUT", headers: await as("u1", userKey), body: '{"permitted":true,"company":"Lab 2"}' })).status).toBe(200);
  });

  it("a user who never signed up is held to what signing up would give them: SELF_REGISTRATION demo, permitted with MAX_CASES, closed", async () => {
    const putCase = async (app: ReturnType<typeof service>["app"], uid: string, caseNumber: string, body: unknown = { caseNumber, files: [] }) =>
      (await app.request(`/data/${uid}/${caseNumber}/data.json`, { method: "PUT", headers: await as(uid, dataHeaders), body: JSON.stringify(body) })).status;
    const demo = service({ SELF_REGISTRATION: "demo", DEMO_MAX_CASES: "2", DEMO_MAX_FILES_PER_CASE: "1" }).app;
    expect([await putCase(demo, "m1", "C-1"), await putCase(demo, "m1", "C-2"), await putCase(demo, "m1", "C-3")]).toEqual([200, 200, 403]);
    expect(await putCase(demo, "m1", "C-1", { caseNumber: "C-1", files: [{ id: "a" }, { id: "b" }] })).toBe(403);
    // An imported read-only case is not held to the limits, as for an account.
    expect(await putCase(demo, "m1", "R-1", { caseNumber: "R-1", isReadOnly: true, files: [] })).toBe(200);
    const permitted = service({ MAX_CASES: "1" }).app;
    expect([await putCase(permitted, "m1", "C-1"), await putCase(permitted, "m1", "C-2")]).toEqual([200, 403]);
    const closed = service({ SELF_REGISTRATION: "closed" }).app;
    const refused = await closed.request("/data/m1/C-1/data.json", { method: "PUT", headers: await as("m1", dataHeaders), body: "{}" });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("no account") });
    expect(await putCase(closed, "m1", "R-1", { caseNumber: "R-1", isReadOnly: true })).toBe(403);
    // Once an administrator creates the account, the user works as any other; the key-only application was never held.
    const record = { email: "m1@lab.example", firstName: "M", lastName: "One", company: "Lab", permitted: true };
    expect((await closed.request("/user/m1", { method: "PUT", headers: { ...userKey, "X-Admin-Key": ADMIN }, body: JSON.stringify(record) })).status).toBe(201);
    expect(await putCase(closed, "m1", "C-1")).toBe(200);
    expect((await closed.request("/data/m2/C-1/data.json", { method: "PUT", headers: { ...dataHeaders, "X-Admin-Key": ADMIN }, body: "{}" })).status).toBe(200);
  });

  it("the admin key acts on any user and every use is audited; a wrong admin key is refused", async () => {
    const { app } = service();
    const admin = { ...dataHeaders, "X-Admin-Key": ADMIN };
    expect((await app.request("/data/u2/C-1/data.json", { method: "PUT", headers: admin, body: "{}" })).status).toBe(200);
    expect((await app.request("/data/u2/C-1/data.json", { headers: admin })).status).toBe(200);
    expect((await app.request("/data/u2/C-1/data.json", { headers: { ...dataHeaders, "X-Admin-Key": "wrong" } })).status).toBe(403);
    const entries = await trail(app, "u2");
    const adminUses = entries.filter((e) => e.details.securityDetails?.actor === "admin");
    // PUT, GET, and the trail read itself.
    expect(adminUses.map((e) => e.action)).toEqual(["file-access", "file-access"]);
    expect(adminUses.every((e) => e.result === "success")).toBe(true);
    expect((await trail(app, "u2")).filter((e) => e.details.securityDetails?.actor === "admin")).toHaveLength(3);
  });

  it("the service writes file-upload, file-delete, pdf-generate, user-profile-update and user-account-delete entries", async () => {
    const { app } = service();
    const record = { email: "u1@lab.example", firstName: "A", lastName: "B", company: "Lab", permitted: false };
    await app.request("/user/u1", { method: "PUT", headers: await as("u1", userKey), body: JSON.stringify(record) });
    const uploaded = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "item 1.png"), headers: await as("u1", bearer) });
    const { result } = (await uploaded.json()) as { result: { id: string } };
    await app.request(`/image/${result.id}`, { method: "DELETE", headers: await as("u1", bearer) });
    const png = Buffer.from(fixture("sample.png")).toString("base64");
    const pdf = await app.request("/pdf/", {
      method: "POST",
      headers: await as("u1", { "Content-Type": "application/json" }),
      body: JSON.stringify({ imageUrl: `data:image/png;base64,${png}`, caseNumber: "C-7", annotationData: null, activeAnnotations: [] }),
    });
    expect(pdf.status).toBe(200);
    expect((await app.request("/user/u1", { method: "DELETE", headers: await as("u1", userKey) })).status).toBe(200);
    const entries = (await trail(app, "u1")).filter((e) => e.details.securityDetails?.source === "service" && e.details.securityDetails.actor === "u1");
    // The trail answers newest first.
    expect(entries.map((e) => e.action)).toEqual(["user-account-delete", "pdf-generate", "file-delete", "file-upload", "user-profile-update"]);
    expect(entries.every((e) => e.result === "success" && e.userId === "u1")).toBe(true);
    const upload = entries[3] as unknown as { userEmail: string; details: { fileDetails: Record<string, unknown> } };
    expect(upload.userEmail).toBe("u1@lab.example");
    expect(upload.details.fileDetails).toMatchObject({ fileId: result.id, originalFileName: "item 1.png", mimeType: "image/png" });
  });

  it("an identity provider that cannot be reached is a 503, not a pass", async () => {
    const { app } = testService({ AUTH_JWKS_URL: "http://127.0.0.1:9/jwks", AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, RATE_LIMITS: "off" });
    const response = await app.request("/data/u1/C-1/data.json", { headers: { ...dataHeaders, "X-Identity-Token": await idp.token("u1") } });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: "SERVER_ERROR" });
  });
});

describe("identity configuration", () => {
  it("Firebase needs only the project id; AUTH_JWKS_URL needs issuer and audience", () => {
    expect(parseConfig({ FIREBASE_PROJECT_ID: "lab-app" }).identity).toEqual({
      jwksUrl: FIREBASE_JWKS_URL,
      issuer: "https://securetoken.google.com/lab-app",
      audience: "lab-app",
      clockSkewSeconds: 30,
      labClaim: "lab",
      rolesClaim: "roles",
    });
    expect(() => parseConfig({ AUTH_JWKS_URL: "https://idp.example/jwks" })).toThrow(/AUTH_ISSUER, AUTH_AUDIENCE/);
    expect(parseConfig({}).identity).toBeUndefined();
  });

  it("without identity tokens nothing changes: the worker key alone reads any user's data", async () => {
    const { app } = testService({ RATE_LIMITS: "off" });
    expect((await app.request("/data/u2/C-1/data.json", { headers: dataHeaders })).status).toBe(200);
    expect((await app.request("/keys/ACCOUNT_HASH", { headers: { "X-Custom-Auth-Key": KEYS.KEYS_AUTH } })).status).toBe(200);
  });
});

describe("identity tokens: what users cannot do to the service's own records", () => {
  it("a client cannot pass an audit entry off as the service's, and admin uses on bad user ids still leave a trace", async () => {
    const idp = await startIdentityProvider();
    try {
      const { app } = testService({ AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, ADMIN_AUTH: ADMIN, RATE_LIMITS: "off" }, { clock: fixedClock(NOW) });
      const headers = { ...dataHeaders, "X-Identity-Token": await idp.token("u1") };
      const forged = { timestamp: NOW, userId: "u1", userEmail: "", action: "user-login", result: "success", details: { securityDetails: { source: "service", actor: "admin" } } };
      const refused = await app.request("/audit/audit/?userId=u1", { method: "POST", headers, body: JSON.stringify(forged) });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ details: { field: "details.securityDetails.source" } });
      const admin = { ...dataHeaders, "X-Admin-Key": ADMIN };
      expect((await app.request("/audit/audit/?userId=", { headers: admin })).status).toBe(400);
      expect((await app.request("/audit/audit/?userId=a%2Fb", { headers: admin })).status).toBe(400);
      const trail = await app.request("/audit/audit/?userId=_admin", { headers: admin });
      const entries = ((await trail.json()) as { entries: { result: string }[] }).entries;
      expect(entries.filter((e) => e.result === "failure")).toHaveLength(2);
      // No user may own the admin trail.
      expect((await app.request("/data/audit/?userId=_admin", { headers: { ...dataHeaders, "X-Identity-Token": await idp.token("_admin") } })).status).toBe(403);
    } finally {
      await idp.close();
    }
  });

  it("a key set the provider broke (an entry that is no key, a key whose material does not import) is a 503, not the caller's bad token", async () => {
    const idp = await startIdentityProvider();
    try {
      const token = await idp.token("u1");
      const { kid } = JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()) as { kid: string };
      for (const keys of [[1], [{ kty: "RSA", n: "AA", e: "AQAB", kid, alg: "RS256" }]]) {
        const broken: typeof fetch = () => Promise.resolve(Response.json({ keys }));
        const { app } = testService({ AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, RATE_LIMITS: "off" }, { fetch: broken });
        const response = await app.request("/data/u1/a.json", { headers: { ...dataHeaders, "X-Identity-Token": token } });
        expect(response.status, JSON.stringify(keys)).toBe(503);
        expect(await response.json()).toMatchObject({ code: "SERVER_ERROR", message: expect.stringMatching(/identity provider's key set/) });
      }
    } finally {
      await idp.close();
    }
  });

  it("a key set that cannot be fetched is asked again at most once per cooldown, not on every request", async () => {
    const idp = await startIdentityProvider({ cacheControl: "max-age=60" });
    const clock = fixedClock(NOW);
    let attempts = 0;
    const counting: typeof fetch = (input, init) => {
      attempts++;
      return fetch(input, init);
    };
    const { app } = testService({ AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, RATE_LIMITS: "off" }, { clock, fetch: counting });
    const token = await idp.token("u1");
    const get = async (t = token) => (await app.request("/data/u1/a.json", { headers: { ...dataHeaders, "X-Identity-Token": t } })).status;
    expect(await get()).toBe(200);
    await idp.close(); // the provider goes away
    clock.set("2026-11-22T12:01:01Z"); // the set has expired
    const statuses = await Promise.all(Array.from({ length: 20 }, () => get()));
    // The stale set keeps serving; nothing waits on the dead provider again before the cooldown.
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(await get(await idp.token("u1", {}, { kid: "unknown" }))).toBe(403);
    expect(attempts).toBe(2); // the first fetch, and one failed refresh
    clock.set("2026-11-22T12:01:32Z"); // past the 30 s cooldown: one more try
    expect(await get()).toBe(200);
    expect(attempts).toBe(3);
  });
});
