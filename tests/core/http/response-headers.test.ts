/**
 * The exact headers a client receives (security headers, CORS, rate limits), pinned for
 * successes, refusals, unknown paths and preflights, through the whole service and through a
 * worker on its own. The headers are set once per response, so this is what must not move.
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { dataHeaders, fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { createDataWorker } from "../../../src/core/workers/data.ts";
import { createBlobStore } from "../../../src/core/storage/unstorage-stores.ts";
import { parseConfig } from "../../../src/core/config/mod.ts";

const ORIGIN = "https://lab.example";

const SECURITY = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "cross-origin",
  "origin-agent-cluster": "?1",
  "referrer-policy": "no-referrer",
  "strict-transport-security": "max-age=15552000; includeSubDomains",
  "x-content-type-options": "nosniff",
  "x-dns-prefetch-control": "off",
  "x-download-options": "noopen",
  "x-frame-options": "DENY",
  "x-permitted-cross-domain-policies": "none",
  "x-xss-protection": "0",
  // Every answer names its request (docs/operations.md#logs): a UUID when the client sent none.
  "x-request-id": expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
};
const EXPOSE = { "access-control-expose-headers": "Retry-After,X-RateLimit-Limit,X-RateLimit-Remaining,X-RateLimit-Reset,Content-Disposition,X-Request-Id" };

const headersOf = (response: Response) => Object.fromEntries([...response.headers].filter(([name]) => name !== "content-length"));

describe("response headers", () => {
  it("a document read from the site's origin: security headers, CORS for the origin, Vary: Origin", async () => {
    const { app } = testService({ RATE_LIMITS: "off" });
    await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body: '{"a":1}' });
    const response = await app.request("/data/u1/C-1/data.json", { headers: { ...dataHeaders, Origin: ORIGIN } });
    expect(await response.text()).toBe('{"a":1}');
    expect(headersOf(response)).toEqual({
      ...SECURITY,
      ...EXPOSE,
      "access-control-allow-origin": ORIGIN,
      "content-type": "application/json; charset=utf-8",
      vary: "Origin",
    });
  });

  it("another origin gets no Access-Control-Allow-Origin; a refusal carries the same headers as an answer", async () => {
    const { app } = testService({ RATE_LIMITS: "off" });
    const refused = await app.request("/data/u1/C-1/data.json", { headers: { Origin: "https://evil.example" } });
    expect(refused.status).toBe(403);
    expect(headersOf(refused)).toEqual({ ...SECURITY, ...EXPOSE, "content-type": "application/json", vary: "Origin" });
    expect(await refused.json()).toMatchObject({ code: "FORBIDDEN" });
  });

  it("/health and an unknown path: security headers only (no worker, no CORS)", async () => {
    const { app } = testService({ RATE_LIMITS: "off" });
    const health = await app.request("/health", { headers: { Origin: ORIGIN } });
    expect(headersOf(health)).toEqual({ ...SECURITY, "content-type": "application/json" });
    expect(await health.json()).toEqual({ ok: true });
    const nowhere = await app.request("/nowhere");
    expect(nowhere.status).toBe(404);
    expect(headersOf(nowhere)).toEqual({ ...SECURITY, "content-type": "application/json" });
  });

  it("a preflight: 204 with the worker's methods, the allowed request headers and the security headers", async () => {
    const { app } = testService({ RATE_LIMITS: "off" });
    const response = await app.request("/data/u1/C-1/data.json", {
      method: "OPTIONS",
      headers: { Origin: ORIGIN, "Access-Control-Request-Method": "PUT" },
    });
    expect(response.status).toBe(204);
    expect(headersOf(response)).toEqual({
      ...SECURITY,
      ...EXPOSE,
      "access-control-allow-origin": ORIGIN,
      "access-control-allow-headers": "Content-Type,X-Custom-Auth-Key,Authorization,X-Identity-Token",
      "access-control-allow-methods": "GET,PUT,DELETE,POST,OPTIONS",
      "access-control-max-age": "600",
      vary: "Origin, Access-Control-Request-Headers",
    });
    expect(await response.text()).toBe("");
  });

  it("rate limits on: X-RateLimit-* next to the other headers, on answers and on 429s", async () => {
    const { app } = testService({ RATE_LIMITS: "data.read=1/60s" }, { clock: fixedClock("2026-11-22T12:00:10Z") });
    const init = { headers: { ...dataHeaders, Origin: ORIGIN } };
    const first = await app.request("/data/u1/C-1/data.json", init, { clientIp: "203.0.113.7" });
    expect(headersOf(first)).toEqual({
      ...SECURITY,
      ...EXPOSE,
      "access-control-allow-origin": ORIGIN,
      "content-type": "application/json; charset=utf-8",
      vary: "Origin",
      "x-ratelimit-limit": "1",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "50",
    });
    const refused = await app.request("/data/u1/C-1/data.json", init, { clientIp: "203.0.113.7" });
    expect(refused.status).toBe(429);
    expect(headersOf(refused)).toEqual({
      ...SECURITY,
      ...EXPOSE,
      "access-control-allow-origin": ORIGIN,
      "content-type": "application/json",
      vary: "Origin",
      "retry-after": "50",
      "x-ratelimit-limit": "1",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "50",
    });
  });

  it("a worker on its own sets the same headers once", async () => {
    const config = parseConfig({ ...KEYS, ALLOWED_ORIGIN: ORIGIN, RATE_LIMITS: "off" });
    const store = () => createBlobStore(createStorage({ driver: memoryDriver() }));
    const worker = createDataWorker({ blobs: store(), audit: store(), clock: fixedClock("2026-11-22T12:00:00Z"), config });
    const response = await worker.request("/u1/C-1/data.json", { headers: { ...dataHeaders, Origin: ORIGIN } });
    expect(await response.text()).toBe("[]");
    expect(headersOf(response)).toEqual({
      ...SECURITY,
      ...EXPOSE,
      "access-control-allow-origin": ORIGIN,
      "content-type": "application/json; charset=utf-8",
      vary: "Origin",
    });
  });
});
