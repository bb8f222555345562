/**
 * What an operator reads (docs/operations.md): request ids, the request log, `/ready` and
 * `/metrics`, through the whole service with `app.request`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIENCE, ISSUER, startIdentityProvider } from "../../helpers/identity.ts";
import { auditEntry } from "../../helpers/audit-entry.ts";
import { dataHeaders, KEYS, memoryPorts, testService } from "../../helpers/service.ts";
import type { OperatorPorts, ServicePorts } from "../../../src/core/service/service.ts";
import type { BlobStore } from "../../../src/core/ports.ts";

function logged(env: Record<string, string> = {}, overrides: Partial<ServicePorts> = {}, operator: OperatorPorts = {}) {
  const lines: string[] = [];
  const service = testService(env, { ...overrides, operator: { log: (line) => lines.push(line), ...operator } });
  const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { ...service, lines, records };
}

/** A store whose every call fails as a driver's would, its message holding what must never be shown. */
function brokenStore(): BlobStore {
  const fail = () => Promise.reject(new Error("connect ECONNREFUSED redis://admin:hunter2@10.0.0.5:6379 for ana@lab.example"));
  return { get: fail, put: fail, delete: fail, has: fail, list: fail, update: fail, appendToJsonArray: fail } as unknown as BlobStore;
}

describe("request ids", () => {
  it("echoes a request's own X-Request-Id of 1-128 visible ASCII characters, on success and refusal alike", async () => {
    const { app } = testService();
    for (const id of ["a", "abc.123:/x~", "x".repeat(128)]) {
      expect((await app.request("/health", { headers: { "X-Request-Id": id } })).headers.get("x-request-id")).toBe(id);
      expect((await app.request("/data/u1/C1/data.json", { headers: { "X-Request-Id": id } })).headers.get("x-request-id")).toBe(id);
      expect((await app.request("/nowhere", { headers: { "X-Request-Id": id } })).headers.get("x-request-id")).toBe(id);
    }
  });

  it("generates one for a missing, empty, too long or non-visible id", async () => {
    const { app } = testService();
    const ids = new Set<string>();
    for (const id of [undefined, "x".repeat(129), "has space", "tab\there", "é"]) {
      const headers: Record<string, string> = id === undefined ? {} : { "X-Request-Id": id };
      const answered = (await app.request("/health", { headers })).headers.get("x-request-id");
      expect(answered).toMatch(/^[0-9a-f-]{36}$/);
      ids.add(answered!);
    }
    expect(ids.size).toBe(5);
  });

  it("a 5xx body carries the request id in details, the log line the cause and stack", async () => {
    const { app, records } = logged({}, { data: brokenStore() });
    const response = await app.request("/data/u1/C1/data.json", { headers: { ...dataHeaders, "X-Request-Id": "req-500" } });
    expect(response.status).toBe(500);
    const body = await response.json() as { details: Record<string, unknown>; message: string };
    expect(body.details.requestId).toBe("req-500");
    expect(JSON.stringify(body)).not.toContain("ECONNREFUSED");
    const line = records().find((record) => record.requestId === "req-500")!;
    expect(line).toMatchObject({ level: "error", status: 500, route: "/data/{userId}/{caseNumber}/data.json", worker: "data" });
    expect(line.error).toContain("ECONNREFUSED");
    expect(String(line.stack)).toContain("ECONNREFUSED");
    expect(JSON.stringify(line)).not.toMatch(/hunter2|ana@lab\.example/);
  });
});

describe("the request log", () => {
  it("one JSON line per answer: time, id, method, route pattern, status, duration, worker; never the path, query or keys", async () => {
    const { app, records, lines } = logged();
    await app.request("/data/secret-user/CASE-42/data.json?sig=abcdef&token=t0k", { method: "PUT", headers: { ...dataHeaders, "X-Request-Id": "put-1" }, body: JSON.stringify({ email: "ana@lab.example" }) });
    await app.request("/user/secret-user", { headers: { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH } });
    await app.request("/data/secret-user/CASE-42/f1/sub/deep.json", { headers: dataHeaders });
    expect(records().map((record) => [record.method, record.route, record.status, record.worker])).toEqual([
      ["PUT", "/data/{userId}/{caseNumber}/data.json", 200, "data"],
      ["GET", "/user/{userUid}", 404, "user"],
      ["GET", "/data/*", 200, "data"],
    ]);
    const first = records()[0]!;
    expect(first).toMatchObject({ level: "info", requestId: "put-1" });
    expect(new Date(String(first.time)).toISOString()).toBe(first.time);
    expect(first.durationMs).toEqual(expect.any(Number));
    const all = lines.join("\n");
    for (const secret of ["secret-user", "CASE-42", "sig=", "abcdef", "t0k", "ana@lab.example", KEYS.R2_KEY_SECRET, KEYS.USER_DB_AUTH]) expect(all).not.toContain(secret);
  });

  it("LOG_FORMAT=text writes a readable line; LOG_LEVEL=warn leaves plain requests out; off writes nothing", async () => {
    const text = logged({ LOG_FORMAT: "text" });
    await text.app.request("/health", { headers: { "X-Request-Id": "t-1" } });
    expect(text.lines).toHaveLength(1);
    expect(text.lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+Z INFO  GET \/health 200 [\d.]+ms( \d+B)? worker=service id="t-1"$/);
    const warn = logged({ LOG_LEVEL: "warn" }, { data: brokenStore() });
    await warn.app.request("/health");
    await warn.app.request("/data/u1/C1/data.json", { headers: dataHeaders });
    expect(warn.records().map((record) => record.level)).toEqual(["error"]);
    const off = logged({ LOG_LEVEL: "off" }, { data: brokenStore() });
    await off.app.request("/data/u1/C1/data.json", { headers: dataHeaders });
    expect(off.lines).toEqual([]);
  });

  it("a log write that throws never changes the answer", async () => {
    const { app } = testService({}, { operator: { log: () => {
      throw new Error("EPIPE: the log's reader went away");
    } } });
    const response = await app.request("/data/u1/C1/data.json", { method: "PUT", headers: dataHeaders, body: "{}" });
    expect(response.status).toBe(200);
  });

  it("a method no route knows is counted as other, not as what the client sent", async () => {
    const { app, records } = logged();
    const request = new Request("http://localhost/health", { method: "FROBNICATE" });
    await app.request(request);
    // Bun's Request turns a method it does not know into GET before the service sees it.
    expect(records()[0]).toMatchObject({ method: request.method === "GET" ? "GET" : "other", route: "/health" });
  });
});

describe("GET /ready", () => {
  it("200 with every store, the keys and the adapter's own checks ok", async () => {
    const { app } = testService({}, { operator: { readiness: { lock: async () => {} } } });
    const response = await app.request("/ready");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ready: true, checks: { data: "ok", audit: "ok", users: "ok", images: "ok", outbox: "ok", keys: "ok", lock: "ok" } });
  });

  it("503 naming the store that fails, in words that hold nothing of the driver's message", async () => {
    const { app } = testService({}, { audit: brokenStore() });
    const response = await app.request("/ready");
    expect(response.status).toBe(503);
    const body = await response.json() as { ready: boolean; checks: Record<string, string> };
    expect(body).toMatchObject({ ready: false, checks: { data: "ok", audit: "the audit store is not answering" } });
    expect(JSON.stringify(body)).not.toMatch(/hunter2|10\.0\.0\.5|ECONNREFUSED/);
  });

  it("503 when a store does not answer within 2 s", async () => {
    const hanging = { ...memoryPorts().data, has: () => new Promise<boolean>(() => {}) } as BlobStore;
    const { app } = testService({}, { images: hanging });
    const response = await app.request("/ready");
    expect(response.status).toBe(503);
    expect((await response.json() as { checks: Record<string, string> }).checks.images).toBe("no answer within 2 s");
  }, 10_000);

  it("503 when an export signing key does not import", async () => {
    const { app } = testService({ EXPORT_SIGNING_KEY: JSON.stringify({ kty: "EC", crv: "P-256", x: "AAAA", y: "AAAA", d: "AAAA" }) });
    const response = await app.request("/ready");
    expect(response.status).toBe(503);
    expect((await response.json() as { checks: Record<string, string> }).checks.keys).toBe("EXPORT_SIGNING_KEY does not import");
  });

  it("503 when the exchange decryption key does not import (an RSA key of 1024 bits, a point off the curve)", async () => {
    const rsa1024 = await crypto.subtle.exportKey(
      "jwk",
      (await crypto.subtle.generateKey({ name: "RSA-OAEP", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["encrypt", "decrypt"])).privateKey,
    );
    const ec = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])).privateKey);
    for (const key of [rsa1024, { ...ec, y: ec.x }]) {
      const { app } = testService({ EXCHANGE_DECRYPTION_KEY: JSON.stringify(key) });
      const response = await app.request("/ready");
      expect(response.status).toBe(503);
      expect((await response.json() as { checks: Record<string, string> }).checks.keys).toBe(
        "EXCHANGE_DECRYPTION_KEY does not import as an EC P-256 or RSA (2048 to 8192 bits) private key",
      );
    }
    const { app } = testService({ EXCHANGE_DECRYPTION_KEY: JSON.stringify(ec) });
    expect((await app.request("/ready")).status).toBe(200);
  });
});

describe("GET /metrics", () => {
  it("is not served without METRICS_TOKEN", async () => {
    expect((await testService().app.request("/metrics")).status).toBe(404);
  });

  it("401 in the standard body without the bearer token or with another", async () => {
    const { app } = testService({ METRICS_TOKEN: "metrics-0123456789" });
    for (const headers of [{}, { Authorization: "Bearer nope" }, { Authorization: "metrics-0123456789" }] as Record<string, string>[]) {
      const response = await app.request("/metrics", { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: "UNAUTHORIZED" });
    }
  });

  it("Prometheus text: requests by route pattern, durations, store operations, audit appends, process memory; no user ids", async () => {
    const { app } = testService({ METRICS_TOKEN: "metrics-0123456789" }, { operator: { residentMemoryBytes: () => 123_456_789 } });
    await app.request("/data/secret-user/C1/data.json", { method: "PUT", headers: dataHeaders, body: "{}" });
    await app.request("/data/secret-user/C1/data.json", { headers: dataHeaders });
    const appended = await app.request("/audit/audit/?userId=secret-user", { method: "POST", headers: dataHeaders, body: JSON.stringify(auditEntry({ userId: "secret-user" })) });
    expect(appended.status).toBe(200);
    const response = await app.request("/metrics", { headers: { Authorization: "Bearer metrics-0123456789" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await response.text();
    expect(text).toContain('http_requests_total{worker="data",route="/data/{userId}/{caseNumber}/data.json",method="PUT",status="200"} 1\n');
    expect(text).toContain('http_requests_total{worker="data",route="/data/{userId}/{caseNumber}/data.json",method="GET",status="200"} 1\n');
    expect(text).toContain('http_requests_total{worker="audit",route="/audit/audit",method="POST",status="200"} 1\n');
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{worker="data",route="\/data\/\{userId\}\/\{caseNumber\}\/data\.json",method="PUT",le="\+Inf"\} 1$/m);
    // With record history (DATA_HISTORY=on) a PUT appends its version and sets the value by a compare-and-swap update.
    expect(text).toContain('store_operations_total{store="data",op="update",result="ok"}');
    expect(text).toContain('store_operations_total{store="data",op="appendToJsonArray",result="ok"}');
    expect(text).toContain('audit_appends_total{result="ok"} 1\n');
    expect(text).toContain("process_resident_memory_bytes 123456789\n");
    expect(text).toContain("# TYPE http_request_duration_seconds histogram\n");
    expect(text).not.toContain("secret-user");
  });

  it("counts a failing store as an error of that store", async () => {
    const { app } = testService({ METRICS_TOKEN: "metrics-0123456789" }, { data: brokenStore() });
    await app.request("/data/u1/C1/data.json", { headers: dataHeaders });
    const text = await (await app.request("/metrics", { headers: { Authorization: "Bearer metrics-0123456789" } })).text();
    // With record history on, a GET reads the value and its history's head side by side: both reads failed.
    expect(text).toContain('store_operations_total{store="data",op="get",result="error"} 2\n');
    expect(text).toContain('store_errors_total{store="data"} 2\n');
    expect(text).toContain('http_requests_total{worker="data",route="/data/{userId}/{caseNumber}/data.json",method="GET",status="500"} 1\n');
  });
});

describe("the request log in identity-token mode", () => {
  let idp: Awaited<ReturnType<typeof startIdentityProvider>>;
  beforeAll(async () => {
    idp = await startIdentityProvider();
  });
  afterAll(async () => await idp.close());

  it("carries the caller's sub; a refusal that wrote a security-violation entry is a warn line; the token is never logged", async () => {
    const { app, records, lines } = logged({ AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, RATE_LIMITS: "off", LOG_LEVEL: "info" });
    const token = await idp.token("u1");
    const headers = { ...dataHeaders, "X-Identity-Token": token };
    expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers, body: "{}" })).status).toBe(200);
    expect((await app.request("/data/u2/C-1/data.json", { headers })).status).toBe(403);
    expect(records().map((record) => [record.level, record.status, record.sub])).toEqual([["info", 200, "u1"], ["warn", 403, "u1"]]);
    expect(lines.join("\n")).not.toContain(token);
    expect(lines.join("\n")).not.toContain(token.split(".")[2]!);
  });
});
