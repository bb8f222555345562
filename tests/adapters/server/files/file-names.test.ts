/**
 * Issue 13 items 2 and 3 over HTTP on the embedded default (`serve --data`): every name the
 * key rules accept is stored and read back, audit and security entries of a 255-byte user id
 * land, and a document and a folder of the same name live side by side.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, spawnServe, type Served } from "../../../helpers/spawn-serve.ts";
import { auditEntry } from "../../../helpers/audit-entry.ts";
import { AUDIENCE, ISSUER, startIdentityProvider } from "../../../helpers/identity.ts";
import { createFileBlobStore } from "../../../../src/adapters/server/files/file-ports.ts";

const KEY = "data-key-0123456789";
const ADMIN = "admin-key-0123456789";
const data = { "X-Custom-Auth-Key": KEY, "Content-Type": "application/json" };

// The longest segments the key rules accept, in two-byte characters: 255 bytes each.
const USER = `${"é".repeat(127)}u`;
const CASE = `${"é".repeat(127)}c`;
const LEAF = `${"é".repeat(125)}.json`;
const path = (...segments: string[]) => segments.map(encodeURIComponent).join("/");
const bytes = (text: string) => new TextEncoder().encode(text).length;

/** Every file and folder name under `dir`, recursively. */
async function namesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.map((entry) => entry.name);
}

let dir: string;
const running: Served[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-names-"));
});
afterAll(async () => {
  await Promise.all(running.map((served) => served.stop("SIGKILL")));
  await rm(dir, { recursive: true, force: true });
});

async function serve(name: string, env: Record<string, string>, runtime: Runtime = "node"): Promise<{ url: string; dataDir: string }> {
  const dataDir = join(dir, name);
  const served = await spawnServe({ runtime, dataDir, env: { R2_KEY_SECRET: KEY, RATE_LIMITS: "off", ...env } });
  running.push(served);
  return { url: served.url, dataDir };
}

type Entry = { action: string; result: string; userId: string; details: { securityDetails?: Record<string, unknown> } };

// Bun and Deno run the same file stores through their node:fs; each answers as Node does.
describe.each(["node", "bun", "deno"] as const)("serve --data on %s: names at the limits of the key rules (key-only mode)", (runtime) => {
  let url: string;
  let dataDir: string;
  beforeAll(async () => {
    ({ url, dataDir } = await serve(`key-only-${runtime}`, {}, runtime));
  }, 60_000);

  it("stores and reads back documents with 255-byte segments and a 1000-byte key; 1001 bytes is a clear 400", async () => {
    const long = `${url}/data/${path(USER, CASE, LEAF)}`;
    const put = await fetch(long, { method: "PUT", headers: data, body: '{"note":"long"}' });
    expect(put.status).toBe(200);
    expect(await (await fetch(long, { headers: data })).json()).toEqual({ note: "long" });

    // Three 255-byte folders and a document name making up the rest.
    const leafOf = (total: number) => `${"a".repeat(total - 3 * (255 + 1) - 5)}.json`;
    const widest = [USER, CASE, CASE, leafOf(1000)];
    expect(bytes(widest.join("/"))).toBe(1000);
    expect((await fetch(`${url}/data/${path(...widest)}`, { method: "PUT", headers: data, body: "[1]" })).status).toBe(200);
    expect(await (await fetch(`${url}/data/${path(...widest)}`, { headers: data })).json()).toEqual([1]);

    const over = await fetch(`${url}/data/${path(USER, CASE, CASE, leafOf(1001))}`, { method: "PUT", headers: data, body: "[1]" });
    expect(over.status).toBe(400);
    expect(await over.json()).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringContaining("1000 bytes") });

    // Listing (the store over the same folder) gives the keys back as written, and no name on disk is too long.
    expect(await createFileBlobStore(join(dataDir, "data")).list(`${USER}/`)).toEqual([`${USER}/${CASE}/${LEAF}`, widest.join("/")].sort());
    for (const name of await namesUnder(join(dataDir, "data"))) expect(bytes(name)).toBeLessThanOrEqual(255);

    expect((await fetch(long, { method: "DELETE", headers: data })).status).toBe(200);
    expect((await fetch(long, { method: "DELETE", headers: data })).status).toBe(404);
  }, 30_000);

  it("appends to and reads the audit day of a 255-byte user id (a 271-byte name)", async () => {
    const trail = `${url}/data/audit/?userId=${encodeURIComponent(USER)}`;
    for (let n = 1; n <= 3; n++) {
      const response = await fetch(trail, { method: "POST", headers: data, body: JSON.stringify(auditEntry({ userId: USER, details: { validationErrors: [], n } })) });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ entryCount: n });
    }
    const read = await fetch(`${url}/audit/audit/?userId=${encodeURIComponent(USER)}`, { headers: data });
    expect(read.status).toBe(200);
    const { entries } = (await read.json()) as { entries: { details: { n: number } }[] };
    expect(entries.map((entry) => entry.details.n).sort()).toEqual([1, 2, 3]);
    for (const name of await namesUnder(join(dataDir, "audit"))) expect(bytes(name)).toBeLessThanOrEqual(255);
  }, 30_000);

  it("keeps x.json and x.json/y.json side by side, written and deleted in either order", async () => {
    const doc = (key: string) => `${url}/data/${key}`;
    const put = (key: string) => fetch(doc(key), { method: "PUT", headers: data, body: JSON.stringify({ key }) });
    const get = async (key: string) => await (await fetch(doc(key), { headers: data })).json();
    const del = async (key: string) => (await fetch(doc(key), { method: "DELETE", headers: data })).status;

    expect((await put("u1/x.json")).status).toBe(200);
    expect((await put("u1/x.json/y.json")).status).toBe(200);
    expect((await put("u1/d.json/y.json")).status).toBe(200);
    expect((await put("u1/d.json")).status).toBe(200);
    for (const key of ["u1/x.json", "u1/x.json/y.json", "u1/d.json", "u1/d.json/y.json"]) expect(await get(key)).toEqual({ key });
    expect(await createFileBlobStore(join(dataDir, "data")).list("u1/")).toEqual(["u1/d.json", "u1/d.json/y.json", "u1/x.json", "u1/x.json/y.json"]);

    expect(await del("u1/d.json")).toBe(200);
    expect(await get("u1/d.json")).toEqual([]); // absent documents read as []
    expect(await get("u1/d.json/y.json")).toEqual({ key: "u1/d.json/y.json" });
    expect(await del("u1/x.json/y.json")).toBe(200);
    expect(await get("u1/x.json")).toEqual({ key: "u1/x.json" });
    expect(await del("u1/x.json")).toBe(200);
    expect(await del("u1/d.json/y.json")).toBe(200);
    expect(await del("u1/d.json")).toBe(404);
    expect(await createFileBlobStore(join(dataDir, "data")).list("u1/")).toEqual([]);
  }, 30_000);
});

describe("serve --data: a 255-byte user id in identity mode", () => {
  let idp: Awaited<ReturnType<typeof startIdentityProvider>>;
  let url: string;
  beforeAll(async () => {
    idp = await startIdentityProvider();
    ({ url } = await serve("identity", { AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, ADMIN_AUTH: ADMIN }));
  }, 30_000);
  afterAll(async () => await idp?.close());

  const as = async (uid: string) => ({ ...data, "X-Identity-Token": await idp.token(uid, {}, { now: new Date() }) });
  const admin = { ...data, "X-Admin-Key": ADMIN };
  const trailOf = async (uid: string): Promise<Entry[]> => {
    const response = await fetch(`${url}/audit/audit/?userId=${encodeURIComponent(uid)}`, { headers: admin });
    expect(response.status).toBe(200);
    return ((await response.json()) as { entries: Entry[] }).entries;
  };

  it("the user's own documents and entries are stored; a cross-user attempt is a 403 whose security-violation lands", async () => {
    const own = await as(USER);
    expect((await fetch(`${url}/data/${path(USER, CASE, "data.json")}`, { method: "PUT", headers: own, body: '{"mine":true}' })).status).toBe(200);
    expect(await (await fetch(`${url}/data/${path(USER, CASE, "data.json")}`, { headers: own })).json()).toEqual({ mine: true });
    const posted = await fetch(`${url}/data/audit/?userId=${encodeURIComponent(USER)}`, { method: "POST", headers: own, body: JSON.stringify(auditEntry({ userId: USER })) });
    expect(posted.status).toBe(200);

    const refused = await fetch(`${url}/data/u1/C-1/data.json`, { headers: own });
    expect(refused.status).toBe(403);
    const entries = await trailOf(USER);
    const violations = entries.filter((entry) => entry.action === "security-violation");
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ userId: USER, result: "blocked", details: { securityDetails: { attemptedUserId: "u1" } } });
  }, 30_000);

  it("admin-key uses on a 255-byte user land in that user's trail, and on a longer id in the _admin trail", async () => {
    const before = (await trailOf(USER)).length;
    expect((await fetch(`${url}/data/${path(USER, "C-2", "data.json")}`, { method: "PUT", headers: admin, body: "{}" })).status).toBe(200);
    const after = await trailOf(USER);
    // The PUT's own entry; reading the trail with the admin key is an admin use too, audited after the read.
    expect(after.length).toBeGreaterThan(before);
    expect(after.slice(before).some((entry) => entry.details.securityDetails?.["source"] === "service")).toBe(true);

    const adminTrail = (await trailOf("_admin")).length;
    const tooLong = `${USER}x`; // 256 bytes: refused by the key rules
    expect((await fetch(`${url}/data/${path(tooLong, "C-1", "data.json")}`, { method: "PUT", headers: admin, body: "{}" })).status).toBe(400);
    const admins = await trailOf("_admin");
    expect(admins.length).toBeGreaterThan(adminTrail);
    expect(admins.slice(adminTrail).some((entry) => entry.result === "failure")).toBe(true);
  }, 30_000);
});
