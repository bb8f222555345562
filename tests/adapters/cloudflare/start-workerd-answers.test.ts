import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Served, spawnServe } from "../../helpers/spawn-serve.ts";

// start:workerd held Miniflare's answer unread while the outbox move ran: under 2×300
// concurrent audit appends for one user, tens of answers reached the client as 200 with an empty body.
let dir: string;
let served: Served;
const DATA = { "X-Custom-Auth-Key": "dkey", "content-type": "application/json" };
const USER = { "X-Custom-Auth-Key": "ukey", "content-type": "application/json" };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "start-workerd-answers-"));
  served = await spawnServe({
    runtime: "workerd",
    dataDir: dir,
    timeoutMs: 60_000,
    env: {
      USER_DB_AUTH: "ukey",
      R2_KEY_SECRET: "dkey",
      RATE_LIMITS: "off",
      // fetch opens a connection per request in flight: 600 from one address, past the default per-client bound.
      MAX_CONNECTIONS_PER_CLIENT: "1024",
      DATA_ENCRYPTION_KEYS: '{"keys":[{"kty":"oct","kid":"k1","k":"wzy2VI4SmdQrLb58DXLTSbeRpPrq9do1966V3X_2yQ4"}]}',
    },
  });
}, 90_000);

afterAll(async () => {
  await served?.stop();
  await rm(dir, { recursive: true, force: true });
});

it("answers every one of 2×300 concurrent appends for one user with its JSON body, then 50 concurrent case adds", async () => {
  const uid = "concurrent-appender";
  const append = (i: number) =>
    fetch(`${served.url}/audit/audit/?userId=${uid}`, {
      method: "POST",
      headers: DATA,
      body: JSON.stringify({ timestamp: new Date().toISOString(), userId: uid, userEmail: "", action: "annotation-edit", result: "success", details: { validationErrors: [], fileName: `n${i}` } }),
    }).then(async (r) => ({ status: r.status, text: await r.text() }));
  const answers = [];
  for (let round = 0; round < 2; round++) answers.push(...(await Promise.all(Array.from({ length: 600 }, (_, i) => append(round * 600 + i)))));
  const bad = answers.filter((a) => a.status !== 200 || !a.text.startsWith('{"success":true'));
  expect(bad.length, JSON.stringify(bad.slice(0, 3))).toBe(0);

  const tag = "fresh-user";
  expect((await fetch(`${served.url}/user/${tag}`, { method: "PUT", headers: USER, body: JSON.stringify({ email: "x@lab.example", firstName: "a", lastName: "b", company: "c", permitted: true }) })).status).toBe(201);
  const adds = await Promise.all(Array.from({ length: 50 }, (_, i) =>
    fetch(`${served.url}/user/${tag}/cases`, { method: "PUT", headers: USER, body: JSON.stringify({ cases: [{ caseNumber: `N${i}`, createdAt: new Date().toISOString() }] }) }).then(async (r) => ({ status: r.status, text: await r.text() }))
  ));
  expect(adds.filter((a) => a.status !== 200)).toEqual([]);
  const record = await (await fetch(`${served.url}/user/${tag}`, { headers: USER })).json() as { cases: unknown[] };
  expect(record.cases.length).toBe(50);
}, 60_000);
