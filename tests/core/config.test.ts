import { describe, expect, expectTypeOf, it } from "vitest";
import { readFileSync } from "node:fs";
import { ConfigError, parseConfig, type ParsedSections, type ServiceConfig } from "../../src/core/config/mod.ts";
import { NEVER_EXPOSED } from "../../src/core/config/worker-keys.ts";

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

  it("docs/configuration.md lists every name the keys worker never returns", () => {
    const docs = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    const list = /Never returned, even when listed: ([^.]*)\./.exec(docs)?.[1] ?? "";
    expect([...list.matchAll(/`([A-Z0-9_]+)`/g)].map((match) => match[1]).sort()).toEqual([...NEVER_EXPOSED].sort());
  });

  it("reads the server limits with their defaults, and refuses values serve could not apply", () => {
    const defaults = parseConfig({});
    expect([defaults.maxConnections, defaults.maxConnectionsPerClient, defaults.headersTimeoutSeconds, defaults.maxBodyBytesInFlight]).toEqual([4096, 256, 10, 64 * 1024 * 1024]);
    const set = parseConfig({ MAX_CONNECTIONS: "600", MAX_CONNECTIONS_PER_CLIENT: "600", HEADERS_TIMEOUT_SECONDS: "2", MAX_BODY_BYTES_IN_FLIGHT: "1048576" });
    expect([set.maxConnections, set.maxConnectionsPerClient, set.headersTimeoutSeconds, set.maxBodyBytesInFlight]).toEqual([600, 600, 2, 1048576]);
    expect([defaults.bodyWaitSeconds, parseConfig({ BODY_WAIT_SECONDS: "3" }).bodyWaitSeconds]).toEqual([10, 3]);
    const refused = (env: Record<string, string>) => {
      try {
        parseConfig(env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      return "accepted";
    };
    expect(refused({ MAX_CONNECTIONS: "0" })).toContain("MAX_CONNECTIONS");
    expect(refused({ HEADERS_TIMEOUT_SECONDS: "256" })).toContain("HEADERS_TIMEOUT_SECONDS");
    expect(refused({ HEADERS_TIMEOUT_SECONDS: "1.5" })).toContain("HEADERS_TIMEOUT_SECONDS");
    expect(refused({ MAX_BODY_BYTES_IN_FLIGHT: "64MB" })).toContain("MAX_BODY_BYTES_IN_FLIGHT");
    expect(refused({ BODY_WAIT_SECONDS: "0" })).toContain("BODY_WAIT_SECONDS");
    expect(refused({ BODY_WAIT_SECONDS: "301" })).toContain("BODY_WAIT_SECONDS");
    expect(refused({ MAX_CONNECTIONS: "100", MAX_CONNECTIONS_PER_CLIENT: "101" })).toContain("MAX_CONNECTIONS_PER_CLIENT, MAX_CONNECTIONS: the limit per client must not exceed the total");
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

  it("reads whole numbers from decimal digits only, within each variable's range", () => {
    const problem = (env: Record<string, string>): string => {
      try {
        parseConfig(env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      return "accepted";
    };
    expect(parseConfig({ MAX_JSON_BYTES: " 2048 ", AUTH_CLOCK_SKEW_SECONDS: "0" })).toMatchObject({ maxJsonBytes: 2048 });
    // What JavaScript would read as numbers is no whole number written out: refused, not 30, 100, 16, 5 or 0.
    for (const text of ["0x1e", "1e2", "0x10", "5.0", " ", "+5", "-1", "0"]) expect(problem({ MAX_JSON_BYTES: text }), text).toMatch(/MAX_JSON_BYTES: must be/);
    expect(problem({ AUTH_CLOCK_SKEW_SECONDS: " " })).toMatch(/AUTH_CLOCK_SKEW_SECONDS: must be a whole number/);
    expect(problem({ AUTH_CLOCK_SKEW_SECONDS: "301" })).toMatch(/AUTH_CLOCK_SKEW_SECONDS: must be at most 300/);
    // A timer waits at most 2^31 - 1 ms: a longer timeout fired at once (or threw) on every call.
    for (const name of ["CAPTCHA_TIMEOUT_MS", "PDF_IMAGE_TIMEOUT_MS", "MAIL_TIMEOUT_MS", "IMAGE_UPSTREAM_TIMEOUT_MS"]) {
      expect(problem({ [name]: "3000000000" }), name).toContain(`${name}: must be at most 2147483647`);
      expect(problem({ [name]: "2147483647" }), name).toBe("accepted");
    }
    // A signed URL's expiry must stay within the 12 digits a delivery reads.
    expect(problem({ IMAGE_URL_TTL_SECONDS: "9007199254740991" })).toContain("IMAGE_URL_TTL_SECONDS: must be at most 315360000");
  });

  it("reads EXPORT_REQUIRE_SIGNATURE as on or off, and refuses any other value rather than taking it as off", () => {
    for (const on of ["1", "true", "YES", " yes "]) expect(parseConfig({ EXPORT_REQUIRE_SIGNATURE: on }).exportRequireSignature, on).toBe(true);
    for (const off of ["0", "false", "No"]) expect(parseConfig({ EXPORT_REQUIRE_SIGNATURE: off }).exportRequireSignature, off).toBe(false);
    expect(parseConfig({}).exportRequireSignature).toBe(false);
    for (const unread of ["on", "enabled", "maybe", "y"]) {
      expect(() => parseConfig({ EXPORT_REQUIRE_SIGNATURE: unread }), unread).toThrow(/EXPORT_REQUIRE_SIGNATURE: must be 1, true or yes/);
    }
  });

  it("keeps ALLOWED_ORIGIN as the origin a browser sends: no trailing slash, default port or upper case", () => {
    for (const written of ["https://lab.example", "https://lab.example/", "https://Lab.Example:443", "HTTPS://lab.example:443/"]) {
      expect(parseConfig({ ALLOWED_ORIGIN: written }).allowedOrigin, written).toBe("https://lab.example");
    }
    expect(parseConfig({ ALLOWED_ORIGIN: "http://127.0.0.1:5173/" }).allowedOrigin).toBe("http://127.0.0.1:5173");
    for (const refused of ["https://lab.example/app", "https://lab.example/?", "https://lab.example#x", "https://u:p@lab.example", "ftp://lab.example", "lab.example"]) {
      expect(() => parseConfig({ ALLOWED_ORIGIN: refused }), refused).toThrow(/ALLOWED_ORIGIN: must be an origin/);
    }
  });

  it("refuses an audit or export key of the wrong shape at start, naming the variable", () => {
    const refused = (env: Record<string, string>, pattern: RegExp) => expect(() => parseConfig(env), JSON.stringify(env)).toThrow(pattern);
    for (const text of ["{}", "[1]", '{"kty":1}', "[]", "null"]) refused({ AUDIT_SIGNING_KEY: text }, /AUDIT_SIGNING_KEY: /);
    refused({ AUDIT_SIGNING_KEY: '{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}' }, /AUDIT_SIGNING_KEY: not a private key/);
    // A shared secret signs heads nobody could check with a public half.
    refused({ AUDIT_SIGNING_KEY: '{"kty":"oct","k":"AA"}' }, /AUDIT_SIGNING_KEY: an oct \(shared-secret\) key/);
    refused({ AUDIT_SIGNING_KEY: '[{"kty":"EC","d":"AA"},{"kty":"EC","d":"AA"}]' }, /AUDIT_SIGNING_KEY: one private JWK expected, found 2/);
    for (const text of ["[1]", '{"keys":[{"kty":"EC"},{}]}', "7"]) refused({ AUDIT_VERIFY_KEYS: text }, /AUDIT_VERIFY_KEYS: /);
    // Export manifests may be signed with a shared secret (the importer holds it too).
    expect(parseConfig({ EXPORT_SIGNING_KEY: '{"kty":"oct","k":"c2VjcmV0"}' }).exportSigningKey).toBeDefined();
    refused({ EXPORT_SIGNING_KEY: "[]" }, /EXPORT_SIGNING_KEY: one private JWK expected, found 0/);
  });

  it("refuses an exchange decryption key that could never open a sealed package, naming the variable", () => {
    const refused = (text: string, pattern: RegExp) => expect(() => parseConfig({ EXCHANGE_DECRYPTION_KEY: text }), text).toThrow(pattern);
    refused("not json", /EXCHANGE_DECRYPTION_KEY: must be JSON: one private JWK/);
    refused("[]", /EXCHANGE_DECRYPTION_KEY: one private JWK expected, found 0/);
    refused('{"kty":"oct","k":"AA"}', /EXCHANGE_DECRYPTION_KEY: must be an EC P-256 or RSA/);
    refused('{"kty":"OKP","crv":"X25519","x":"AA","d":"AA"}', /EXCHANGE_DECRYPTION_KEY: must be an EC P-256 or RSA/);
    refused('{"kty":"EC","crv":"P-384","x":"AA","y":"AA","d":"AA"}', /EXCHANGE_DECRYPTION_KEY: an EC key must be on P-256/);
    refused('{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}', /EXCHANGE_DECRYPTION_KEY: not a private key/);
    // Reported together with a problem of another exchange variable.
    expect(() => parseConfig({ EXCHANGE_DECRYPTION_KEY: "[]", EXPORT_SIGNING_KEY: "[]" })).toThrow(/EXPORT_SIGNING_KEY: .*[\s\S]*EXCHANGE_DECRYPTION_KEY: |EXCHANGE_DECRYPTION_KEY: [\s\S]*EXPORT_SIGNING_KEY: /);
    expect(parseConfig({ EXCHANGE_DECRYPTION_KEY: '{"kty":"EC","crv":"P-256","x":"AA","y":"AA","d":"AA"}' }).exchangeDecryptionKey).toBeDefined();
  });

  it("requires the backend's URL and credentials for STORAGE=redis and s3", () => {
    expect(() => parseConfig({ STORAGE: "redis" })).toThrow(/STORAGE_URL/);
    expect(() => parseConfig({ STORAGE: "s3", STORAGE_URL: "https://s3.example" })).toThrow(/endpoint and bucket/);
    expect(() => parseConfig({ STORAGE: "s3", STORAGE_URL: "https://s3.example/b" })).toThrow(/S3_ACCESS_KEY_ID/);
    expect(parseConfig({ STORAGE: "s3", STORAGE_URL: "https://s3.example/b", S3_ACCESS_KEY_ID: "a", S3_SECRET_ACCESS_KEY: "s" }).storage).toBe("s3");
  });

  it("declares ServiceConfig as the sections parse it: each section's fields with their types, and no other field", () => {
    type SectionKeys = { [S in keyof ParsedSections]: keyof ParsedSections[S] }[keyof ParsedSections];
    expectTypeOf<Exclude<keyof ServiceConfig, "env">>().toEqualTypeOf<SectionKeys>();
    expectTypeOf<ParsedSections["workerKeys"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["workerKeys"]>>();
    expectTypeOf<ParsedSections["cors"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["cors"]>>();
    expectTypeOf<ParsedSections["identity"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["identity"]>>();
    expectTypeOf<ParsedSections["rateLimits"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["rateLimits"]>>();
    expectTypeOf<ParsedSections["bodyLimits"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["bodyLimits"]>>();
    expectTypeOf<ParsedSections["serverLimits"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["serverLimits"]>>();
    expectTypeOf<ParsedSections["accounts"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["accounts"]>>();
    expectTypeOf<ParsedSections["mail"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["mail"]>>();
    expectTypeOf<ParsedSections["captcha"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["captcha"]>>();
    expectTypeOf<ParsedSections["images"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["images"]>>();
    expectTypeOf<ParsedSections["pdf"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["pdf"]>>();
    expectTypeOf<ParsedSections["storage"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["storage"]>>();
    expectTypeOf<ParsedSections["encryption"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["encryption"]>>();
    expectTypeOf<ParsedSections["exchange"]>().toEqualTypeOf<Pick<ServiceConfig, keyof ParsedSections["exchange"]>>();
  });

  it("checks cross-field rules per section and names the variables", () => {
    expect(() => parseConfig({ MAIL_TRANSPORT: "http" })).toThrow(/MAIL_HTTP_URL, MAIL_HTTP_TOKEN: required when MAIL_TRANSPORT=http/);
    expect(() => parseConfig({ MAIL_TRANSPORT: "smtp", ADMIN_EMAIL: "a@b", MAIL_FROM: "c@d" })).toThrow(/SMTP_URL/);
    expect(() => parseConfig({ AUTH_ISSUER: "https://idp.example" })).toThrow(/AUTH_JWKS_URL: required/);
    expect(() => parseConfig({ RATE_LIMITS: "pdf=0/60s" })).toThrow(/RATE_LIMITS: /);
    expect(parseConfig({ MAIL_TRANSPORT: "outbox" }).adminEmail).toBe("admin@localhost");
    expect(parseConfig({ MAX_CASES: "5", DEMO_MAX_FILES_PER_CASE: "2" })).toMatchObject({ limits: { maxCases: 5 }, demoLimits: { maxCases: 3, maxFilesPerCase: 2 } });
  });
});
