/**
 * examples/embed-in-hono run as written (`npx bun examples/embed-in-hono/app.ts`): a default,
 * strict Hono app that mounts the service must route trailing-slash paths as `serve` does,
 * count per-IP rate limits with the address Bun gives it, and say which keys are unset.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnUntilReady, type Served } from "../helpers/spawn-serve.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { createMemoryPorts, createService, parseConfig } from "../../mod.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const env = { PORT: "0", R2_KEY_SECRET: "example-key", ADMIN_AUTH: "admin-key", RATE_LIMITS: "keys=2/60s" };
const key = { "X-Custom-Auth-Key": "example-key" };
let served: Served;

beforeAll(async () => {
  served = await spawnUntilReady(join(root, "node_modules/.bin/bun"), ["examples/embed-in-hono/app.ts"], {
    cwd: root,
    env,
    readyPattern: /Started \S* ?server: (http:\/\/\S+)/,
  });
}, 60_000);
afterAll(async () => {
  await served?.stop();
});

interface Answer {
  status: number;
  body: string;
}

/** The status and body, with the times the server stamps (`receivedAt`) taken out. */
async function answer(response: Response): Promise<Answer> {
  // The receipt time differs between the two services, and so do the chain hashes computed over it.
  const body = (await response.text()).replace(/"(receivedAt|prevHash|hash)":"[^"]*"/g, '"$1":"…"');
  return { status: response.status, body };
}

describe("examples/embed-in-hono under Bun", () => {
  it("routes a path with a trailing slash as the same path without it, as serve does", async () => {
    const entry = JSON.stringify(auditEntry());
    const slash = await fetch(`${served.url}/forensic/audit/audit/?userId=u1`, { method: "POST", headers: key, body: entry });
    expect(slash.status).toBe(200);
    expect((await fetch(`${served.url}/forensic/audit/audit?userId=u1`, { method: "POST", headers: key, body: entry })).status).toBe(200);

    const read = await answer(await fetch(`${served.url}/forensic/audit/audit?userId=u1`, { headers: key }));
    expect(read.status).toBe(200);
    expect((JSON.parse(read.body) as { total: number }).total).toBe(2);
    for (const path of ["/forensic/audit/audit/?userId=u1", "/forensic/data/audit/?userId=u1", "/forensic/data/audit?userId=u1"]) {
      expect(await answer(await fetch(`${served.url}${path}`, { headers: key })), path).toEqual(read);
    }

    // Every request answers embedded, with and without the slash, what the service alone answers.
    const alone = createService(createMemoryPorts(), parseConfig(env));
    await alone.request("/audit/audit?userId=u1", { method: "POST", headers: key, body: entry });
    await alone.request("/audit/audit?userId=u1", { method: "POST", headers: key, body: entry });
    const paths = ["/audit/audit/?userId=u1", "/data/audit/?userId=u1", "/data/u1/C-1/data.json/", "/health/", "/nothing/", "/keys/"];
    for (const path of paths) {
      const expected = await answer(await alone.request(path, { headers: key }));
      const embedded = await answer(await fetch(`${served.url}/forensic${path}`, { headers: key }));
      expect({ ...embedded, body: embedded.body.replace("/forensic", "") }, path).toEqual(expected);
      expect(embedded.status, path).not.toBe(500);
    }
    // A method the route does not have: the service's 405, not the host's 404.
    const put = await fetch(`${served.url}/forensic/audit/audit/?userId=u1`, { method: "PUT", headers: key, body: entry });
    expect(put.status).toBe(405);
    expect(put.headers.get("Allow")).toContain("POST");
    // The data worker mounted alone under /api/data too.
    const doc = await fetch(`${served.url}/api/data/u2/C-1/data.json/`, { method: "PUT", headers: key, body: "{}" });
    expect(await answer(doc)).toEqual(await answer(await alone.request("/data/u2/C-1/data.json/", { method: "PUT", headers: key, body: "{}" })));
  });

  it("counts per-IP rate limits with the client's address and records it in the admin's audit entries", async () => {
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${served.url}/forensic/keys/ACCOUNT_HASH`);
      statuses.push(response.status);
      if (response.status === 429) refused = response;
    }
    // KEYS_AUTH is unset: 403 until the per-IP limit (2 a minute, one of them maybe spent on
    // `/forensic/keys/` above) refuses; without the client IP nothing would ever be refused.
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, statuses.indexOf(429)).every((status) => status === 403)).toBe(true);
    expect(refused!.headers.get("Retry-After")).toMatch(/^\d+$/);
    expect(((await refused!.json()) as { details: { scope: string } }).details.scope).toBe("ip");

    const admin = { ...key, "X-Admin-Key": "admin-key" };
    expect((await fetch(`${served.url}/forensic/data/u3/C-1/data.json`, { method: "PUT", headers: admin, body: "{}" })).status).toBe(200);
    const trail = await fetch(`${served.url}/forensic/audit/audit?userId=u3`, { headers: key });
    const { entries } = (await trail.json()) as { entries: { details: { securityDetails: { clientIp?: string; source?: string } } }[] };
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) expect(entry.details.securityDetails).toMatchObject({ source: "service", clientIp: "127.0.0.1" });
  });

  it("says at start which worker keys are unset, and names the variable in the refusal", async () => {
    expect(served.output()).toMatch(/^KEYS_AUTH is not set: every request that needs X-Custom-Auth-Key is refused with 403/m);
    expect(served.output()).toMatch(/^USER_DB_AUTH is not set/m);
    expect(served.output()).not.toMatch(/^R2_KEY_SECRET is not set/m);
    const refused = await fetch(`${served.url}/forensic/user/u1`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({
      error: "Unauthorized",
      code: "UNAUTHORIZED",
      message: "Missing or invalid X-Custom-Auth-Key: this server has no USER_DB_AUTH configured, so no key is accepted",
      details: { keyConfigured: false, variable: "USER_DB_AUTH" },
    });
  });
});
