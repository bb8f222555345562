import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/core/config.ts";

describe("ServiceConfig", () => {
  it("applies CONTRACT defaults", () => {
    const config = parseConfig({});
    expect(config.mailTransport).toBe("outbox");
    expect(config.imageHost).toBe("local");
    expect(config.captchaVerifyUrl).toBe("https://challenges.cloudflare.com/turnstile/v0/siteverify");
    expect(config.keysExposed).toEqual(["USER_DB_AUTH", "R2_KEY_SECRET", "IMAGES_API_TOKEN", "ACCOUNT_HASH"]);
    expect(config.r2KeySecret).toBeUndefined();
  });

  it("treats empty strings as unset and ignores non-string bindings", () => {
    const config = parseConfig({ R2_KEY_SECRET: "", USER_DB: { get() {} }, KEYS_AUTH: "k" });
    expect(config.r2KeySecret).toBeUndefined();
    expect(config.keysAuth).toBe("k");
    expect(config.env.has("USER_DB")).toBe(false);
  });

  it("drops never-exposed names from KEYS_EXPOSED", () => {
    expect(parseConfig({ KEYS_EXPOSED: "HMAC_KEY, KEYS_AUTH ,ACCOUNT_HASH" }).keysExposed).toEqual(["ACCOUNT_HASH"]);
  });

  it("names each invalid variable", () => {
    try {
      parseConfig({ MAIL_TRANSPORT: "pigeon", CAPTCHA_VERIFY_URL: "ftp://x", MAX_JSON_BYTES: "-1" });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      for (const name of ["MAIL_TRANSPORT", "CAPTCHA_VERIFY_URL", "MAX_JSON_BYTES"]) expect(message).toContain(name);
    }
  });

  it("requires the backend's URL and credentials for STORAGE=redis and s3", () => {
    expect(() => parseConfig({ STORAGE: "redis" })).toThrow(/STORAGE_URL/);
    expect(() => parseConfig({ STORAGE: "s3", STORAGE_URL: "https://s3.example" })).toThrow(/endpoint and bucket/);
    expect(() => parseConfig({ STORAGE: "s3", STORAGE_URL: "https://s3.example/b" })).toThrow(/S3_ACCESS_KEY_ID/);
    expect(parseConfig({ STORAGE: "s3", STORAGE_URL: "https://s3.example/b", S3_ACCESS_KEY_ID: "a", S3_SECRET_ACCESS_KEY: "s" }).storage).toBe("s3");
  });
});
