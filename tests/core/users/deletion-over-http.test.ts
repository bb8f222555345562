import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { serve } from "@hono/node-server";
import { simpleParser } from "mailparser";
import { parseConfig } from "../../../src/core/config/mod.ts";
import { imageHostOf } from "../../../src/core/service/service.ts";
import { createDataWorker } from "../../../src/core/workers/data.ts";
import { createImageWorker } from "../../../src/core/workers/image.ts";
import { createStandaloneUserWorker } from "../../../src/core/service/standalone-user.ts";
import type { WorkerApp } from "../../../src/core/http/worker-app.ts";
import { createFileBlobStore, createFilePorts } from "../../../src/adapters/server/files/file-ports.ts";
import { fixedClock, KEYS } from "../../helpers/service.ts";
import { accessControl } from "../../../src/core/http/access.ts";
import { IdentityTokenError } from "../../../src/core/identity/identity-token.ts";
import { type Caller, filesUnder, seedAccount } from "../../helpers/accounts.ts";
import { fixture, uploadForm } from "../../helpers/images.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Serves one worker on its own HTTP server (127.0.0.1, a free port). */
async function own(app: WorkerApp): Promise<{ url: string; call: Caller }> {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, call: (path, init) => fetch(`${url}${path}`, init) };
}

describe("account deletion through the HTTP path (user worker alone, spec 5.3)", () => {
  it("the user worker deployed alone deletes cases, annotations and images through the data and image workers' servers", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fa-deletion-http-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const stores = createFilePorts(dir);
    const base = parseConfig({ ...KEYS });
    const data = await own(createDataWorker({ blobs: stores.data, audit: stores.audit, clock, config: base }));
    const image = await own(createImageWorker({ host: imageHostOf(base, clock, () => stores.images), config: base }));
    const config = parseConfig({ ...KEYS, DATA_WORKER_URL: data.url, IMAGE_WORKER_URL: image.url, ADMIN_EMAIL: "admin@lab.example", MAIL_FROM: "no-reply@lab.example" });
    const userApp = createStandaloneUserWorker({ users: stores.users, outbox: createFileBlobStore(join(dir, "outbox")), clock, config });
    const user = await own(userApp);

    const mine = Object.values(await seedAccount({ user: user.call, data: data.call, image: image.call }, "u1", { own: ["C-1", "C-2"], readOnly: ["R-1"], filesPerCase: 2 })).flat();
    await seedAccount({ user: user.call, data: data.call, image: image.call }, "u2", { own: ["C-1"], readOnly: [], filesPerCase: 1 });
    const response = await user.call("/u1", { method: "DELETE", headers: { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH } });
    expect(response.status).toBe(200);

    expect((await filesUnder(join(dir, "data"))).filter((path) => path.startsWith("u1/"))).toEqual([]);
    expect((await filesUnder(join(dir, "data"))).filter((path) => path.startsWith("u2/"))).toHaveLength(2);
    expect((await filesUnder(join(dir, "images"))).filter((path) => !path.startsWith("#history/") && mine.some((id) => path.includes(id)))).toEqual([]);
    expect((await filesUnder(join(dir, "images"))).filter((path) => !path.startsWith("#history/"))).toHaveLength(2); // u2's image and its metadata
    expect((await filesUnder(join(dir, "users")))).toEqual(["u2"]);
    const outbox = await filesUnder(join(dir, "outbox"));
    expect(outbox).toHaveLength(2);
    const to = await Promise.all(outbox.map(async (name) => (await simpleParser(await readFile(join(dir, "outbox", name)))).to));
    expect(to.map((address) => (Array.isArray(address) ? "" : address?.text)).sort()).toEqual(["admin@lab.example", "u1@lab.example"]);
  });

  it("with identity tokens on, the user deletes their own account through workers that require an identity (ADMIN_AUTH between workers)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fa-deletion-http-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const stores = createFilePorts(dir);
    const identityEnv = { AUTH_JWKS_URL: "https://idp.lab.example/jwks", AUTH_ISSUER: "https://idp.lab.example", AUTH_AUDIENCE: "lab", ADMIN_AUTH: "admin-key-0123456789", RATE_LIMITS: "off" };
    // A verifier standing in for the provider: this test is about the workers' calls, not tokens.
    const identity = {
      verify: (token: string) => (token === "token-of-u1" ? Promise.resolve({ uid: "u1", email: "u1@lab.example" }) : Promise.reject(new IdentityTokenError("malformed"))),
    };
    const base = parseConfig({ ...KEYS, ...identityEnv });
    const access = accessControl(base, { clock, audit: stores.audit, identity });
    const data = await own(createDataWorker({ blobs: stores.data, audit: stores.audit, clock, config: base, access }));
    const image = await own(createImageWorker({ host: imageHostOf(base, clock, () => stores.images), config: base, access }));
    const config = parseConfig({ ...KEYS, ...identityEnv, DATA_WORKER_URL: data.url, IMAGE_WORKER_URL: image.url });
    const user = await own(createStandaloneUserWorker({ users: stores.users, outbox: createFileBlobStore(join(dir, "outbox")), clock, config, access }));
    const admin = { "X-Admin-Key": identityEnv.ADMIN_AUTH };
    // u1 uploads their images (so they are recorded as u1's); the records and documents go in with the admin key.
    const u1Images = { "X-Identity-Token": "token-of-u1" };
    await seedAccount({ user: user.call, data: data.call, image: image.call }, "u1", { own: ["C-1"], readOnly: ["R-1"], filesPerCase: 2 }, admin, u1Images);
    // Someone else's image, listed in u1's case by u1: it must survive u1's account deletion.
    const foreign = await image.call("/", { method: "POST", body: uploadForm(fixture("sample.png"), "other.png"), headers: { ...admin, Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` } });
    const foreignId = ((await foreign.json()) as { result: { id: string } }).result.id;
    const listed = JSON.parse(await readFile(join(dir, "data", "u1", "C-1", "data.json"), "utf8")) as { files: { id: string }[] };
    listed.files.push({ id: foreignId });
    expect((await data.call("/u1/C-1/data.json", { method: "PUT", headers: { ...admin, "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET }, body: JSON.stringify(listed) })).status).toBe(200);

    const headers = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
    expect((await user.call("/u1", { method: "DELETE", headers })).status).toBe(401);
    const response = await user.call("/u1", { method: "DELETE", headers: { ...headers, "X-Identity-Token": "token-of-u1" } });
    expect(response.status).toBe(200);
    expect((await filesUnder(join(dir, "data"))).filter((path) => path.startsWith("u1/"))).toEqual([]);
    // Only the foreign image (and its metadata) is left, beside what record history keeps of the deleted ones (#history/).
    const live = (await filesUnder(join(dir, "images"))).filter((path) => !path.startsWith("#history/"));
    expect(live.every((path) => path.includes(foreignId))).toBe(true);
    expect(live).toHaveLength(2);
    expect(await filesUnder(join(dir, "users"))).toEqual([]);
    // The trail says who did what: the user's deletion, and the admin key the user worker used.
    const trail = JSON.parse(await readFile(join(dir, "audit", "audit-trails", "u1-2026-11-22.json"), "utf8")) as { action: string; details: { securityDetails: { actor: string } } }[];
    expect(trail.filter((entry) => entry.details.securityDetails.actor === "u1").map((entry) => entry.action)).toEqual(["file-upload", "file-upload", "file-upload", "file-upload", "user-account-delete"]);
    expect(trail.some((entry) => entry.details.securityDetails.actor === "admin")).toBe(true);
    expect(() => createStandaloneUserWorker({ users: stores.users, clock, config: parseConfig({ ...KEYS, ...identityEnv, ADMIN_AUTH: "", DATA_WORKER_URL: data.url, IMAGE_WORKER_URL: image.url }) })).toThrow(/ADMIN_AUTH/);
  });

  it("an unreachable data worker is a 500 that keeps the record", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fa-deletion-http-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const stores = createFilePorts(dir);
    const config = parseConfig({ ...KEYS, DATA_WORKER_URL: "http://127.0.0.1:9/", IMAGE_WORKER_URL: "http://127.0.0.1:9/" });
    const app = createStandaloneUserWorker({ users: stores.users, outbox: stores.outbox, clock: fixedClock("2026-11-22T12:00:00Z"), config });
    const headers = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
    await app.request("/u1", { method: "PUT", headers, body: JSON.stringify({ email: "a@lab.example", firstName: "A", lastName: "B", company: "C", permitted: true }) });
    await app.request("/u1/cases", { method: "PUT", headers, body: JSON.stringify({ cases: [{ caseNumber: "C-1" }] }) });
    const response = await app.request("/u1", { method: "DELETE", headers });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: "SERVER_ERROR", message: "The data worker could not be reached" });
    expect((await app.request("/u1", { headers })).status).toBe(200);
  });

  it("refuses to start without the other workers' URLs", () => {
    const stores = createFilePorts(tmpdir());
    expect(() => createStandaloneUserWorker({ users: stores.users, clock: fixedClock("2026-11-22T12:00:00Z"), config: parseConfig({ ...KEYS }) })).toThrow(/DATA_WORKER_URL/);
  });
});
