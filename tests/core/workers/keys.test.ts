import { describe, expect, it } from "vitest";
import { KEYS, testService } from "../../helpers/service.ts";

const keysHeaders = { "X-Custom-Auth-Key": KEYS.KEYS_AUTH };

describe("keys worker (spec 4.5, CONTRACT allow-list)", () => {
  it("returns an allow-listed key as plain text", async () => {
    const { app } = testService();
    for (const name of ["USER_DB_AUTH", "R2_KEY_SECRET", "IMAGES_API_TOKEN", "ACCOUNT_HASH"] as const) {
      const response = await app.request(`/keys/${name}`, { headers: keysHeaders });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(await response.text()).toBe(KEYS[name]);
    }
  });

  it("never returns KEYS_AUTH, HMAC_KEY or upstream credentials, even when listed", async () => {
    const secrets = {
      CF_IMAGES_TOKEN: "cf-token",
      CF_ACCOUNT_ID: "cf-account",
      CAPTCHA_SECRET: "captcha-secret",
      SMTP_URL: "smtp://u:p@host",
      MAIL_HTTP_TOKEN: "mail-token",
      ADMIN_AUTH: "admin",
    };
    const { app } = testService({
      ...secrets,
      KEYS_EXPOSED: `KEYS_AUTH,HMAC_KEY,${Object.keys(secrets).join(",")},R2_KEY_SECRET`,
    });
    for (const name of ["KEYS_AUTH", "HMAC_KEY", ...Object.keys(secrets)]) {
      const response = await app.request(`/keys/${name}`, { headers: keysHeaders });
      expect(response.status, name).toBe(404);
      const text = await response.text();
      expect(text).not.toContain(secrets[name as keyof typeof secrets] ?? KEYS[name as keyof typeof KEYS]);
      expect(JSON.parse(text)).toMatchObject({ code: "NOT_FOUND" });
    }
    expect(await (await app.request("/keys/R2_KEY_SECRET", { headers: keysHeaders })).text()).toBe(KEYS.R2_KEY_SECRET);
  });

  it("answers 404 for names that are not own configuration entries or not listed", async () => {
    const { app } = testService({ PATH_LIKE: "x" });
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "PATH_LIKE", "NOPE", "valueOf"]) {
      const response = await app.request(`/keys/${name}`, { headers: keysHeaders });
      expect(response.status, name).toBe(404);
    }
  });

  it("KEYS_EXPOSED narrows the list", async () => {
    const { app } = testService({ KEYS_EXPOSED: "ACCOUNT_HASH" });
    expect((await app.request("/keys/ACCOUNT_HASH", { headers: keysHeaders })).status).toBe(200);
    expect((await app.request("/keys/R2_KEY_SECRET", { headers: keysHeaders })).status).toBe(404);
  });

  it("a listed but unset key is 404", async () => {
    const { app } = testService({ ACCOUNT_HASH: "" });
    expect((await app.request("/keys/ACCOUNT_HASH", { headers: keysHeaders })).status).toBe(404);
  });

  it("a key name is decoded once, as a path segment: a broken escape is 400; an encoded name and a trailing slash find the key", async () => {
    const { app } = testService();
    for (const path of ["/keys/%ZZ", "/keys/USER_DB%2", "/keys/%E0%A4%A"]) {
      const response = await app.request(path, { headers: keysHeaders });
      expect(response.status, path).toBe(400);
      expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringContaining("percent-encoding") });
    }
    for (const path of ["/keys/%55SER_DB_AUTH", "/keys/USER_DB_AUTH/"]) {
      const response = await app.request(path, { headers: keysHeaders });
      expect(response.status, path).toBe(200);
      expect(await response.text()).toBe(KEYS.USER_DB_AUTH);
    }
  });

  it("a missing key name is 400", async () => {
    const { app } = testService();
    const response = await app.request("/keys/", { headers: keysHeaders });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR" });
  });

  it("a missing or wrong key is 403; another worker's key does not open it", async () => {
    const { app } = testService();
    for (const headers of [{}, { "X-Custom-Auth-Key": "nope" }, { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET }] as Record<string, string>[]) {
      const response = await app.request("/keys/R2_KEY_SECRET", { headers });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ code: "FORBIDDEN" });
    }
  });

  it("other methods are 405", async () => {
    const { app } = testService();
    const response = await app.request("/keys/R2_KEY_SECRET", { method: "POST", headers: keysHeaders });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toContain("GET");
  });
});
