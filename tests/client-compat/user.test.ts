/**
 * The Striae v1.0 client's sign-up: it creates the user's record with
 * `PUT /user/{uid}` and `permitted: true` (false for review accounts), the full record in
 * the body, and reads the answer as the stored record. With identity tokens on, what a user
 * may make of themselves is `SELF_REGISTRATION`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIdentityProvider } from "../helpers/identity.ts";
import { AUDIENCE, ISSUER } from "../helpers/identity.ts";
import { fixedClock, KEYS, testService } from "../helpers/service.ts";

const ADMIN = "admin-key-0123456789";
const userKey = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };

/** The record the client sends on sign-up. */
const signUp = (uid: string, permitted: boolean) => ({
  uid,
  email: `${uid}@lab.example`,
  firstName: "Ana",
  lastName: "Ruiz",
  company: "State Lab",
  permitted,
  cases: [],
  readOnlyCases: [],
  createdAt: "2026-11-22T11:59:58.000Z",
});

type Stored = { uid: string; permitted: boolean; email: string; cases: unknown[]; createdAt: string };

describe("client compatibility: sign-up in key-only mode", () => {
  it("stores the record as sent, permitted true or false, and answers it", async () => {
    const { app } = testService({}, { clock: fixedClock("2026-11-22T12:00:00Z") });
    for (const [uid, permitted] of [["u-full", true], ["u-review", false]] as const) {
      const response = await app.request(`/user/${uid}`, { method: "PUT", headers: userKey, body: JSON.stringify(signUp(uid, permitted)) });
      expect(response.status).toBe(201);
      expect(await response.json()).toMatchObject({ uid, permitted, email: `${uid}@lab.example`, cases: [], readOnlyCases: [] });
      const read = (await (await app.request(`/user/${uid}`, { headers: userKey })).json()) as Stored;
      expect(read.permitted).toBe(permitted);
    }
  });
});

describe("client compatibility: sign-up with identity tokens (SELF_REGISTRATION)", () => {
  let idp: Awaited<ReturnType<typeof startIdentityProvider>>;
  beforeAll(async () => {
    idp = await startIdentityProvider();
  });
  afterAll(async () => await idp.close());

  const service = (mode?: string) =>
    testService(
      {
        AUTH_JWKS_URL: idp.jwksUrl,
        AUTH_ISSUER: ISSUER,
        AUTH_AUDIENCE: AUDIENCE,
        ADMIN_AUTH: ADMIN,
        RATE_LIMITS: "off",
        ...(mode === undefined ? {} : { SELF_REGISTRATION: mode }),
      },
      { clock: fixedClock("2026-11-22T12:00:00Z") },
    ).app;
  const asUser = async (uid: string) => ({ ...userKey, "X-Identity-Token": await idp.token(uid) });
  const put = async (app: ReturnType<typeof service>, uid: string, body: unknown, headers?: Record<string, string>) =>
    app.request(`/user/${uid}`, { method: "PUT", headers: headers ?? (await asUser(uid)), body: JSON.stringify(body) });

  it("default (permitted): the client's sign-up with permitted: true is a 201 storing it", async () => {
    const app = service();
    const response = await put(app, "u1", signUp("u1", true));
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ uid: "u1", permitted: true });
    const review = await put(app, "u2", signUp("u2", false));
    expect(review.status).toBe(201);
    expect(await review.json()).toMatchObject({ uid: "u2", permitted: false });
  });

  it("demo: the record is created with permitted: false whatever the body says, and the answer shows it", async () => {
    const app = service("demo");
    const response = await put(app, "u1", signUp("u1", true));
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ uid: "u1", permitted: false });
    const read = (await (await app.request("/user/u1", { headers: await asUser("u1") })).json()) as Stored;
    expect(read.permitted).toBe(false);
  });

  it("closed: self-creation is a 403 and nothing is stored; the admin key still creates accounts", async () => {
    const app = service("closed");
    const response = await put(app, "u1", signUp("u1", true));
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("Self-registration is closed") });
    expect((await app.request("/user/u1", { headers: { ...userKey, "X-Admin-Key": ADMIN } })).status).toBe(404);
    const admin = await put(app, "u1", signUp("u1", true), { ...userKey, "X-Admin-Key": ADMIN });
    expect(admin.status).toBe(201);
    expect(await admin.json()).toMatchObject({ permitted: true });
  });

  it("in every mode, raising an existing record from false to true is the admin key's", async () => {
    for (const mode of ["permitted", "demo", "closed"]) {
      const app = service(mode);
      expect((await put(app, "u1", signUp("u1", false), { ...userKey, "X-Admin-Key": ADMIN })).status, mode).toBe(201);
      const raise = await put(app, "u1", { permitted: true });
      expect(raise.status, mode).toBe(403);
      expect(await raise.json()).toMatchObject({ code: "FORBIDDEN", details: { field: "permitted" } });
      // The client's profile edits still work.
      expect((await put(app, "u1", { firstName: "Ana María" })).status, mode).toBe(200);
      const admin = await put(app, "u1", { permitted: true }, { ...userKey, "X-Admin-Key": ADMIN });
      expect(admin.status, mode).toBe(200);
      expect(await admin.json()).toMatchObject({ permitted: true, firstName: "Ana María" });
    }
  });

  it("a bad SELF_REGISTRATION value stops the configuration with its name", async () => {
    const { parseConfig } = await import("../../src/core/config/mod.ts");
    expect(() => parseConfig({ SELF_REGISTRATION: "open" })).toThrow(/SELF_REGISTRATION/);
  });
});
