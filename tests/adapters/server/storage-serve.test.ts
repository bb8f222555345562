import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnServe, type Served } from "../../helpers/spawn-serve.ts";
import { startRedis, type RedisServer } from "../../helpers/redis-server.ts";
import { auditEntry } from "../../helpers/audit-entry.ts";
import { startS3 } from "../../helpers/s3-server.ts";

let redis: RedisServer;
let dir: string;
const servers: Served[] = [];
beforeAll(async () => {
  redis = await startRedis();
  dir = await mkdtemp(join(tmpdir(), "fa-redis-"));
}, 20_000);
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("serve with STORAGE=redis", () => {
  it("two server processes sharing Redis lose no concurrent audit append", async () => {
    const env = { STORAGE: "redis", STORAGE_URL: redis.url, R2_KEY_SECRET: "k" };
    const [a, b] = await Promise.all([
      spawnServe({ dataDir: join(dir, "a"), env }),
      spawnServe({ dataDir: join(dir, "b"), env }),
    ]);
    servers.push(a, b);
    expect(a.output()).toMatch(/storage: redis/);
    const headers = { "X-Custom-Auth-Key": "k", "Content-Type": "application/json" };
    const counts = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).url}/data/audit/?userId=u1`, {
          method: "POST",
          headers,
          body: JSON.stringify(auditEntry({ details: { validationErrors: [], seq: i } })),
        }).then(async (r) => ((await r.json()) as { entryCount: number }).entryCount)
      ),
    );
    expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    for (const server of [a, b]) {
      const listed = (await (await fetch(`${server.url}/audit/audit/?userId=u1`, { headers })).json()) as {
        entries: { details: { seq: number } }[];
      };
      expect(listed.entries.map((e) => e.details.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    }
    // A document written through one process is read through the other.
    await fetch(`${a.url}/data/u1/C-1/data.json`, { method: "PUT", headers, body: '{"from":"a"}' });
    expect(await (await fetch(`${b.url}/data/u1/C-1/data.json`, { headers })).json()).toEqual({ from: "a" });
  }, 60_000);

  it("two server processes sharing Redis: 40 concurrent PUTs of one key are 40 versions, none lost or twice, the value the newest", async () => {
    const env = { STORAGE: "redis", STORAGE_URL: redis.url, R2_KEY_SECRET: "k", RATE_LIMITS: "off" };
    const [a, b] = await Promise.all([spawnServe({ dataDir: join(dir, "history-a"), env }), spawnServe({ dataDir: join(dir, "history-b"), env })]);
    servers.push(a, b);
    const headers = { "X-Custom-Auth-Key": "k", "Content-Type": "application/json" };
    const key = "/data/u9/C-1/1/data.json";
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      fetch(`${(i % 2 ? a : b).url}${key}`, { method: "PUT", headers, body: JSON.stringify({ i }) }).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      })
    ));
    expect(statuses).toEqual(Array.from({ length: 40 }, () => 200));
    const history = (await (await fetch(`${b.url}${key}?history&verify=true`, { headers })).json()) as { current: number; valid: boolean; versions: { version: number }[] };
    expect(history).toMatchObject({ current: 40, valid: true });
    expect(history.versions.map((v) => v.version)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const bodies = await Promise.all(history.versions.map(async (v) => await (await fetch(`${(v.version % 2 ? a : b).url}${key}?version=${v.version}`, { headers })).json() as { i: number }));
    expect(bodies.map((body) => body.i).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(await (await fetch(`${a.url}${key}`, { headers })).json()).toEqual(bodies[39]);
  }, 60_000);

  it("Redis going away is a 500 naming the store, logged once, and serving resumes when it is back", async () => {
    const own = await startRedis();
    const port = Number(new URL(own.url).port);
    let again: RedisServer | undefined;
    const served = await spawnServe({ dataDir: join(dir, "outage"), env: { STORAGE: "redis", STORAGE_URL: own.url, R2_KEY_SECRET: "k" } });
    servers.push(served);
    const headers = { "X-Custom-Auth-Key": "k" };
    const read = () => fetch(`${served.url}/data/u1/C-1/data.json`, { headers });
    try {
      expect((await read()).status).toBe(200);
      await own.stop();
      const down = await read();
      expect(down.status).toBe(500);
      expect(await down.json()).toEqual({ error: "Internal Server Error", code: "SERVER_ERROR", message: "The storage backend (Redis) is not answering; try again shortly", details: { requestId: down.headers.get("x-request-id") } });
      again = await startRedis(10_000, port);
      const deadline = Date.now() + 15_000;
      let status = 0;
      while (status !== 200 && Date.now() < deadline) {
        status = (await read()).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(200);
      const output = served.output();
      expect(output.match(/redis: connection lost/g)).toHaveLength(1);
      expect(output.match(/redis: connection back/g)).toHaveLength(1);
      expect(output).not.toContain("Unhandled error event");
    } finally {
      await again?.stop();
    }
  }, 60_000);

  it("two server processes sharing Redis lose none of 100 concurrent case additions to one user", async () => {
    const env = { STORAGE: "redis", STORAGE_URL: redis.url, USER_DB_AUTH: "u" };
    const [a, b] = await Promise.all([
      spawnServe({ dataDir: join(dir, "users-a"), env }),
      spawnServe({ dataDir: join(dir, "users-b"), env }),
    ]);
    servers.push(a, b);
    const headers = { "X-Custom-Auth-Key": "u", "Content-Type": "application/json" };
    const record = { email: "ana@lab.example", firstName: "Ana", lastName: "Ruiz", company: "Lab", permitted: true };
    expect((await fetch(`${a.url}/user/u2`, { method: "PUT", headers, body: JSON.stringify(record) })).status).toBe(201);
    const statuses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).url}/user/u2/cases`, {
          method: "PUT",
          headers,
          body: JSON.stringify({ cases: [{ caseNumber: `C-${i}` }] }),
        }).then(async (r) => {
          await r.body?.cancel();
          return r.status;
        })
      ),
    );
    expect(statuses).toEqual(Array.from({ length: 100 }, () => 200));
    for (const server of [a, b]) {
      const stored = (await (await fetch(`${server.url}/user/u2`, { headers })).json()) as { cases: { caseNumber: string }[] };
      expect(stored.cases.map((assignment) => assignment.caseNumber).sort()).toEqual(Array.from({ length: 100 }, (_, i) => `C-${i}`).sort());
    }
  }, 60_000);

  it("STORAGE=redis without STORAGE_URL is refused at start", async () => {
    await expect(spawnServe({ dataDir: join(dir, "c"), env: { STORAGE: "redis" }, timeoutMs: 10_000 })).rejects.toThrow(/STORAGE_URL/);
  });

  it("STORAGE=s3 keeps documents and audit days in the bucket and says how far appends are lossless", async () => {
    const s3 = await startS3();
    try {
      const env = {
        STORAGE: "s3",
        STORAGE_URL: `${s3.endpoint}/${s3.bucket}`,
        S3_ACCESS_KEY_ID: "S3RVER",
        S3_SECRET_ACCESS_KEY: "S3RVER",
        R2_KEY_SECRET: "k",
      };
      const served = await spawnServe({ dataDir: join(dir, "s3"), env });
      servers.push(served);
      expect(served.output()).toMatch(/storage: s3 .*conditional writes ignored by this service: appends lossless within this process only/);
      const headers = { "X-Custom-Auth-Key": "k" };
      await fetch(`${served.url}/data/u1/C-1/data.json`, { method: "PUT", headers, body: '{"in":"s3"}' });
      const counts = await Promise.all(
        Array.from({ length: 16 }, () =>
          fetch(`${served.url}/data/audit/?userId=u1`, { method: "POST", headers, body: JSON.stringify(auditEntry()) })
            .then(async (r) => ((await r.json()) as { entryCount: number }).entryCount)
        ),
      );
      expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
      const listed = await fetch(`${s3.endpoint}/${s3.bucket}?list-type=2&prefix=data/`);
      expect(await listed.text()).toContain("<Key>data/u1/C-1/data.json</Key>");
    } finally {
      await s3.stop();
    }
  }, 60_000);

  it("STORAGE=deno-kv under Deno keeps data in the KV file across restarts; other runtimes refuse it", async () => {
    const env = { STORAGE: "deno-kv", R2_KEY_SECRET: "k" };
    const dataDir = join(dir, "denokv");
    const first = await spawnServe({ runtime: "deno", dataDir, env, timeoutMs: 60_000 });
    servers.push(first);
    expect(first.output()).toMatch(/storage: deno-kv .*kv\.sqlite3/);
    const headers = { "X-Custom-Auth-Key": "k" };
    await fetch(`${first.url}/data/u1/C-1/data.json`, { method: "PUT", headers, body: '{"in":"kv"}' });
    const counts = await Promise.all(
      Array.from({ length: 16 }, () =>
        fetch(`${first.url}/data/audit/?userId=u1`, { method: "POST", headers, body: JSON.stringify(auditEntry()) })
          .then(async (r) => ((await r.json()) as { entryCount: number }).entryCount)
      ),
    );
    expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(await first.stop()).toBe(0);

    const second = await spawnServe({ runtime: "deno", dataDir, env, timeoutMs: 60_000 });
    servers.push(second);
    expect(await (await fetch(`${second.url}/data/u1/C-1/data.json`, { headers })).json()).toEqual({ in: "kv" });
    const listed = (await (await fetch(`${second.url}/audit/audit/?userId=u1`, { headers })).json()) as { total: number };
    expect(listed.total).toBe(16);

    await expect(spawnServe({ runtime: "node", dataDir: join(dir, "nokv"), env, timeoutMs: 10_000 })).rejects.toThrow(/deno-kv runs under Deno only/);
  }, 120_000);
});
