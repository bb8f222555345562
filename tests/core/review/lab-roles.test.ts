/**
 * Labs and roles (docs/review.md#labs-and-roles): from the identity token's claims
 * (AUTH_LAB_CLAIM, AUTH_ROLES_CLAIM), else from the user record, where only an administrator
 * (the admin key, or a token with role admin) may set them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIENCE, ISSUER, startIdentityProvider } from "../../helpers/identity.ts";
import { fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { membershipOf } from "../../../src/core/users/lab-membership.ts";
import { userRecords } from "../../../src/core/users/user-records.ts";
import { createIdentityVerifier } from "../../../src/core/identity/identity-token.ts";

const NOW = "2026-11-22T12:00:00Z";
const ADMIN = "admin-key-0123456789";
const userKey = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
const profile = { email: "x@lab.example", firstName: "A", lastName: "B", company: "Lab", permitted: true };

describe("labs and roles", () => {
  let idp: Awaited<ReturnType<typeof startIdentityProvider>>;
  beforeAll(async () => {
    idp = await startIdentityProvider();
  });
  afterAll(async () => await idp.close());
  const service = (env: Record<string, string> = {}) =>
    testService({ AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, ADMIN_AUTH: ADMIN, RATE_LIMITS: "off", ...env }, { clock: fixedClock(NOW) });
  const as = async (uid: string, claims: Record<string, unknown> = {}) => ({ ...userKey, "X-Identity-Token": await idp.token(uid, claims) });

  it("a user cannot set their own lab or roles (403); the admin key and a token with role admin can, on any user", async () => {
    const { app } = service();
    const own = await app.request("/user/u1", { method: "PUT", headers: await as("u1"), body: JSON.stringify({ ...profile, permitted: false, roles: ["reviewer"] }) });
    expect(own.status).toBe(403);
    expect(await own.json()).toMatchObject({ code: "FORBIDDEN", details: { fields: ["roles"] } });
    expect((await app.request("/user/u1", { method: "PUT", headers: await as("u1"), body: JSON.stringify({ ...profile, permitted: false }) })).status).toBe(201);
    expect((await app.request("/user/u1", { method: "PUT", headers: await as("u1"), body: JSON.stringify({ lab: "Lab B" }) })).status).toBe(403);
    // The admin key.
    const byKey = await app.request("/user/u1", { method: "PUT", headers: { ...userKey, "X-Admin-Key": ADMIN }, body: JSON.stringify({ lab: "Lab A", roles: ["reviewer"] }) });
    expect(byKey.status).toBe(200);
    expect(await byKey.json()).toMatchObject({ uid: "u1", lab: "Lab A", roles: ["reviewer"] });
    // A token whose roles claim holds admin writes another user's record.
    const byToken = await app.request("/user/u2", { method: "PUT", headers: await as("boss", { lab: "Lab A", roles: ["admin"] }), body: JSON.stringify({ ...profile, lab: "Lab A", roles: ["examiner"] }) });
    expect(byToken.status).toBe(201);
    expect(await byToken.json()).toMatchObject({ uid: "u2", lab: "Lab A", roles: ["examiner"], permitted: true });
    // A role that is not one of the three is a 400.
    expect((await app.request("/user/u2", { method: "PUT", headers: { ...userKey, "X-Admin-Key": ADMIN }, body: JSON.stringify({ roles: ["boss"] }) })).status).toBe(400);
    // A reviewer (not admin) still cannot touch another user's record.
    expect((await app.request("/user/u2", { method: "PUT", headers: await as("u1", { roles: ["reviewer"] }), body: JSON.stringify({ lab: "Lab B" }) })).status).toBe(403);
  });

  it("a key-only caller cannot set lab or roles", async () => {
    const { app } = testService({ RATE_LIMITS: "off" });
    const response = await app.request("/user/k1", { method: "PUT", headers: userKey, body: JSON.stringify({ ...profile, roles: ["admin"] }) });
    expect(response.status).toBe(403);
  });

  it("the claims win, each on its own; without them the record's; no roles is examiner; AUTH_*_CLAIM rename them", async () => {
    const { ports } = service();
    const records = userRecords(ports.users);
    await ports.users.put("r1", JSON.stringify({ uid: "r1", email: null, firstName: "", lastName: "", company: "", permitted: true, cases: [], createdAt: NOW, lab: "Lab R", roles: ["reviewer", "made-up"] }));
    const verifier = (env: { labClaim?: string; rolesClaim?: string } = {}) =>
      createIdentityVerifier({ jwksUrl: idp.jwksUrl, issuer: ISSUER, audience: AUDIENCE, clock: fixedClock(NOW), ...env });
    const actor = async (token: string, env = {}) => ({ kind: "user" as const, ...(await verifier(env).verify(token)) });
    expect(await membershipOf(await actor(await idp.token("r1")), records)).toEqual({ lab: "Lab R", roles: ["reviewer"] });
    expect(await membershipOf(await actor(await idp.token("r1", { lab: "Lab T" })), records)).toEqual({ lab: "Lab T", roles: ["reviewer"] });
    expect(await membershipOf(await actor(await idp.token("r1", { roles: [] })), records)).toEqual({ lab: "Lab R", roles: ["examiner"] });
    expect(await membershipOf(await actor(await idp.token("nobody")), records)).toEqual({ lab: undefined, roles: ["examiner"] });
    const renamed = await idp.token("nobody", { "https://lab/org": "Lab Z", groups: ["admin", "x"] });
    expect(await membershipOf(await actor(renamed, { labClaim: "https://lab/org", rolesClaim: "groups" }), records)).toEqual({ lab: "Lab Z", roles: ["admin"] });
    await expect(verifier().verify(await idp.token("r1", { roles: "reviewer" }))).rejects.toMatchObject({ message: expect.stringContaining("claim roles invalid") });
    await expect(verifier().verify(await idp.token("r1", { lab: 7 }))).rejects.toMatchObject({ message: expect.stringContaining("claim lab invalid") });
    expect((await verifier().verify(await idp.token("r1", { auth_time: 1_700_000_000 }))).authTime).toBe(1_700_000_000);
  });
});
