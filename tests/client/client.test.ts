/**
 * The typed client (`@forensic-annotation/service/client`) against the service itself: every
 * worker's calls with their credentials, keys encoded per segment, error answers as
 * ServiceClientError with the standard body, identity token and admin key sent as headers,
 * a mount prefix, and a client module that carries no server code.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";
import { describe, expect, expectTypeOf, it } from "vitest";
import { createClient, type ServiceClient, ServiceClientError } from "../../src/client/mod.ts";
import type { AuditEntries, AuditEntry, AuditEntryInput, CaseData, ClientErrorCode, UnreadableAuditEntry, UserData } from "../../src/client/mod.ts";
import { KEYS, stubVerifier, testService } from "../helpers/service.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { fixture } from "../helpers/images.ts";
import { IdentityTokenError } from "../../src/core/identity/identity-token.ts";
import { createService } from "../../src/core/service/service.ts";
import { parseConfig } from "../../src/core/config/mod.ts";
import { ANALYST, CASE, REVIEWER, seedCase } from "../exchange/exchange-fixtures.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const keys = { userKey: KEYS.USER_DB_AUTH, dataKey: KEYS.R2_KEY_SECRET, keysKey: KEYS.KEYS_AUTH, imagesToken: KEYS.IMAGES_API_TOKEN };

function clientOf(app: { request(request: Request): Response | Promise<Response> }, options: Partial<Parameters<typeof createClient>[0]> = {}): ServiceClient {
  return createClient({ baseUrl: "http://service.test", ...keys, fetch: async (request) => await app.request(request), ...options });
}

const newUser = { email: "a@lab.example", firstName: "Ada", lastName: "Byron", company: "Lab", permitted: true };

describe("the typed client", () => {
  it("calls every worker with its own credential and answers typed values", async () => {
    const { app } = testService({ KEYS_EXPOSED: "ACCOUNT_HASH" }, { captcha: stubVerifier({ success: true, "error-codes": [] }) });
    const client = clientOf(app);
    expect(await client.health()).toEqual({ ok: true });

    const created = await client.user.put("u1", newUser);
    expectTypeOf(created).toEqualTypeOf<UserData>();
    expect(created).toMatchObject({ uid: "u1", email: "a@lab.example", cases: [] });
    expect((await client.user.addCases("u1", [{ caseNumber: "C-1" }])).cases.map((c) => c.caseNumber)).toEqual(["C-1"]);
    expect((await client.user.get("u1")).firstName).toBe("Ada");

    const caseData: CaseData = { caseNumber: "C-1", files: [{ id: "f1", originalFilename: "é.png", uploadedAt: "2026-11-22T00:00:00Z" }], createdAt: "2026-11-22T00:00:00Z" };
    expect(await client.data.getCase("u1", "C-1")).toBeUndefined();
    await client.data.putCase("u1", "C-1", caseData);
    expect(await client.data.getCase("u1", "C-1")).toEqual(caseData);
    await client.data.put(["u1", "C-1", "f1", "data.json"], { annotations: [] });
    expect(await client.data.get("u1/C-1/f1/data.json")).toEqual({ annotations: [] });
    await client.data.delete("u1/C-1/f1/data.json");
    expect(await client.data.get("u1/C-1/f1/data.json")).toBeUndefined();

    const appended = await client.audit.append(auditEntry({ userId: "u1" }) as Parameters<ServiceClient["audit"]["append"]>[0]);
    expect(appended).toMatchObject({ success: true, entryCount: 1, filename: "audit-trails/u1-2026-11-22.json" });
    const read = await client.audit.read("u1", { startDate: "2026-11-22", endDate: "2026-11-22" });
    expectTypeOf(read).toEqualTypeOf<AuditEntries>();
    expect(read.total).toBe(1);
    expect(read.entries[0]).toMatchObject({ userId: "u1", receivedAt: expect.any(String) });
    const verdict = await client.audit.verify("u1");
    expect(verdict).toMatchObject({ valid: true, userId: "u1", entries: 1, from: "2026-11-22", to: "2026-11-22" });

    const uploaded = await client.image.upload(new Blob([fixture("sample.png")]), "scan.png");
    expect(uploaded.filename).toBe("scan.png");
    const signed = await client.image.sign(uploaded.variants[0]!);
    expect(signed).toMatch(/[?&]sig=[0-9a-f]{64}/);
    expect((await app.request(new URL(signed).pathname + new URL(signed).search)).status).toBe(200);
    await client.image.delete(uploaded.id);

    expect(await client.keys.get("ACCOUNT_HASH")).toBe(KEYS.ACCOUNT_HASH);
    expect(await client.captcha.verify("token-1")).toEqual({ success: true, "error-codes": [] });
    expect((await client.user.removeCases("u1", ["C-1"])).cases).toEqual([]);
    expect((await client.user.delete("u1")).success).toBe(true);
  });

  it("the exchange calls: the documented operations with the data key; a package streamed in, a refusal thrown with its result", async () => {
    const seeded = await seedCase();
    const app = createService(seeded.ports, parseConfig({ ...KEYS, RATE_LIMITS: "off" }));
    const doc = (await (await app.request("/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
    const sent: string[] = [];
    const client = clientOf(app, {
      fetch: async (request) => {
        expect(request.headers.get("X-Custom-Auth-Key")).toBe(KEYS.R2_KEY_SECRET);
        const path = new URL(request.url).pathname;
        const operation = Object.entries(doc.paths).find(([template, methods]) =>
          request.method.toLowerCase() in methods && new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(path)
        );
        sent.push(`${request.method} ${operation?.[0] ?? `undocumented ${path}`}`);
        return await app.request(request);
      },
    });
    const zip = await client.exchange.exportCase(ANALYST, CASE);
    expect(zip.fileName).toBe(`${CASE}-export-20261122.zip`);
    expect(zip.contentType).toBe("application/zip");
    const bytes = await zip.bytes();
    const json = await client.exchange.exportCase(ANALYST, CASE, { format: "json", annotations: false });
    expect(JSON.parse(new TextDecoder().decode(await json.bytes())).files[0].annotations).toBeUndefined();
    expect((await client.exchange.exportAllCases(ANALYST, { format: "xlsx" })).fileName).toBe("all-cases-export-20261122.xlsx");
    expect(await client.exchange.previewImport(REVIEWER, new Blob([bytes]))).toMatchObject({ canImport: true, caseNumber: CASE, fileCount: 3 });
    const stream = new Blob([bytes]).stream();
    expect(await client.exchange.importCase(REVIEWER, stream, { fileName: "case.zip" })).toMatchObject({ success: true, filesImported: 3 });
    const again = await client.exchange.importCase(REVIEWER, bytes).catch((err: unknown) => err);
    expect(again).toBeInstanceOf(ServiceClientError);
    expect(again).toMatchObject({ status: 409, code: "CONFLICT", error: { details: { result: { success: false, overwritable: true } } } });
    const none = await client.exchange.exportConfirmations(REVIEWER, CASE).catch((err: unknown) => err);
    expect(none).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
    expect(await client.exchange.importConfirmations(ANALYST, "{}").catch((err: unknown) => err)).toMatchObject({ status: 400 });
    expect(sent.filter((line) => line.includes("undocumented"))).toEqual([]);
    expect(new Set(sent)).toEqual(new Set([
      "GET /exchange/{userUid}/cases/{caseNumber}",
      "GET /exchange/{userUid}/cases",
      "POST /exchange/{userUid}/imports",
      "GET /exchange/{userUid}/cases/{caseNumber}/confirmations",
      "POST /exchange/{userUid}/confirmations",
    ]));
  });

  it("throws ServiceClientError with the status and the standard error body", async () => {
    const { app } = testService();
    const client = clientOf(app);
    const missing = await client.user.get("nobody").catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(ServiceClientError);
    const error = missing as ServiceClientError;
    expect(error.status).toBe(404);
    expect(error.code).toBe("NOT_FOUND");
    expectTypeOf(error.code).toEqualTypeOf<ClientErrorCode | undefined>();
    expect(error.error).toMatchObject({ error: "Not Found", code: "NOT_FOUND", details: expect.any(Object) });
    const wrongKey = await clientOf(app, { dataKey: "wrong" }).data.get("u1/C-1/data.json").catch((err: unknown) => err);
    expect(wrongKey).toMatchObject({ status: 403, code: "FORBIDDEN" });
    // A key segment with "/" is encoded, so the service refuses that segment (400), never a different key.
    const slash = await client.data.get(["u1", "a/b", "data.json"]).catch((err: unknown) => err);
    expect(slash).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
  });

  it("refuses dot segments, empty segments and lone surrogates before sending (a Request resolves dot segments, so `..` reached another user's key or app)", async () => {
    const sent: string[] = [];
    const client = createClient({ baseUrl: "https://lab.example/forensic", ...keys, adminKey: "admin", fetch: async (request) => (sent.push(request.url), new Response("[]")) });
    const calls: [string, () => Promise<unknown>][] = [
      ["key with ..", () => client.data.get("attacker/../victim/C1/data.json")],
      ["segments climbing out of the mount", () => client.data.get(["..", "..", "other-app", "collect"])],
      ["delete through ..", () => client.data.delete("u1/C1/../../u2/C9/data.json")],
      ["case number ..", () => client.data.putCase("u1", "..", { caseNumber: "..", files: [], createdAt: "2026-11-25T00:00:00Z" })],
      ["case number .", () => client.data.getCase("u1", ".")],
      ["empty segment", () => client.data.get("u1//data.json")],
      ["uid ..", () => client.user.delete("..")],
      ["uid empty", () => client.user.get("")],
      ["cases of uid .", () => client.user.addCases(".", [{ caseNumber: "C-1" }])],
      ["delivery URL ..", () => client.image.sign("..")],
      ["image id .", () => client.image.delete(".")],
      ["key name ..", () => client.keys.get("..")],
      ["lone surrogate in a uid", () => client.user.get("u\uD800")],
      ["lone surrogate in a key", () => client.data.get(["u1", "\uDC00", "data.json"])],
      ["lone surrogate in an audit userId", () => client.audit.append(auditEntry({ userId: "u\uD800" }) as unknown as AuditEntryInput)],
      ["lone surrogate in a read's userId", () => client.audit.read("u\uDBFF")],
      ["lone surrogate in an owner", () => client.image.delete("img-1", { owner: "\uD800x" })],
    ];
    for (const [what, call] of calls) {
      const refused = await call().catch((err: unknown) => err);
      expect(refused, what).toBeInstanceOf(ServiceClientError);
      expect(refused, what).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
    }
    expect(sent).toEqual([]);
    // Dots inside a segment and a well-formed pair are ordinary names.
    await client.data.get(["u1", "..C", ".data.json"]);
    await client.user.get("u\uD83D\uDE00");
    expect(sent).toEqual(["https://lab.example/forensic/data/u1/..C/.data.json", "https://lab.example/forensic/user/u%F0%9F%98%80"]);
  });

  it("follows no redirect: the keys and the body never reach the other origin, the call fails naming where it was sent", async () => {
    const { createServer } = await import("node:http");
    const seen: { url: string; headers: Record<string, unknown> }[] = [];
    const thief = createServer((req, res) => {
      seen.push({ url: req.url ?? "", headers: req.headers });
      res.setHeader("Content-Type", "application/json").end('{"stolen":true}');
    });
    await new Promise<void>((ready) => thief.listen(0, "127.0.0.1", ready));
    const thiefPort = (thief.address() as { port: number }).port;
    const redirecting = createServer((req, res) => {
      req.resume();
      res.statusCode = req.method === "GET" ? 302 : 307;
      res.setHeader("Location", `http://localhost:${thiefPort}/steal`);
      res.end();
    });
    await new Promise<void>((ready) => redirecting.listen(0, "127.0.0.1", ready));
    try {
      const client = createClient({ baseUrl: `http://127.0.0.1:${(redirecting.address() as { port: number }).port}`, ...keys, adminKey: "admin", identityToken: "token" });
      const read = await client.user.get("u1").catch((err: unknown) => err);
      expect(read).toBeInstanceOf(ServiceClientError);
      expect(read).toMatchObject({ status: 302 });
      expect((read as Error).message).toContain(`redirected to http://localhost:${thiefPort}/steal`);
      expect(await client.data.put("u1/C-1/data.json", { secret: 1 }).catch((err: unknown) => err)).toMatchObject({ status: 307 });
      expect(seen).toEqual([]);
    } finally {
      await Promise.all([thief, redirecting].map((server) => new Promise((closed) => server.close(closed))));
    }
  });

  it("an unreadable answer is a ServiceClientError too: a success that is not JSON, an error body of megabytes (read to 64 KiB), an unknown code, Retry-After as a date", async () => {
    let pulled = 0;
    const answers: Record<string, () => Response> = {
      "/user/not-json": () => new Response("<html>proxy</html>", { status: 200 }),
      "/user/empty": () => new Response(null, { status: 204 }),
      "/user/huge": () =>
        new Response(new ReadableStream({ pull(controller) {
          pulled += 1;
          controller.enqueue(new Uint8Array(64 * 1024).fill(0x61));
        } }), { status: 500 }),
      "/user/odd-code": () => Response.json({ error: "Teapot", code: "<script>", message: "m", details: {} }, { status: 418 }),
      "/user/dated": () => new Response("busy", { status: 429, headers: { "Retry-After": new Date(Date.now() + 30_000).toUTCString() } }),
      "/user/negative": () => new Response("busy", { status: 429, headers: { "Retry-After": "-5" } }),
    };
    const client = createClient({ baseUrl: "http://service.test", ...keys, fetch: async (request) => answers[new URL(request.url).pathname]!() });
    const failure = (uid: string) => client.user.get(uid).catch((err: unknown) => err as ServiceClientError);
    expect(await failure("not-json")).toMatchObject({ status: 200, message: "200: the answer is not JSON", body: "<html>proxy</html>" });
    expect(await failure("empty")).toMatchObject({ status: 204, message: "204: the answer is not JSON" });
    const huge = await failure("huge");
    expect(huge).toMatchObject({ status: 500 });
    expect((huge.body as string).length).toBe(64 * 1024);
    expect(pulled).toBeLessThan(8);
    const odd = await failure("odd-code");
    expect(odd).toBeInstanceOf(ServiceClientError);
    expect([odd.code, odd.error]).toEqual([undefined, undefined]);
    expect((await failure("dated")).retryAfterSeconds).toBeGreaterThanOrEqual(28);
    expect((await failure("dated")).retryAfterSeconds).toBeLessThanOrEqual(31);
    expect((await failure("negative")).retryAfterSeconds).toBeUndefined();
  });

  it("sends the identity token (a function asked per call) and the admin key", async () => {
    const verifier = { verify: async (token: string) => {
      if (token !== "token-of-u1") throw new IdentityTokenError("bad signature");
      return { uid: "u1", email: "a@lab.example" };
    } };
    const { app } = testService({ ADMIN_AUTH: "admin-key-0123456789" }, { identity: verifier });
    let asked = 0;
    const asUser = clientOf(app, { identityToken: () => (asked++, "token-of-u1") });
    await asUser.user.put("u1", newUser);
    expect(asked).toBe(1);
    expect(await asUser.user.get("u1")).toMatchObject({ uid: "u1" });
    expect(await asUser.user.get("u2").catch((err: unknown) => err)).toMatchObject({ status: 403, code: "FORBIDDEN" });
    expect(await clientOf(app).user.get("u1").catch((err: unknown) => err)).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    const admin = clientOf(app, { adminKey: "admin-key-0123456789" });
    expect(await admin.user.get("u1")).toMatchObject({ uid: "u1" });
    const trail = await admin.audit.read("u1");
    expect(trail.entries.some((entry) => entry.action === "file-access" || entry.action === "user-profile-update")).toBe(true);
  });

  it("reaches a service mounted under a prefix, and workers deployed on their own", async () => {
    const { app } = testService();
    const parent = new Hono();
    parent.route("/forensic", app);
    const client = createClient({ baseUrl: "http://lab.test/forensic/", ...keys, fetch: async (request) => await parent.request(request) });
    expect(await client.health()).toEqual({ ok: true });
    expect(await client.data.get("u1/C-1/data.json")).toBeUndefined();
    const alone = createClient({ baseUrl: "http://unused.test", workers: { data: "http://lab.test/forensic/data" }, ...keys, fetch: async (request) => await parent.request(request) });
    expect(await alone.data.get("u1/C-1/data.json")).toBeUndefined();
  });

  it("appends an entry read back, typed as read: the fields the service writes are left out; an unreadable stand-in is refused before sending", async () => {
    const { app } = testService();
    const client = clientOf(app);
    await client.audit.append({ timestamp: "2026-11-22T12:00:00.000Z", userId: "u1", userEmail: "a@lab.example", action: "case-create", result: "success", details: {} });
    const [stored] = (await client.audit.read("u1")).entries;
    expect(stored).toMatchObject({ receivedAt: expect.any(String), seq: expect.any(Number), hash: expect.any(String) });
    // No cast: an entry as the service serves it is an entry to append.
    expectTypeOf<AuditEntry>().toExtend<Parameters<ServiceClient["audit"]["append"]>[0]>();
    expect(await client.audit.append(stored!)).toMatchObject({ success: true, entryCount: 2 });
    const again = (await client.audit.read("u1")).entries;
    expect(again.map((entry) => entry["seq"])).toEqual([2, 1]);
    expect(await client.audit.verify("u1")).toMatchObject({ valid: true, entries: 2 });

    const standIn: UnreadableAuditEntry = { ...stored!, unreadable: true, filename: "audit-trails/u1-2026-11-22.json", index: 0, reason: "not JSON" };
    const refused = await client.audit.append(standIn).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ServiceClientError);
    expect(refused).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
    expect((await client.audit.read("u1")).total).toBe(2);
  });

  it("reads a missing document as undefined, typed T | undefined (the service answers [] for it)", async () => {
    const { app } = testService();
    const client = clientOf(app);
    const missing = await client.data.get<{ annotations: string[] }>("u1/C-1/f1/data.json");
    expectTypeOf(missing).toEqualTypeOf<{ annotations: string[] } | undefined>();
    expect(missing).toBeUndefined();
    await client.data.put("u1/C-1/f1/data.json", { annotations: ["a"] });
    expect((await client.data.get<{ annotations: string[] }>("u1/C-1/f1/data.json"))?.annotations).toEqual(["a"]);
    await client.data.put("u1/C-1/f1/data.json", [1]);
    expect(await client.data.get("u1/C-1/f1/data.json")).toEqual([1]);
  });

  it("no answer is a ServiceClientError too: status 0, code NETWORK_ERROR, fetch's error as the cause (refused connection, an answer cut off)", async () => {
    const { createServer } = await import("node:net");
    // A port nothing listens on: one a server had, closed again.
    const closed = createServer();
    await new Promise<void>((ready) => closed.listen(0, "127.0.0.1", ready));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((done) => closed.close(done));
    const refused = await createClient({ baseUrl: `http://127.0.0.1:${closedPort}`, ...keys }).user.get("u1").catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ServiceClientError);
    expect(refused).toMatchObject({ status: 0, code: "NETWORK_ERROR", error: undefined });
    expect((refused as Error).cause).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain(`no answer from http://127.0.0.1:${closedPort}/user/u1`);

    // An answer that promises 1000 bytes and ends after 20.
    const cutting = createServer((socket) => {
      socket.once("data", () => socket.end("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"uid\":\"u1\",\"first"));
    });
    await new Promise<void>((ready) => cutting.listen(0, "127.0.0.1", ready));
    try {
      const cut = await createClient({ baseUrl: `http://127.0.0.1:${(cutting.address() as { port: number }).port}`, ...keys }).user.get("u1").catch((err: unknown) => err);
      expect(cut).toBeInstanceOf(ServiceClientError);
      expect(cut).toMatchObject({ status: 0, code: "NETWORK_ERROR" });
      expect((cut as Error).cause).toBeDefined();
    } finally {
      await new Promise((done) => cutting.close(done));
    }
  });

  it("the ./client entry runs createClient and ServiceClientError only, both named in docs/library.md", async () => {
    expect(Object.keys(await import("../../src/client/mod.ts")).sort()).toEqual(["ServiceClientError", "createClient"]);
    const readme = readFileSync(join(root, "docs/library.md"), "utf8");
    for (const name of ["createClient", "ServiceClientError", "ServiceRoutes"]) expect(readme).toContain(name);
  });

  it("carries no server code: outside src/client it imports types only", () => {
    const dir = join(root, "src/client");
    const imports = readdirSync(dir).filter((name) => name.endsWith(".ts")).flatMap((name) => {
      const source = readFileSync(join(dir, name), "utf8");
      return [...source.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gms)].map((match) => ({ name, typeOnly: match[2] !== undefined, from: match[3]! }));
    });
    const runtime = imports.filter((entry) => !entry.typeOnly && !entry.from.startsWith("./"));
    expect(runtime).toEqual([]);
  });
});
