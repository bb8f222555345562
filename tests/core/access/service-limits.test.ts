/**
 * Rate limits, security headers and log hygiene across the mounted service (issue 7, items
 * 5 and 6), with a controlled clock and the client IP an adapter would pass.
 */
import { describe, expect, it, vi } from "vitest";
import { dataHeaders, fixedClock, KEYS, stubVerifier, testService } from "../../helpers/service.ts";
import { fixture, uploadForm } from "../../helpers/images.ts";
import { ISSUER, AUDIENCE, startIdentityProvider } from "../../helpers/identity.ts";
import { redactSecrets } from "../../../src/core/errors.ts";

const ip = (clientIp: string) => ({ clientIp });

describe("rate limits (RATE_LIMITS)", () => {
  it("counts per client IP and route: 429 with Retry-After and X-RateLimit-* past the limit, again allowed after the window", async () => {
    const clock = fixedClock("2026-11-22T12:00:10Z");
    const { app } = testService({ RATE_LIMITS: "data.read=3/60s" }, { clock });
    const get = (from: string) => app.request("/data/u1/C-1/data.json", { headers: dataHeaders }, ip(from));
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await get("203.0.113.7");
      expect(response.status).toBe(200);
      expect(response.headers.get("X-RateLimit-Limit")).toBe("3");
      remaining.push(response.headers.get("X-RateLimit-Remaining"));
    }
    expect(remaining).toEqual(["2", "1", "0"]);
    const refused = await get("203.0.113.7");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toBe("50");
    expect(refused.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(refused.headers.get("X-RateLimit-Reset")).toBe("50");
    expect(Object.keys((await refused.json()) as object).sort()).toEqual(["code", "details", "error", "message"]);
    // Another client, and another route of the same client, are not affected.
    expect((await get("198.51.100.1")).status).toBe(200);
    expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body: "{}" }, ip("203.0.113.7"))).status).toBe(200);
    clock.set("2026-11-22T12:01:00Z");
    expect((await get("203.0.113.7")).status).toBe(200);
  });

  it("uploads, PDF renders and captcha are stricter than reads by default", async () => {
    const { app } = testService({}, { captcha: stubVerifier({ success: true, "error-codes": [] }) });
    const limitOf = async (path: string, init: RequestInit) =>
      Number((await app.request(path, init, ip("203.0.113.9"))).headers.get("X-RateLimit-Limit"));
    const read = await limitOf("/data/u1/C-1/data.json", { headers: dataHeaders });
    const upload = await limitOf("/image/", { method: "POST", headers: { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` }, body: uploadForm(fixture("sample.png"), "a.png") });
    const pdf = await limitOf("/pdf/", { method: "POST", body: "{}" });
    const captcha = await limitOf("/captcha/", { method: "POST", body: '{"captcha-response":"x"}', headers: { "Content-Type": "application/json" } });
    for (const strict of [upload, pdf, captcha]) {
      expect(strict).toBeGreaterThan(0);
      expect(strict).toBeLessThan(read / 5);
    }
  });

  it("counts per user across IPs in identity mode", async () => {
    const idp = await startIdentityProvider();
    try {
      const clock = fixedClock("2026-11-22T12:00:00Z");
      const { app } = testService({ AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, RATE_LIMITS: "data=2/60s" }, { clock });
      const headers = { ...dataHeaders, "X-Identity-Token": await idp.token("u1") };
      expect((await app.request("/data/u1/a.json", { headers }, ip("10.0.0.1"))).status).toBe(200);
      expect((await app.request("/data/u1/a.json", { headers }, ip("10.0.0.2"))).status).toBe(200);
      const third = await app.request("/data/u1/a.json", { headers }, ip("10.0.0.3"));
      expect(third.status).toBe(429);
      expect(await third.json()).toMatchObject({ details: { scope: "user" } });
    } finally {
      await idp.close();
    }
  });

  it("RATE_LIMITS=off counts nothing; a bad RATE_LIMITS stops the configuration", async () => {
    const { app } = testService({ RATE_LIMITS: "off" });
    const response = await app.request("/data/u1/C-1/data.json", { headers: dataHeaders }, ip("203.0.113.7"));
    expect(response.headers.get("X-RateLimit-Limit")).toBeNull();
    expect(() => testService({ RATE_LIMITS: "pdf=lots" })).toThrow(/RATE_LIMITS/);
  });
});

describe("security headers and logs", () => {
  it("every response carries the security headers; a PDF has no CSP so viewers can show it", async () => {
    const { app } = testService({ RATE_LIMITS: "off" });
    const png = Buffer.from(fixture("sample.png")).toString("base64");
    const responses = [
      await app.request("/health"),
      await app.request("/data/u1/C-1/data.json", { headers: dataHeaders }),
      await app.request("/data/u1/C-1/data.json"),
      await app.request("/nowhere"),
      await app.request("/pdf/", { method: "POST", body: JSON.stringify({ imageUrl: `data:image/png;base64,${png}`, caseNumber: "C", annotationData: null, activeAnnotations: [] }) }),
    ];
    for (const response of responses) {
      expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
      expect(response.headers.get("X-Frame-Options")).toBe("DENY");
      expect(response.headers.get("Referrer-Policy")).toBe("no-referrer");
      expect(response.headers.get("Strict-Transport-Security")).toMatch(/max-age=\d+/);
      // Images are shown by the site's origin: nothing may forbid cross-origin reads of them.
      expect(response.headers.get("Cross-Origin-Resource-Policy")).toBe("cross-origin");
    }
    expect(responses[1]!.headers.get("Content-Security-Policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(responses[4]!.headers.get("Content-Type")).toBe("application/pdf");
    expect(responses[4]!.headers.get("Content-Security-Policy")).toBeNull();
  });

  it("a failing store's error is logged without the credentials its message held", async () => {
    const failing = testService({ RATE_LIMITS: "off" });
    failing.ports.data.get = () => Promise.reject(new Error("connect ECONNREFUSED redis://default:hunter2@10.0.0.5:6379 password=hunter2 Bearer abc.def"));
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const response = await failing.app.request("/data/u1/C-1/data.json", { headers: dataHeaders });
      expect(response.status).toBe(500);
      const lines = logged.mock.calls.map((call) => call.join(" ")).join("\n");
      expect(lines).toContain("ECONNREFUSED");
      expect(lines).not.toContain("hunter2");
      expect(lines).not.toContain("abc.def");
    } finally {
      logged.mockRestore();
    }
    expect(redactSecrets("token=eyJhbGciOi.eyJzdWIi.sig and https://u:p@host/x")).toBe("token=[redacted] and https://[redacted]@host/x");
  });
});
