/**
 * The service mounted in a host Hono app as the README shows (`parent.route("/forensic", app)`):
 * under a default (strict) parent, under a non-strict one and under a parameterised prefix,
 * every request answers what the service alone answers, trailing slash or not.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createDataWorker, createMemoryPorts, createService, parseConfig } from "../../../mod.ts";
import { clientIpMiddleware } from "../../../src/core/http/worker-app.ts";
import { auditEntry } from "../../helpers/audit-entry.ts";

const KEY = "k";
const key = { "X-Custom-Auth-Key": KEY };
const config = parseConfig({ R2_KEY_SECRET: KEY, KEYS_AUTH: KEY, ACCOUNT_HASH: "h" });

/** Requests the Striae client and people send, with and without a trailing slash. */
const REQUESTS: [method: string, path: string, body?: string][] = [
  ["GET", "/audit/audit/?userId=u1"],
  ["GET", "/audit/audit?userId=u1"],
  ["GET", "/audit/?userId=u1"],
  ["GET", "/data/audit/?userId=u1"],
  ["GET", "/data/audit?userId=u1"],
  ["POST", "/audit/audit/?userId=u1", JSON.stringify(auditEntry())],
  ["POST", "/data/audit/?userId=u1", JSON.stringify(auditEntry())],
  ["PUT", "/audit/audit/?userId=u1", "{}"],
  ["PUT", "/data/u1/C-1/data.json", '{"a":1}'],
  ["GET", "/data/u1/C-1/data.json/"],
  ["GET", "/data/u1/C-1/data.json"],
  ["GET", "/keys/"],
  ["GET", "/keys/ACCOUNT_HASH/"],
  ["GET", "/health/"],
  ["GET", "/"],
  ["GET", "/nothing/"],
  ["OPTIONS", "/data/u1/C-1/data.json/"],
];

interface Answer {
  status: number;
  allow: string | null;
  body: string;
}

async function answer(response: Response, prefix: string): Promise<Answer> {
  const text = await response.text();
  return {
    status: response.status,
    allow: response.headers.get("Allow"),
    body: text.replaceAll(prefix, "").replace(/"receivedAt":"[^"]*"/g, '"receivedAt":"…"'),
  };
}

async function replay(fetchOne: (method: string, path: string, body?: string) => Promise<Response>, prefix: string): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const [method, path, body] of REQUESTS) answers.push(await answer(await fetchOne(method, path, body), prefix));
  return answers;
}

function send(app: { request: (input: string, init: RequestInit) => Response | Promise<Response> }, prefix: string) {
  return (method: string, path: string, body?: string) =>
    Promise.resolve(app.request(`${prefix}${path}`, { method, headers: key, ...(body === undefined ? {} : { body }) }));
}

describe("the service mounted in a host Hono app", () => {
  it("answers every request, trailing slash or not, as the service alone does under a strict, a non-strict and a parameterised mount", async () => {
    const expected = await replay(send(createService(createMemoryPorts(), config), ""), "/forensic");
    expect(expected[0]!.status).toBe(200);
    expect(expected[5]!.status).toBe(200);

    for (const [name, parent, prefix] of [
      ["strict", new Hono(), "/forensic"],
      ["non-strict", new Hono({ strict: false }), "/forensic"],
      ["nested", new Hono(), "/lab/forensic"],
    ] as const) {
      parent.route(prefix, createService(createMemoryPorts(), config));
      expect(await replay(send(parent, prefix), prefix), name).toEqual(expected);
    }
  });

  it("routes a worker mounted alone the same way", async () => {
    const ports = createMemoryPorts();
    const alone = createDataWorker({ blobs: ports.data, audit: ports.audit, clock: ports.clock, config });
    const parent = new Hono();
    parent.route("/api/data", createDataWorker({ blobs: ports.data, audit: ports.audit, clock: ports.clock, config }));
    for (const path of ["/audit/?userId=u1", "/audit?userId=u1", "/u1/C-1/data.json/"]) {
      const embedded = await answer(await parent.request(`/api/data${path}`, { headers: key }), "/api/data");
      expect(embedded, path).toEqual(await answer(await alone.request(path, { headers: key }), ""));
    }
    expect((await parent.request("/api/data/audit/?userId=u1", { headers: key })).status).toBe(200);
  });

  it("counts per-IP rate limits with the address a host middleware passes, also on a rerouted path", async () => {
    const limited = parseConfig({ R2_KEY_SECRET: KEY, RATE_LIMITS: "audit=2/60s" });
    const parent = new Hono();
    parent.use("*", clientIpMiddleware((c) => c.req.header("X-Test-Peer")));
    parent.route("/forensic", createService(createMemoryPorts(), limited));
    const read = (peer: string, path: string) => parent.request(path, { headers: { ...key, "X-Test-Peer": peer } });
    expect((await read("192.0.2.1", "/forensic/audit/audit?userId=u1")).status).toBe(200);
    expect((await read("192.0.2.1", "/forensic/audit/audit/?userId=u1")).status).toBe(200);
    const refused = await read("192.0.2.1", "/forensic/audit/audit/?userId=u1");
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { details: { scope: string } }).details.scope).toBe("ip");
    // Another client has its own count.
    expect((await read("192.0.2.2", "/forensic/audit/audit/?userId=u1")).status).toBe(200);
  });

  it("without a client IP, per-IP limits count nothing (what passClientIp is for)", async () => {
    const parent = new Hono();
    parent.route("/forensic", createService(createMemoryPorts(), parseConfig({ R2_KEY_SECRET: KEY, RATE_LIMITS: "audit=1/60s" })));
    for (let i = 0; i < 3; i++) expect((await parent.request("/forensic/audit/audit?userId=u1", { headers: key })).status).toBe(200);
  });

  it("names the unset key in the refusal and keeps the status and code", async () => {
    const parent = new Hono();
    parent.route("/forensic", createService(createMemoryPorts(), parseConfig({})));
    const data = await parent.request("/forensic/data/u1/C-1/data.json", { headers: key });
    expect(data.status).toBe(403);
    expect(await data.json()).toEqual({
      error: "Forbidden",
      code: "FORBIDDEN",
      message: "Missing or invalid X-Custom-Auth-Key: this server has no R2_KEY_SECRET configured, so no key is accepted",
      details: { keyConfigured: false, variable: "R2_KEY_SECRET" },
    });
    const image = await parent.request("/forensic/image/x", { headers: { Authorization: "Bearer x" } });
    expect(image.status).toBe(403);
    expect(((await image.json()) as { details: unknown }).details).toEqual({ keyConfigured: false, variable: "IMAGES_API_TOKEN" });
    // A configured key that does not match says nothing about configuration.
    const wrong = await createService(createMemoryPorts(), config).request("/data/u1/C-1/data.json", { headers: { "X-Custom-Auth-Key": "no" } });
    expect(await wrong.json()).toEqual({ error: "Forbidden", code: "FORBIDDEN", message: "Missing or invalid X-Custom-Auth-Key", details: {} });
  });
});
