/**
 * One HTTP suite, run against the service started under every runtime (ARCHITECTURE
 * "Testing"). Each test's title carries the runtime's name.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, spawnServe, type Served } from "../helpers/spawn-serve.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { fixture, uploadForm } from "../helpers/images.ts";
import { PDFDocument } from "pdf-lib";
import { type RawBody, RawConnection, sendPipelined, sendRawBytes } from "./raw-http.ts";
import { type LocalServices, startLocalServices } from "./local-services.ts";
import { sendRaw } from "../helpers/raw-request.ts";
import fc from "fast-check";
import { strToU8, unzipSync, zipSync } from "fflate";
import { anyRequest, type GeneratedRequest, propertyParameters } from "../helpers/request-arbitraries.ts";
import { KEYS } from "../helpers/service.ts";
import { reviewConformance } from "./review-suite.ts";
import { type AuditEntryInput, type CaseData, type ClientOptions, createClient, ServiceClientError } from "../../src/client/mod.ts";
import { calculateJwkThumbprint, type JWK } from "jose";
import { recipientKeyOf, sealPackage } from "../../src/core/exchange/mod.ts";

const SECRETS = {
  USER_DB_AUTH: "conf-user-key",
  R2_KEY_SECRET: "conf-data-key",
  KEYS_AUTH: "conf-keys-key",
  IMAGES_API_TOKEN: "conf-images-token",
  HMAC_KEY: "conf-hmac-key",
  ACCOUNT_HASH: "conf-account-hash",
  ALLOWED_ORIGIN: "https://lab.example",
  MAX_JSON_BYTES: "65536",
  METRICS_TOKEN: "conf-metrics-token",
  // The exchange worker signs packages and confirmations with it, and takes packages up to 2 MB.
  EXPORT_SIGNING_KEY: JSON.stringify({ kty: "EC", crv: "P-256", x: "HUazftKfKxmZjuGlChNxHj7K0ZS2x6p2UEcgJF6qVbE", y: "r4OglFNnBeYsHrE6nRp9yxIs7rNdK7KWzlStlc9pLjg", d: "yNdCyli0YGqiqF94mHS8WOIhC_VRWYeCwjeldbd0DDg", kid: "conf-lab" }),
  MAX_IMPORT_BYTES: "2000000",
  ADMIN_AUTH: "conf-admin-key",
  HISTORY_RETENTION_DAYS: "30",
};
const data = { "X-Custom-Auth-Key": SECRETS.R2_KEY_SECRET };
const ERROR_KEYS = ["code", "details", "error", "message"];

/** Registers the conformance suite for one runtime. */
export function conformance(runtime: Runtime, variant: { name: string; env: Record<string, string> } = { name: runtime, env: {} }): void {
  describe(`conformance on ${variant.name}`, () => {
    let dir: string;
    let served: Served;
    let url: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `fa-conf-${runtime}-`));
      served = await spawnServe({ runtime, dataDir: join(dir, "data"), env: { ...SECRETS, ...variant.env }, timeoutMs: 60_000 });
      url = served.url;
    }, 90_000);
    afterAll(async () => {
      const code = await served?.stop("SIGTERM");
      await rm(dir, { recursive: true, force: true });
      expect(code, `${runtime} exit code after SIGTERM`).toBe(0);
    }, 30_000);

    const t = (name: string) => `[${variant.name}] ${name}`;
    const call = (path: string, init: RequestInit = {}) => fetch(`${url}${path}`, init);
    const client = (options: Partial<ClientOptions> = {}) =>
      createClient({
        baseUrl: url,
        userKey: SECRETS.USER_DB_AUTH,
        dataKey: SECRETS.R2_KEY_SECRET,
        keysKey: SECRETS.KEYS_AUTH,
        imagesToken: SECRETS.IMAGES_API_TOKEN,
        ...options,
      });

    it(t("prints one line per worker with its base URL, as serve does"), () => {
      for (const worker of ["user", "image", "pdf", "data", "keys", "captcha", "audit"]) {
        expect(served.output(), worker).toMatch(new RegExp(`^${worker}\\s+${url}/${worker}$`, "m"));
      }
      // And where the API reference page is, before the ready line (a newcomer found /docs nowhere at start).
      expect(served.output()).toMatch(new RegExp(`^docs\\s+${url}/docs \\(the API reference, in a browser\\)\n(?:.*\n)*?ready `, "m"));
    });

    it(t("operations: X-Request-Id echoed, one JSON log line per request with the route pattern, /ready, /metrics behind its token"), async () => {
      const id = `conf-${runtime}-${Date.now()}`;
      const put = await call("/data/log-user/LOG-CASE/data.json?sig=s3cr3t", { method: "PUT", headers: { ...data, "X-Request-Id": id }, body: '{"caseNumber":"LOG-CASE"}' });
      expect(put.status).toBe(200);
      expect(put.headers.get("x-request-id")).toBe(id);
      expect((await call("/nowhere")).headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      const ready = await call("/ready");
      expect(ready.status).toBe(200);
      const readiness = await ready.json() as { ready: boolean; checks: Record<string, string> };
      expect(readiness.ready).toBe(true);
      expect(readiness.checks).toMatchObject({ data: "ok", audit: "ok", users: "ok", images: "ok", keys: "ok" });
      if (runtime !== "workerd") expect(readiness.checks.lock).toBe("ok");
      expect((await call("/metrics")).status).toBe(401);
      const metrics = await call("/metrics", { headers: { Authorization: `Bearer ${SECRETS.METRICS_TOKEN}` } });
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toMatch(/^http_requests_total\{worker="data",route="\/data\/\{userId\}\/\{caseNumber\}\/data\.json",method="PUT",status="200"\} \d+$/m);
      expect(text).not.toContain("log-user");
      if (runtime !== "workerd") expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
      // Node's server (and Deno's node:http) counts its connections, Bun's its requests in flight: this request's among them.
      if (runtime !== "workerd") expect(text).toMatch(/^http_open_connections [1-9]\d*$/m);
      // The line is written after the answer: wait for it (bounded).
      let line: Record<string, unknown> | undefined;
      for (let tries = 0; tries < 100 && line === undefined; tries++) {
        line = served.output().split("\n").filter((text) => text.startsWith("{")).map((text) => JSON.parse(text) as Record<string, unknown>).find((record) => record.requestId === id);
        if (line === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(line).toMatchObject({ level: "info", method: "PUT", route: "/data/{userId}/{caseNumber}/data.json", status: 200, worker: "data" });
      const output = served.output();
      for (const secret of ["log-user", "LOG-CASE", "s3cr3t", SECRETS.R2_KEY_SECRET]) expect(output).not.toContain(secret);
    }, 30_000);

    it(t("GET /health is 200 {ok:true}"), async () => {
      const response = await call("/health");
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ ok: true });
    });

    it(t("the typed client: health, user, data, audit, image, keys, captcha and pdf calls, errors as ServiceClientError"), async () => {
      const api = client();
      expect(await api.health()).toEqual({ ok: true });
      const profile = { email: "cli@lab.example", firstName: "Cli", lastName: "Ent", company: "Lab", permitted: true };
      expect(await api.user.put("client-u1", profile)).toMatchObject({ uid: "client-u1", ...profile, cases: [] });
      expect((await api.user.addCases("client-u1", [{ caseNumber: "C 1" }])).cases.map((c) => c.caseNumber)).toEqual(["C 1"]);
      const caseData: CaseData = { caseNumber: "C 1", files: [{ id: "f1", originalFilename: "é.png", uploadedAt: "2026-11-22T00:00:00Z" }], createdAt: "2026-11-22T00:00:00Z" };
      await api.data.putCase("client-u1", "C 1", caseData);
      expect(await api.data.getCase("client-u1", "C 1")).toEqual(caseData);
      expect(await (await call("/data/client-u1/C%201/data.json", { headers: data })).json()).toEqual(caseData);
      const appended = await api.audit.append(auditEntry({ userId: "client-u1" }) as AuditEntryInput);
      expect(appended).toMatchObject({ success: true, entryCount: 1 });
      expect((await api.audit.read("client-u1")).entries[0]).toMatchObject({ userId: "client-u1", receivedAt: expect.any(String) });
      const image = await api.image.upload(new Blob([fixture("sample.png")]), "scan.png");
      expect(image.variants).toEqual([`${url}/image/delivery/${image.id}/public`]);
      expect((await fetch(await api.image.sign(image.variants[0]!))).status).toBe(200);
      await api.image.delete(image.id);
      expect(await api.keys.get("ACCOUNT_HASH")).toBe(SECRETS.ACCOUNT_HASH);
      const noToken = await api.captcha.verify("").catch((err: unknown) => err);
      expect(noToken).toBeInstanceOf(ServiceClientError);
      expect(noToken).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
      const pdf = await api.pdf.render({
        imageUrl: `data:image/png;base64,${Buffer.from(fixture("sample.png")).toString("base64")}`,
        caseNumber: "C 1",
        annotationData: { boxAnnotations: [] },
        activeAnnotations: [],
      });
      expect(new TextDecoder().decode(pdf.subarray(0, 5))).toBe("%PDF-");
      const missing = await api.user.get("client-nobody").catch((err: unknown) => err);
      expect(missing).toMatchObject({ status: 404, code: "NOT_FOUND", error: { error: "Not Found" } });
      expect(await client({ userKey: "wrong" }).user.get("client-u1").catch((err: unknown) => err)).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
      expect((await api.user.removeCases("client-u1", ["C 1"])).cases).toEqual([]);
      // The user test counts the mails of its own deletion: this one deletes no account.
      expect(await api.user.delete("client-nobody").catch((err: unknown) => err)).toMatchObject({ status: 404, code: "NOT_FOUND" });
    }, 60_000);

    it(t("legal hold: every path that removes data (data, image, case list, account, history prune) is refused or skips the case, which stays whole; lifted, they work"), async () => {
      const api = client();
      const admin = client({ adminKey: SECRETS.ADMIN_AUTH });
      const uid = `hold-${runtime}`;
      await api.user.put(uid, { email: "ho@lab.example", firstName: "Ho", lastName: "Ld", company: "Lab", permitted: true });
      await api.user.addCases(uid, [{ caseNumber: "H-1" }]);
      const image = await api.image.upload(new Blob([fixture("sample.png")]), "held.png");
      const caseData: CaseData = { caseNumber: "H-1", files: [{ id: image.id, originalFilename: "held.png", uploadedAt: "2026-11-22T00:00:00Z" }], createdAt: "2026-11-22T00:00:00Z" };
      await api.data.putCase(uid, "H-1", caseData);
      await api.data.put([uid, "H-1", image.id, "data.json"], { boxAnnotations: [] });
      expect(await api.user.placeHold(uid, "H-1", "held").catch((err: unknown) => err)).toMatchObject({ status: 403, code: "FORBIDDEN" });
      expect((await admin.user.placeHold(uid, "H-1", "State v. Doe")).holds).toMatchObject([{ caseNumber: "H-1", imageIds: [image.id] }]);
      // Writes still work.
      await api.data.put([uid, "H-1", "notes.json"], { note: 1 });
      const refusals: (() => Promise<unknown>)[] = [
        () => api.data.delete([uid, "H-1", "data.json"]),
        () => api.data.delete([uid, "H-1", image.id, "data.json"]),
        () => api.data.delete([uid, "H-1", "notes.json"]),
        () => api.image.delete(image.id),
        () => api.user.removeCases(uid, ["H-1"]),
        () => api.user.delete(uid),
      ];
      // Pruning the histories leaves every key of the held case whole.
      const pruned = await admin.data.pruneHistories();
      expect(pruned.held).toEqual(expect.arrayContaining([`${uid}/H-1/data.json`, `${uid}/H-1/${image.id}/data.json`, `${uid}/H-1/notes.json`]));
      expect(pruned.pruned.filter((entry) => entry.key.startsWith(`${uid}/`))).toEqual([]);
      for (const refused of refusals) {
        const err = await refused().then(() => "removed", (err: unknown) => err);
        expect(err).toMatchObject({ status: 409, code: "CONFLICT" });
        expect(JSON.stringify((err as ServiceClientError).error)).toContain('"caseNumber":"H-1"');
      }
      expect(await api.data.getCase(uid, "H-1")).toEqual(caseData);
      expect(await api.data.history([uid, "H-1", "data.json"], { verify: true })).toMatchObject({ valid: true, current: 1, versions: [{ version: 1 }] });
      expect(await api.data.get([uid, "H-1", image.id, "data.json"])).toEqual({ boxAnnotations: [] });
      expect(await api.data.get([uid, "H-1", "notes.json"])).toEqual({ note: 1 });
      expect((await api.user.get(uid)).cases.map((c) => c.caseNumber)).toEqual(["H-1"]);
      expect((await fetch(await api.image.sign(image.variants[0]!))).status).toBe(200);
      expect((await admin.user.holds(uid)).holds.map((hold) => hold.caseNumber)).toEqual(["H-1"]);
      expect((await admin.user.liftHold(uid, "H-1")).holds).toEqual([]);
      await api.data.delete([uid, "H-1", "notes.json"]);
      await api.image.delete(image.id);
      expect((await api.user.removeCases(uid, ["H-1"])).cases).toEqual([]);
      const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
      const trail = await api.audit.read(uid, { startDate: day(-1), endDate: day(1) });
      expect(trail.entries.map((entry) => entry.action).filter((action) => action.startsWith("legal-hold")).sort()).toEqual(["legal-hold-lift", "legal-hold-place"]);
    }, 60_000);

    it(t("record history: each PUT and DELETE is a version; ?history, ?version=N exactly as stored, &verify=true; the client reads them"), async () => {
      const key = "/data/hist-u1/HIST%201/data.json";
      const first = '{ "caseNumber": "HIST 1",\n  "v": 1 }';
      expect((await call(key, { method: "PUT", headers: data, body: first })).status).toBe(200);
      expect((await call(key, { method: "PUT", headers: data, body: '{"caseNumber":"HIST 1","v":2}' })).status).toBe(200);
      expect((await call(key, { method: "DELETE", headers: data })).status).toBe(200);
      // The v1.0 answers are unchanged: a deleted document reads [] and deletes as 404.
      expect(await (await call(key, { headers: data })).text()).toBe("[]");
      expect((await call(key, { method: "DELETE", headers: data })).status).toBe(404);
      expect((await call(key, { method: "PUT", headers: data, body: '{"caseNumber":"HIST 1","v":4}' })).status).toBe(200);
      const listed = await call(`${key}?history`, { headers: data });
      expect(listed.status).toBe(200);
      const history = await listed.json() as { key: string; current: number; versions: { version: number; deleted: boolean; writtenBy: string; size: number; sha256: string; previous: string | null }[] };
      expect(history.key).toBe("hist-u1/HIST 1/data.json");
      expect(history.current).toBe(4);
      expect(history.versions.map((v) => [v.version, v.deleted, v.writtenBy])).toEqual([[1, false, "data-key"], [2, false, "data-key"], [3, true, "data-key"], [4, false, "data-key"]]);
      expect(history.versions[0]!.size).toBe(new TextEncoder().encode(first).length);
      expect(history.versions[0]!.previous).toBeNull();
      const v1 = await call(`${key}?version=1`, { headers: data });
      expect(v1.status).toBe(200);
      expect(await v1.text()).toBe(first);
      for (const [query, status] of [["version=3", 404], ["version=9", 404], ["version=0", 400], ["version=abc", 400], ["history&version=1", 400], ["history&verify=maybe", 400], ["version=1&version=2", 400], ["history&history", 400], ["history&verify=true&verify=false", 400], ["verify=true", 400]] as const) {
        const answer = await call(`${key}?${query}`, { headers: data });
        expect(answer.status, query).toBe(status);
        expect(Object.keys(await answer.json() as object).sort(), query).toEqual(ERROR_KEYS);
      }
      expect((await call("/data/hist-u1/NEVER/data.json?history", { headers: data })).status).toBe(404);
      expect((await call(`${key}?history`, { headers: { "X-Custom-Auth-Key": "wrong" } })).status).toBe(403);
      expect(await (await call(`${key}?history&verify=true`, { headers: data })).json()).toMatchObject({ current: 4, valid: true });
      const api = client();
      expect(await api.data.history(["hist-u1", "HIST 1", "data.json"], { verify: true })).toMatchObject({ current: 4, valid: true, versions: history.versions });
      expect(await api.data.version(["hist-u1", "HIST 1", "data.json"], 2)).toEqual({ caseNumber: "HIST 1", v: 2 });
      const bytes = await api.data.versionBytes(["hist-u1", "HIST 1", "data.json"], 1);
      expect(Buffer.from(await crypto.subtle.digest("SHA-256", bytes)).toString("hex")).toBe(history.versions[0]!.sha256);
      expect(await api.data.version(["hist-u1", "HIST 1", "data.json"], 3).catch((err: unknown) => err)).toMatchObject({ status: 404, code: "NOT_FOUND" });
      const doc = await (await call("/openapi.json")).json() as { components: { schemas: Record<string, unknown> } };
      expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["KeyHistory", "VersionRecord"]));
    }, 60_000);

    it(t("GET /docs serves the API reference page and its assets from the service"), async () => {
      const page = await call("/docs");
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain("/docs/assets/swagger-ui-dist/swagger-ui-bundle.js");
      const script = await call("/docs/assets/swagger-ui-dist/swagger-ui-bundle.js");
      expect(script.status).toBe(200);
      expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
      expect((await script.text()).length).toBeGreaterThan(1_000_000);
      expect((await call("/docs/assets/swagger-ui-dist/swagger-ui.css")).status).toBe(200);
    }, 60_000);

    it(t("GET /openapi.json is OpenAPI 3.1 with the data routes"), async () => {
      const doc = (await (await call("/openapi.json")).json()) as { openapi: string; paths: Record<string, unknown> };
      expect(doc.openapi).toBe("3.1.0");
      expect(Object.keys(doc.paths)).toContain("/data/{userId}/{caseNumber}/{document}");
    });

    it(t("data: missing document is [], PUT then GET round-trips, DELETE then 404"), async () => {
      expect(await (await call("/data/u1/C-1/data.json", { headers: data })).json()).toEqual([]);
      const body = JSON.stringify({ caseNumber: "C-1", files: [{ id: "f1", originalFilename: "é.png", uploadedAt: "2026-11-22T00:00:00Z" }] });
      const put = await call("/data/u1/C-1/data.json", { method: "PUT", headers: data, body });
      expect(put.status).toBe(200);
      expect(await put.json()).toEqual({ success: true });
      expect(await (await call("/data/u1/C-1/data.json", { headers: data })).text()).toBe(body);
      expect((await call("/data/u1/C-1/data.json", { method: "DELETE", headers: data })).status).toBe(200);
      const again = await call("/data/u1/C-1/data.json", { method: "DELETE", headers: data });
      expect(again.status).toBe(404);
      expect(await again.json()).toMatchObject({ code: "NOT_FOUND" });
    });

    it(t("data: percent-encoded segments are decoded once"), async () => {
      await call("/data/u1/case%201/data.json", { method: "PUT", headers: data, body: "[1]" });
      expect(await (await call("/data/u1/case%201/data.json", { headers: data })).json()).toEqual([1]);
    });

    it(t("a path's dot segments (`..`, `.`, `%2e%2e`, `.%2E`) resolve as the URL standard says, the same on every runtime"), async () => {
      const body = JSON.stringify({ caseNumber: "dots" });
      expect((await call("/data/dots2/C-1/data.json", { method: "PUT", headers: data, body })).status).toBe(200);
      const paths = ["/data/dots1/%2e%2e/dots2/C-1/data.json", "/data/dots1/../dots2/C-1/data.json", "/data/dots1/.%2E/dots2/./C-1/data.json", "/data/dots2/%2e/C-1/data.json"];
      for (const path of paths) expect(await sendRaw(url, { method: "GET", path, headers: data }), path).toEqual({ status: 200, body });
      // A write through a dot segment stores the resolved key, with its body.
      const put = await sendRaw(url, { method: "PUT", path: "/data/dots1/%2e%2e/dots3/C-1/data.json", headers: data, body });
      expect(put.status).toBe(200);
      expect(await (await call("/data/dots3/C-1/data.json", { headers: data })).text()).toBe(body);
      expect(await sendRaw(url, { method: "GET", path: "/data/%2e%2e/health", headers: {} })).toEqual({ status: 200, body: '{"ok":true}' });
    });

    it(t("a path with a backslash or a Host that is not one is a 400 in the standard body (Bun's server reads `\\` as `/` first)"), async () => {
      const cases: [string, Record<string, string>][] = [
        ["/data/dots1\\..\\dots2/C-1/data.json", data],
        // Node's server refuses these before a Request exists; on Deno and Bun the adapter does
        // (on Deno a delivery URL was a 500; on Bun the path's first segment became the host: a 404).
        ["/health", { Host: "a b" }],
        ["/image/delivery/x/public?exp=1&sig=a", { Host: "a b" }],
        ["/data/u1/C-1/data.json", { ...data, Host: "[::1" }],
        // A Host holding a path, a query or a user: on Deno the first read `/data.json` as `/data/dots2/C-1/data.json` (a 200).
        ["/data.json", { ...data, Host: `${new URL(url).host}/data/dots2/C-1` }],
        ["/health", { Host: "h?x" }],
        ["/health", { Host: "u@h" }],
      ];
      for (const [path, headers] of cases) {
        const answer = await sendRaw(url, { method: "GET", path, headers });
        if (runtime === "bun" && path.includes("\\")) {
          expect(answer.status, path).toBeLessThan(500);
          continue;
        }
        expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(400);
        expect(Object.keys(JSON.parse(answer.body) as object).sort()).toEqual(ERROR_KEYS);
        // The same words on every runtime, as Node's server says them (Bun said "Invalid URL" for every Host it refused).
        if (headers.Host !== undefined) {
          const expected = /[/?#@\\]/.test(headers.Host) ? "Invalid host header" : "Invalid URL";
          expect((JSON.parse(answer.body) as { message: string }).message, `${path} ${JSON.stringify(headers)}`).toBe(`The request cannot be read: ${expected}`);
        }
      }
    });

    it(t("a request without a Host (HTTP/1.0, or `Host:` empty) is addressed to the server itself, as Node's server does"), async () => {
      const key = `X-Custom-Auth-Key: ${SECRETS.R2_KEY_SECRET}`;
      const body = JSON.stringify({ caseNumber: "no-host" });
      const requests: [string, string, number, string][] = [
        ["HTTP/1.0 without a Host", "GET /health HTTP/1.0\r\n\r\n", 200, '{"ok":true}'],
        ["an empty Host", "GET /health HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n", 200, '{"ok":true}'],
        [
          "a PUT with an empty Host",
          `PUT /data/nohost/C-1/data.json HTTP/1.1\r\nHost:\r\n${key}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
          200,
          '{"success":true}',
        ],
        ["a GET of it over HTTP/1.0", `GET /data/nohost/C-1/data.json HTTP/1.0\r\n${key}\r\n\r\n`, 200, body],
      ];
      for (const [what, bytes, status, answerBody] of requests) {
        expect(await sendRawBytes(new URL(url), bytes), what).toMatchObject({ status, body: answerBody });
      }
    });

    it(t("an absolute-form request target with a user part (http://u:p@host/…) is answered as its path, as Node's server does (start:workerd: a 500 before)"), async () => {
      const host = new URL(url).host;
      const key = `X-Custom-Auth-Key: ${SECRETS.R2_KEY_SECRET}`;
      const body = JSON.stringify({ caseNumber: "userinfo" });
      const requests: [string, string, number, string][] = [
        ["GET with user and password", `GET http://u:p@${host}/health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, 200, '{"ok":true}'],
        [
          "PUT with a user",
          `PUT http://u@${host}/data/userinfo/C-1/data.json HTTP/1.1\r\nHost: ${host}\r\n${key}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
          200,
          '{"success":true}',
        ],
        ["GET of it", `GET /data/userinfo/C-1/data.json HTTP/1.1\r\nHost: ${host}\r\n${key}\r\nConnection: close\r\n\r\n`, 200, body],
      ];
      for (const [what, bytes, status, answerBody] of requests) {
        expect(await sendRawBytes(new URL(url), bytes), what).toMatchObject({ status, body: answerBody });
      }
    });

    it(t("HEAD says the length its GET sends, on every runtime (Bun and Deno wrote Content-Length: 0)"), async () => {
      const host = new URL(url).host;
      for (const [path, length] of [["/health", '{"ok":true}'.length], ["/keys/USER_DB_AUTH", SECRETS.USER_DB_AUTH.length]] as const) {
        const answer = await sendRawBytes(new URL(url), `HEAD ${path} HTTP/1.1\r\nHost: ${host}\r\nX-Custom-Auth-Key: ${SECRETS.KEYS_AUTH}\r\nConnection: close\r\n\r\n`);
        expect(answer.status, path).toBe(200);
        expect(answer.headers["content-length"], path).toBe(String(length));
        expect(answer.body, path).toBe("");
      }
    });

    // Bun's own server closes such a connection without an answer (a bare Bun.serve does too).
    it.skipIf(runtime === "bun")(t("pipelined in one packet, a PUT then a GET of the same key: the GET reads what the PUT stored (RFC 9112 9.3.2: in order unless all are safe)"), async () => {
      const host = new URL(url).host;
      const key = `X-Custom-Auth-Key: ${SECRETS.R2_KEY_SECRET}`;
      for (let round = 0; round < 3; round++) {
        const path = `/data/pipelined/C-${round}/data.json`;
        const body = JSON.stringify({ round });
        const [put, get] = await sendPipelined(new URL(url), [
          `PUT ${path} HTTP/1.1\r\nHost: ${host}\r\n${key}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${key}\r\n\r\n`,
        ]);
        expect(put!.status).toBe(200);
        expect(get!.status).toBe(200);
        expect(get!.body, `round ${round}`).toBe(body);
      }
    });

    it(t("a request with Connection: close is answered even when more bytes follow it in the packet (they are no request to answer, RFC 9112 9.6)"), async () => {
      const host = new URL(url).host;
      const answer = await sendRawBytes(new URL(url), `GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\nGET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      expect(answer).toMatchObject({ status: 200, body: '{"ok":true}' });
    });

    // Bun's own server drops such a connection without an answer.
    it.skipIf(runtime === "bun")(t("a body cut short by the client closing its side is the 400 docs/api.md names, on every runtime"), async () => {
      const host = new URL(url).host;
      const answer = await sendRawBytes(
        new URL(url),
        `PUT /data/cutshort/C-1/data.json HTTP/1.1\r\nHost: ${host}\r\nX-Custom-Auth-Key: ${SECRETS.R2_KEY_SECRET}\r\nContent-Length: 100\r\n\r\n{"a":1}`,
        15_000,
        { halfClose: true },
      );
      expect(answer.status).toBe(400);
      expect((JSON.parse(answer.body) as { message: string }).message).toMatch(/^Request body ended before it was complete/);
    });

    it(t("an Expect other than 100-continue is answered as any request, on every runtime (Node answered a bare 417)"), async () => {
      const host = new URL(url).host;
      const answer = await sendRawBytes(new URL(url), `GET /health HTTP/1.1\r\nHost: ${host}\r\nExpect: foo\r\nConnection: close\r\n\r\n`);
      expect(answer).toMatchObject({ status: 200, body: '{"ok":true}' });
    });

    it(t("data: bad input is a 400/403/405/413 standard body, never 500"), async () => {
      const cases: [string, RequestInit, number][] = [
        ["/data/u1/C-1/data.json", { method: "PUT", headers: data, body: "{not json" }, 400],
        ["/data/u1/C-1/data.json", { method: "PUT", headers: data, body: new Uint8Array([0x22, 0xff, 0x22]) }, 400],
        ["/data/u1/C-1/data.txt", { headers: data }, 400],
        ["/data/u1%2F..%2F..%2Fsecrets.json", { headers: data }, 400],
        ["/data/u1/..%5C..%5Cx.json", { headers: data }, 400],
        ["/data/u1/a%00b.json", { headers: data }, 400],
        ["/data/u1/C-1/data.json", { headers: { "X-Custom-Auth-Key": "wrong" } }, 403],
        ["/data/u1/C-1/data.json", { method: "POST", headers: data, body: "{}" }, 405],
        ["/data/u1/C-1/data.json", { method: "PUT", headers: data, body: JSON.stringify({ pad: "x".repeat(70_000) }) }, 413],
      ];
      for (const [path, init, status] of cases) {
        const response = await call(path, init);
        expect(response.status, `${init.method ?? "GET"} ${path}`).toBe(status);
        const body = (await response.json()) as Record<string, unknown>;
        expect(Object.keys(body).sort()).toEqual(["code", "details", "error", "message"]);
      }
    });

    it(t("audit: 64 concurrent POSTs give 64 entries and entryCounts 1..64"), async () => {
      // Through the data worker's endpoint (raw) and the typed client (the audit worker's).
      const entry = (i: number) => auditEntry({ userId: "conc", details: { validationErrors: [], seq: i } }) as AuditEntryInput;
      const responses = await Promise.all(
        Array.from({ length: 64 }, (_, i) =>
          i % 2 === 0
            ? call("/data/audit/?userId=conc", {
              method: "POST",
              headers: { ...data, "Content-Type": "application/json" },
              body: JSON.stringify(entry(i)),
            }).then((r) => r.json() as Promise<{ entryCount: number }>)
            : client().audit.append(entry(i))
        ),
      );
      expect(responses.map((r) => r.entryCount).sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
      const listed = await client().audit.read("conc");
      expect(listed.total).toBe(64);
      // The 64 concurrent appends form one gap-free hash chain whose head names the newest.
      const verdict = await client().audit.verify("conc");
      expect(verdict).toMatchObject({ valid: true, userId: "conc", entries: 64, unchained: 0 });
      expect(verdict.head).toMatchObject({ seq: 64 });
    }, 60_000);

    it(t("audit: validation and date-range errors are 400"), async () => {
      const bad = await call("/audit/audit/?userId=u1", { method: "POST", headers: data, body: JSON.stringify(auditEntry({ action: "nope" })) });
      expect(bad.status).toBe(400);
      expect((await call("/audit/audit/", { headers: data })).status).toBe(400);
      expect((await call("/audit/audit/?userId=u1&startDate=2026-02-03&endDate=2026-02-01", { headers: data })).status).toBe(400);
      expect((await call("/audit/audit/?userId=u1&startDate=2024-01-01&endDate=2025-06-01", { headers: data })).status).toBe(400);
      expect((await call("/audit/audit/?userId=u1", { headers: { "X-Custom-Auth-Key": "no" } })).status).toBe(403);
    });

    it(t("keys: allow-listed key as text, secrets never, bad key 403"), async () => {
      const keys = { "X-Custom-Auth-Key": SECRETS.KEYS_AUTH };
      const ok = await call("/keys/ACCOUNT_HASH", { headers: keys });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toBe(SECRETS.ACCOUNT_HASH);
      for (const name of ["KEYS_AUTH", "HMAC_KEY", "__proto__", "PATH"]) {
        expect((await call(`/keys/${name}`, { headers: keys })).status, name).toBe(404);
      }
      expect((await call("/keys/ACCOUNT_HASH", { headers: data })).status).toBe(403);
    });

    it(t("captcha: missing token 400, other methods 405"), async () => {
      expect((await call("/captcha/", { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } })).status).toBe(400);
      expect((await call("/captcha/", { method: "GET" })).status).toBe(405);
    });

    it(t("image: upload, sign, fetch the same bytes with the signed URL alone, delete, then 404"), async () => {
      const bearer = { Authorization: `Bearer ${SECRETS.IMAGES_API_TOKEN}` };
      const png = fixture("sample.png");
      const uploaded = await call("/image/", { method: "POST", body: uploadForm(png, "item 1.png"), headers: bearer });
      expect(uploaded.status).toBe(200);
      const { result } = (await uploaded.json()) as { result: { id: string; variants: string[]; requireSignedURLs: boolean } };
      expect(result.requireSignedURLs).toBe(true);
      expect(result.variants).toEqual([`${url}/image/delivery/${result.id}/public`]);
      const signing = await call(`/image/${result.variants[0]}`, { headers: bearer });
      expect(signing.status).toBe(200);
      const signed = await signing.text();
      // Signed as Cloudflare Images documents it: hex HMAC-SHA256 with HMAC_KEY over path?query without sig.
      const unsigned = new URL(signed);
      const sig = unsigned.searchParams.get("sig");
      unsigned.searchParams.delete("sig");
      const hmacKey = await crypto.subtle.importKey("raw", new TextEncoder().encode(SECRETS.HMAC_KEY), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      const expected = await crypto.subtle.sign("HMAC", hmacKey, new TextEncoder().encode(`${unsigned.pathname}?${unsigned.searchParams.toString()}`));
      expect(sig).toBe(Buffer.from(expected).toString("hex"));
      const served = await fetch(signed);
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toBe("image/png");
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(png);
      const tampered = new URL(signed);
      tampered.searchParams.set("exp", String(Number(tampered.searchParams.get("exp")) + 1));
      expect((await fetch(tampered)).status).toBe(403);
      expect((await call(`/image/${result.id}`, { method: "DELETE", headers: bearer })).status).toBe(200);
      expect((await call(`/image/${result.id}`, { method: "DELETE", headers: bearer })).status).toBe(404);
      expect((await fetch(signed)).status).toBe(404);
      expect((await call("/image/", { method: "POST", body: uploadForm(fixture("not-an-image.png"), "x.png"), headers: bearer })).status).toBe(400);
    });

    it(t("pdf: a report from a data: URL is a Letter-size PDF; bad input 400, GET 405"), async () => {
      const png = fixture("sample.png");
      const body = {
        imageUrl: `data:image/png;base64,${Buffer.from(png).toString("base64")}`,
        caseNumber: "CONF-1",
        annotationData: { boxAnnotations: [{ id: "b1", x: 10, y: 10, width: 20, height: 20, color: "#ff0000" }], additionalNotes: "Ελληνικά и кириллица" },
        activeAnnotations: ["box", "notes"],
      };
      const rendered = await call("/pdf/", { method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
      expect(rendered.status).toBe(200);
      expect(rendered.headers.get("content-type")).toBe("application/pdf");
      const pdf = await PDFDocument.load(await rendered.arrayBuffer());
      expect(pdf.getPage(0).getSize()).toEqual({ width: 612, height: 792 });
      const bad = await call("/pdf/", { method: "POST", body: JSON.stringify({ ...body, activeAnnotations: ["box"], annotationData: { boxAnnotations: [{ x: 120 }] } }), headers: { "Content-Type": "application/json" } });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ code: "VALIDATION_ERROR" });
      expect((await call("/pdf/", { method: "GET" })).status).toBe(405);
    });

    it(t("user: create 201, assign cases, GET, DELETE the account (two mails), then 404; bad key 401"), async () => {
      const user = { "X-Custom-Auth-Key": SECRETS.USER_DB_AUTH };
      const profile = { email: "ana@lab.example", firstName: "Ana", lastName: "Ruiz", company: "State Lab", permitted: true };
      expect((await call("/user/conf-u1", { method: "PUT", headers: user, body: JSON.stringify(profile) })).status).toBe(201);
      const assigned = await call("/user/conf-u1/cases", { method: "PUT", headers: user, body: JSON.stringify({ cases: [{ caseNumber: "C-1" }, { caseNumber: "C-1" }] }) });
      expect(((await assigned.json()) as { cases: unknown[] }).cases).toHaveLength(1);
      await call("/data/conf-u1/C-1/data.json", { method: "PUT", headers: data, body: JSON.stringify({ caseNumber: "C-1", files: [], createdAt: "2026-11-22T00:00:00Z" }) });
      expect((await call("/user/conf-u1", { headers: { "X-Custom-Auth-Key": "wrong" } })).status).toBe(401);
      expect(await (await call("/user/conf-u1", { headers: user })).json()).toMatchObject({ uid: "conf-u1", ...profile });
      const deleted = await call("/user/conf-u1", { method: "DELETE", headers: user });
      expect(deleted.status).toBe(200);
      expect(await deleted.json()).toMatchObject({ success: true });
      expect((await call("/user/conf-u1", { headers: user })).status).toBe(404);
      expect(await (await call("/data/conf-u1/C-1/data.json", { headers: data })).json()).toEqual([]);
      expect((await readdir(join(dir, "data", "outbox"))).filter((name) => name.endsWith(".eml"))).toHaveLength(2);
    });

    it(t("exchange: analyst exports (ZIP signed, JSON, CSV, every case), reviewer imports (preview, 409, refusals write nothing), confirms, analyst imports the confirmations, all over HTTP"), async () => {
      const api = client();
      const user = { "X-Custom-Auth-Key": SECRETS.USER_DB_AUTH };
      const [analyst, reviewer] = ["conf-analyst", "conf-reviewer"];
      for (const uid of [analyst, reviewer]) {
        await api.user.put(uid, { email: `${uid}@lab.example`, firstName: uid, lastName: "Examiner", company: "State Lab", permitted: true });
      }
      await api.user.addCases(analyst, [{ caseNumber: "CX-1" }]);
      const images = [await api.image.upload(new Blob([fixture("sample.png")]), "bullet.png"), await api.image.upload(new Blob([fixture("sample.jpg")]), "casing.jpg")];
      await api.data.putCase(analyst, "CX-1", { caseNumber: "CX-1", files: images.map((image, i) => ({ id: image.id, originalFilename: `item-${i}.png`, uploadedAt: "2026-11-02T00:00:00.000Z" })), createdAt: "2026-11-01T00:00:00.000Z" });
      await api.data.put([analyst, "CX-1", images[0]!.id, "data.json"], { leftCase: "CX-1", rightCase: "Q-1", leftItem: "1", rightItem: "2", includeConfirmation: true, updatedAt: "2026-11-03T00:00:00.000Z", boxAnnotations: [{ id: "b1", x: 1, y: 2, width: 3, height: 4, color: "#ff0000", timestamp: "2026-11-03T00:00:00.000Z" }] });

      const exported = await call(`/exchange/${analyst}/cases/CX-1`, { headers: data });
      expect(exported.status).toBe(200);
      expect(exported.headers.get("content-type")).toBe("application/zip");
      expect(exported.headers.get("content-disposition")).toMatch(/^attachment; filename="CX-1-export-\d{8}\.zip"/);
      const zip = new Uint8Array(await exported.arrayBuffer());
      const entries = unzipSync(zip);
      expect(Object.keys(entries).sort()).toEqual(["CX-1_data.json", "FORENSIC_MANIFEST.json", "READ_ONLY_INSTRUCTIONS.txt", "README.txt", `images/item-0-${images[0]!.id}.png`, `images/item-1-${images[1]!.id}.png`].sort());
      expect(entries[`images/item-1-${images[1]!.id}.png`]).toEqual(fixture("sample.jpg"));
      expect(JSON.parse(new TextDecoder().decode(entries["FORENSIC_MANIFEST.json"]))).toMatchObject({ totalFiles: 3, signature: { algorithm: "ES256", keyId: "conf-lab" } });
      const json = await call(`/exchange/${analyst}/cases/CX-1?format=json&annotations=false`, { headers: data });
      expect(((await json.json()) as { files: { annotations?: unknown }[] }).files.map((file) => file.annotations)).toEqual([undefined, undefined]);
      const csv = await call(`/exchange/${analyst}/cases/CX-1?format=csv&metadata=false`, { headers: data });
      expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
      expect(await csv.text()).toContain('"File ID"');
      const all = await call(`/exchange/${analyst}/cases?format=xlsx`, { headers: data });
      expect(all.status).toBe(200);
      expect(unzipSync(new Uint8Array(await all.arrayBuffer()))["xl/workbook.xml"]).toBeDefined();
      expect(((await (await call(`/exchange/${analyst}/cases`, { headers: data })).json()) as { cases: unknown[] }).cases).toHaveLength(1);
      const missing = await call(`/exchange/${analyst}/cases/NO-SUCH`, { headers: data });
      expect(missing.status).toBe(404);
      expect(Object.keys(await missing.json()).sort()).toEqual(ERROR_KEYS);
      expect((await call(`/exchange/${analyst}/cases/CX-1`, { headers: { "X-Custom-Auth-Key": "wrong" } })).status).toBe(403);

      const post = (path: string, body: BodyInit, headers: Record<string, string> = {}) => call(path, { method: "POST", headers: { ...data, "Content-Type": "application/zip", ...headers }, body });
      const readOnly = async () => ((await (await call(`/user/${reviewer}`, { headers: user })).json()) as { readOnlyCases?: unknown[] }).readOnlyCases ?? [];
      const preview = await post(`/exchange/${reviewer}/imports?preview=true`, zip);
      expect(await preview.json()).toMatchObject({ caseNumber: "CX-1", fileCount: 2, canImport: true, signatureValid: true });
      const tampered = zipSync({ ...entries, "CX-1_data.json": strToU8(new TextDecoder().decode(entries["CX-1_data.json"]).replace("Q-1", "Q-2")) }, { level: 0 });
      for (const [body, status] of [[tampered, 400], [strToU8("not a zip"), 400], [new Uint8Array(2_000_001), 413]] as const) {
        const refused = await post(`/exchange/${reviewer}/imports`, body);
        expect(refused.status).toBe(status);
        expect(Object.keys(await refused.json()).sort()).toEqual(ERROR_KEYS);
      }
      expect(await readOnly()).toEqual([]);
      expect((await post(`/exchange/${analyst}/imports`, zip)).status).toBe(400); // the original analyst
      const imported = await api.exchange.importCase(reviewer, zip, { fileName: "CX-1.zip" });
      expect(imported).toMatchObject({ success: true, caseNumber: "CX-1", filesImported: 2, annotationsImported: 1, signatureValid: true });
      const conflict = await post(`/exchange/${reviewer}/imports`, zip);
      expect(conflict.status).toBe(409);
      expect(await conflict.json()).toMatchObject({ code: "CONFLICT", details: { result: { overwritable: true } } });
      expect(await readOnly()).toHaveLength(1);

      // The reviewer confirms the first image in the read-only case (as the browser client does), and sends it back.
      const document = (await api.data.getCase(reviewer, "CX-1")) as CaseData & { originalImageIds: Record<string, string> };
      const confirmedAt = new Date().toISOString();
      await api.data.putCase(reviewer, "CX-1", { ...document, confirmations: { [images[0]!.id]: [{ fullName: "Rev Iewer", badgeId: "B-1", timestamp: confirmedAt, confirmationId: "CONF-CONF000001", confirmedBy: reviewer, confirmedByEmail: `${reviewer}@lab.example`, confirmedByCompany: "State Lab", confirmedAt }] } } as CaseData);
      const confirmations = await api.exchange.exportConfirmations(reviewer, "CX-1");
      expect(confirmations.fileName).toMatch(/^confirmation-data-CX-1-\d{4}-\d\d-\d\d\.json$/);
      const file = new TextDecoder().decode(await confirmations.bytes());
      expect(JSON.parse(file).metadata.signature).toMatchObject({ keyId: "conf-lab" });
      const changed = await call(`/exchange/${analyst}/confirmations`, { method: "POST", headers: data, body: file.replace("Rev Iewer", "Other") });
      expect(changed.status).toBe(400);
      expect(await api.exchange.importConfirmations(analyst, file)).toMatchObject({ success: true, imagesUpdated: 1, confirmationsImported: 1, signatureValid: true });
      expect(await api.data.get([analyst, "CX-1", images[0]!.id, "data.json"])).toMatchObject({ includeConfirmation: true, confirmationData: { confirmationId: "CONF-CONF000001" } });
      const actions = async (uid: string) => ((await api.audit.read(uid)).entries).map((entry) => `${entry.action}:${entry.result}`).sort();
      expect(await actions(analyst)).toEqual(expect.arrayContaining(["case-export:success", "case-export:failure", "confirmation-import:success", "confirmation-import:failure", "case-import:blocked"]));
      expect(await actions(reviewer)).toEqual(expect.arrayContaining(["case-import:success", "case-import:failure", "confirmation-export:success"]));
    }, 60_000);

    it(t("exchange, sealed packages: GET /exchange/keys (no credential) lists the generated sealing key; a case sealed for it imports; sealed for another key, altered or cut, a 400 naming why, nothing written"), async () => {
      const api = client();
      const [analyst, reviewer] = ["conf-seal-analyst", "conf-seal-reviewer"];
      for (const uid of [analyst, reviewer]) {
        await api.user.put(uid, { email: `${uid}@lab.example`, firstName: uid, lastName: "Examiner", company: "State Lab", permitted: true });
      }
      await api.user.addCases(analyst, [{ caseNumber: "CS-1" }]);
      const image = await api.image.upload(new Blob([fixture("sample.png")]), "bullet.png");
      await api.data.putCase(analyst, "CS-1", { caseNumber: "CS-1", files: [{ id: image.id, originalFilename: "item.png", uploadedAt: "2026-11-02T00:00:00.000Z" }], createdAt: "2026-11-01T00:00:00.000Z" });

      // serve generated EXCHANGE_DECRYPTION_KEY; anyone may read its public half, beside the signing key's.
      const { keys } = await createClient({ baseUrl: url }).exchange.keys();
      expect(keys.map((key) => [(key as { use?: string }).use, key.kty])).toEqual([["sig", "EC"], ["enc", "EC"]]);
      const recipient = keys[1]!;
      expect(recipient).toMatchObject({ crv: "P-256", alg: "ECDH-ES+A256KW", kid: await calculateJwkThumbprint(recipient as JWK) });
      for (const key of keys) expect(key).not.toHaveProperty("d");
      // The private key is kept in secrets.json and named at start, never printed.
      const stored = JSON.parse(JSON.parse(await readFile(join(dir, "data", "secrets.json"), "utf8")).EXCHANGE_DECRYPTION_KEY) as JWK;
      expect(await calculateJwkThumbprint(stored)).toBe((recipient as JWK).kid);
      expect(served.output()).toMatch(/^generated EXCHANGE_DECRYPTION_KEY \(an EC P-256 private key, kept in .*secrets\.json; its public half is served at http:.*\/exchange\/keys\)$/m);
      expect(served.output()).not.toContain(stored.d);

      const sealed = await api.exchange.exportSealedCase(analyst, "CS-1", recipient);
      expect(sealed.fileName).toMatch(/^CS-1-export-\d{8}\.sealed$/);
      const bytes = await sealed.bytes();
      const refusal = async (body: Uint8Array, pattern: RegExp) => {
        const response = await call(`/exchange/${reviewer}/imports`, { method: "POST", headers: data, body: body as BodyInit });
        expect(response.status).toBe(400);
        const answer = await response.json() as { message: string; details: Record<string, unknown> };
        expect(answer.message).toMatch(pattern);
        return answer;
      };
      // Sealed elsewhere for another lab's key: the message names that key.
      const other = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])).publicKey);
      const zip = await (await api.exchange.exportCase(analyst, "CS-1")).bytes();
      const foreign = new Uint8Array(await new Response(await sealPackage(new Blob([zip as BlobPart]).stream(), await recipientKeyOf(other))).arrayBuffer());
      const otherThumbprint = await calculateJwkThumbprint(other as JWK);
      expect((await refusal(foreign, new RegExp(`it was sealed for the key ${otherThumbprint}, not for this service's key ${(recipient as JWK).kid}`))).details).toMatchObject({ sealedFor: otherThumbprint });
      const altered = bytes.slice();
      altered[altered.length - 300]! ^= 1;
      await refusal(altered, /^Sealed package refused: chunk \d+ fails its authentication/);
      await refusal(bytes.subarray(0, bytes.length - 16), /^Sealed package refused: /);
      expect((await api.user.get(reviewer)).readOnlyCases ?? []).toEqual([]);

      expect(await api.exchange.importCase(reviewer, bytes)).toMatchObject({ success: true, caseNumber: "CS-1", filesImported: 1 });
      expect(((await api.user.get(reviewer)).readOnlyCases ?? []).map((entry) => entry.caseNumber)).toEqual(["CS-1"]);
    }, 60_000);

    it(t("with no AUDIT_SIGNING_KEY configured, serve generates one: named at start (never its private half), published at /review/keys, and the heads it writes verify as signed"), async () => {
      const stored = JSON.parse(JSON.parse(await readFile(join(dir, "data", "secrets.json"), "utf8")).AUDIT_SIGNING_KEY) as JWK;
      expect(stored).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", kid: expect.stringMatching(/^audit-\d{4}-\d{2}-\d{2}-[0-9a-f]{6}$/) });
      expect(served.output()).toContain(`generated AUDIT_SIGNING_KEY (an EC P-256 private key, kid ${stored.kid}, kept in `);
      expect(served.output()).toMatch(/^generated AUDIT_SIGNING_KEY \(.*; it signs audit heads and review signatures, its public half is served at http:.*\/review\/keys\)$/m);
      expect(served.output()).not.toContain(stored.d);
      const jwks = await (await call("/review/keys")).json() as { keys: JWK[] };
      expect(jwks.keys).toEqual([{ kty: "EC", crv: "P-256", x: stored.x, y: stored.y, alg: "ES256", kid: stored.kid }]);
      await client().audit.append(auditEntry({ userId: "conf-signed-heads" }) as AuditEntryInput);
      expect((await client().audit.verify("conf-signed-heads")).head).toMatchObject({ seq: 1, signature: "valid" });
    });

    it(t("CORS preflight is answered for the configured origin without credentials"), async () => {
      const response = await call("/data/u1/C-1/data.json", {
        method: "OPTIONS",
        headers: { Origin: SECRETS.ALLOWED_ORIGIN, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-custom-auth-key" },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe(SECRETS.ALLOWED_ORIGIN);
    });

    it(t("generated malformed requests (fast-check, seeded): never a 5xx, always the standard body, the service still answers"), async () => {
      // The generator's credentials are the in-process suites'; here they become this server's.
      const secretOf = new Map<string, string>(Object.entries(KEYS).map(([name, value]) => [value, SECRETS[name as keyof typeof SECRETS]]));
      const withSecrets = (headers: Record<string, string>) =>
        Object.fromEntries(Object.entries(headers).map(([name, value]) => {
          for (const [from, to] of secretOf) value = value.replace(from, to);
          return [name, value];
        }));
      const send = (request: GeneratedRequest) => sendRaw(url, { ...request, headers: withSecrets(request.headers) });
      // The captcha worker calls Turnstile itself, which this machine cannot reach.
      await fc.assert(
        fc.asyncProperty(anyRequest.filter((request) => !request.path.startsWith("/captcha")), async (request) => {
          const { status, body } = await send(request);
          expect(status, `${request.method} ${request.path}`).toBeLessThan(500);
          if (status >= 400 && request.method !== "HEAD") {
            expect(Object.keys(JSON.parse(body) as object).sort(), `${request.method} ${request.path}`).toEqual(ERROR_KEYS);
          }
        }),
        propertyParameters(300),
      );
      expect((await call("/health")).status).toBe(200);
    }, 180_000);

    it(t("keep-alive: a body refused unread (413, 403, 401, 404) never costs the next request on the connection"), async () => {
      const connection = new RawConnection(new URL(url));
      const wrong = { "X-Custom-Auth-Key": "wrong" };
      const refusals: [string, string, Record<string, string>, RawBody, number][] = [
        ["PUT", "/data/u1/ka/data.json", data, { size: 70_000 }, 413],
        ["PUT", "/data/u1/ka/data.json", data, { size: 2_000_000 }, 413],
        ["PUT", "/data/u1/ka/data.json", data, { size: 300_000, chunked: true }, 413],
        ["PUT", "/data/u1/ka/data.json", wrong, { size: 1_000_000 }, 403],
        ["PUT", "/user/ka-u1", wrong, { size: 100_000 }, 401],
        ["POST", "/no-such-worker/x", {}, { size: 100_000 }, 404],
      ];
      const doc = new TextEncoder().encode(JSON.stringify({ caseNumber: "ka", files: [] }));
      for (let round = 0; round < 4; round++) {
        for (const [method, path, headers, body, status] of refusals) {
          const what = `round ${round}: ${method} ${path} with ${body instanceof Uint8Array ? body.length : body.size} bytes${body instanceof Uint8Array || body.chunked !== true ? "" : " chunked"}`;
          // send() fails when the server drops the connection without announcing Connection: close.
          const refused = await connection.send(method, path, headers, body).catch((err: Error) => {
            throw new Error(`${what}: ${err.message}`);
          });
          expect(refused.status, what).toBe(status);
          expect(Object.keys(JSON.parse(refused.body) as object).sort(), what).toEqual(ERROR_KEYS);
          const next = await connection.send("PUT", "/data/u1/ka/data.json", data, doc).catch((err: Error) => {
            throw new Error(`the request after ${what}: ${err.message}`);
          });
          expect(next.status, `the request after ${what}`).toBe(200);
        }
      }
      expect(JSON.parse((await connection.send("GET", "/data/u1/ka/data.json", data)).body)).toEqual({ caseNumber: "ka", files: [] });
      // Bodies this size are read and discarded, so one connection carried all of it (on Deno too
      // since serve runs Deno's node:http; Deno.serve closed after any body it had not seen whole).
      expect(connection.connections).toBe(1);
      connection.close();
    }, 120_000);

    it(t("keep-alive: refused uploads over fetch, each followed by a normal request, all answered"), async () => {
      const failures: string[] = [];
      const attempt = async (what: string, path: string, init: RequestInit, status: number) => {
        try {
          const response = await call(path, init);
          await response.arrayBuffer();
          if (response.status !== status) failures.push(`${what}: HTTP ${response.status}`);
        } catch (err) {
          failures.push(`${what}: ${String((err as Error).cause ?? err)}`);
        }
      };
      for (let i = 0; i < 25; i++) {
        await attempt(`${i} 2 MB PUT`, "/data/u1/ka/data.json", { method: "PUT", headers: data, body: new Uint8Array(2_000_000) }, 413);
        await attempt(`${i} GET after the 2 MB PUT`, "/data/u1/ka/data.json", { headers: data }, 200);
        await attempt(`${i} bad-key PUT`, "/data/u1/ka/data.json", { method: "PUT", headers: { "X-Custom-Auth-Key": "wrong" }, body: new Uint8Array(200_000) }, 403);
        await attempt(`${i} GET after the bad-key PUT`, "/data/u1/ka/data.json", { headers: data }, 200);
      }
      expect(failures).toEqual([]);
    }, 120_000);

    it(t("malformed requests: a Transfer-Encoding other than chunked is a 400, never a 500, and the service keeps answering"), async () => {
      const body = '{"a":"bcdef"}';
      expect(body).toHaveLength(13);
      const framings = [
        ["Transfer-Encoding: gzip"],
        ["Transfer-Encoding: identity"],
        ["Transfer-Encoding: chunked, gzip"],
        ["Transfer-Encoding: gzip", "Content-Length: 13"],
        ["Transfer-Encoding: foo", "Content-Length: 13"],
      ];
      for (const path of ["/user/", "/data/u1/C-1/data.json"]) {
        for (const framing of framings) {
          const head = [`DELETE ${path} HTTP/1.1`, `Host: ${new URL(url).host}`, ...framing, "Content-Type: application/json", "", ""].join("\r\n");
          const answer = await sendRawBytes(new URL(url), head + body);
          expect(answer.status, `DELETE ${path} with ${framing.join(", ")}`).toBe(400);
          // Said in a sentence, never with the parser's code (HPE_INVALID_TRANSFER_ENCODING before).
          expect(answer.body, `DELETE ${path} with ${framing.join(", ")}`).not.toMatch(/HPE_|ERR_/);
        }
      }
      expect((await call("/health")).status).toBe(200);
    });

    it(t("a method no route takes (TRACE, M-SEARCH, LINK, PROPFIND) is 405 with Allow on a known path (/health too), the router's 404 elsewhere, in the standard body naming it"), async () => {
      // Under start:workerd, fetch cannot send TRACE to workerd and workerd does not know M-SEARCH or LINK (a 500 and a plain-text 501 before).
      for (const method of ["TRACE", "M-SEARCH", "LINK", "PROPFIND"]) {
        for (const [path, status, allow] of [["/health", 405, "GET"], ["/data/u1/C-1/data.json", 405, "GET, PUT, DELETE, OPTIONS"], ["/nowhere", 404, ""]] as const) {
          const answer = await sendRawBytes(new URL(url), `${method} ${path} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nX-Custom-Auth-Key: ${SECRETS.R2_KEY_SECRET}\r\n\r\n`);
          expect(answer.status, `${method} ${path}: ${answer.body}`).toBe(status);
          const body = JSON.parse(answer.body) as { message: string };
          expect(Object.keys(body).sort(), `${method} ${path}`).toEqual(ERROR_KEYS);
          if (status === 404) expect(body.message, `${method} ${path}`).toBe(`No route for ${method} ${path}`);
          else expect(answer.headers["allow"], `${method} ${path}`).toBe(allow);
        }
      }
      // Nor does an answer carry a header of the machinery in front (Miniflare's mf-content-encoding).
      const health = await sendRawBytes(new URL(url), `GET /health HTTP/1.1\r\nHost: ${new URL(url).host}\r\nAccept-Encoding: gzip, br\r\n\r\n`);
      expect(Object.keys(health.headers).filter((name) => name.startsWith("mf-"))).toEqual([]);
    });

    it(t("a lower-case method (`get`, `put`, `post`), with a body or not, through a dot segment or not, is a 4xx in the standard body, never a 5xx nor the answer of its upper-case form (Deno: a bare 500 for `get /user/../keys/R2_KEY_SECRET` with a body)"), async () => {
      const host = new URL(url).host;
      const keys = `X-Custom-Auth-Key: ${SECRETS.KEYS_AUTH}`;
      // Node's server (in front of workerd too) refuses a method not in upper case as it parses the request line.
      const nodeFront = runtime === "node" || runtime === "workerd";
      for (const method of ["get", "put", "post"]) {
        for (const path of ["/user/../keys/R2_KEY_SECRET", "/user/%2e%2e/keys/R2_KEY_SECRET", "/keys/R2_KEY_SECRET", "/health"]) {
          for (const body of [undefined, "", "[1]"]) {
            const what = `${method} ${path} with ${body === undefined ? "no body" : JSON.stringify(body)}`;
            const length = body === undefined ? "" : `Content-Length: ${body.length}\r\n`;
            const bytes = `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${keys}\r\n${length}Connection: close\r\n\r\n${body ?? ""}`;
            const answer = await sendRawBytes(new URL(url), bytes).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
            // Bun's own server closes the connection before any code of the service runs.
            if (runtime === "bun" && answer instanceof Error) continue;
            if (answer instanceof Error) throw new Error(`${what}: ${answer.message}`);
            expect(answer.status, `${what}: ${answer.body}`).toBeGreaterThanOrEqual(400);
            expect(answer.status, `${what}: ${answer.body}`).toBeLessThan(500);
            const parsed = JSON.parse(answer.body) as { message: string; details: { reason?: unknown } };
            expect(Object.keys(parsed).sort(), what).toEqual(ERROR_KEYS);
            if (nodeFront) {
              expect(answer.status, what).toBe(400);
              expect(parsed.message, what).toBe("The request is not valid HTTP/1.1");
              // A sentence, never the parser's code (HPE_INVALID_METHOD before).
              expect(parsed.details.reason, what).toBe("The method is not one HTTP/1.1 knows (methods are written in upper case)");
            }
          }
        }
      }
      expect((await call("/health")).status).toBe(200);
    });

    it(t("a refused PUT whose client stalls before its body's end is answered in the standard body within seconds, not a 5xx"), async () => {
      const head = (length: number) => `PUT /data/u1/C-1/stall.json HTTP/1.1\r\nHost: ${new URL(url).host}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
      const started = Date.now();
      // No key: refused at once. 2 of 100 bytes sent, then none of 2 (workerd closed the second's connection after 15 s: a 500 before).
      const [some, none] = await Promise.all([sendRawBytes(new URL(url), `${head(100)}{}`, 25_000), sendRawBytes(new URL(url), head(2), 25_000)]);
      for (const [what, answer] of [["2 of 100 bytes", some], ["0 of 2 bytes", none]] as const) {
        expect([403, 408], `${what}: ${answer.status} ${answer.body}`).toContain(answer.status);
        expect(Object.keys(JSON.parse(answer.body) as object).sort(), what).toEqual(ERROR_KEYS);
      }
      expect(Date.now() - started).toBeLessThan(20_000);
      expect((await call("/health")).status).toBe(200);
    }, 40_000);

    it(t("bytes the HTTP parser refuses (a 20 KB header, a 100 KB URL, a bad request line, a bad chunk) never cost the service; behind Node's server they are a 4xx in the standard body"), async () => {
      const host = `Host: ${new URL(url).host}`;
      const cases: [string, string, number][] = [
        ["a 20 KB header", `GET /health HTTP/1.1\r\n${host}\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 431],
        ["a 100 KB URL", `GET /data/u1/${"a".repeat(100_000)}/data.json HTTP/1.1\r\n${host}\r\n\r\n`, 431],
        ["a bad request line", "GARBAGE\r\n\r\n", 400],
        ["a bad chunk size", `PUT /data/u1/C-1/data.json HTTP/1.1\r\n${host}\r\nX-Custom-Auth-Key: ${SECRETS.R2_KEY_SECRET}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 400],
        // Framing that fails within a request that says close: answered, not taken for bytes after it (on Deno it was: no answer).
        ["a Transfer-Encoding other than chunked, Connection: close", `PUT /data/u1/C-1/data.json HTTP/1.1\r\n${host}\r\nX-Custom-Auth-Key: ${SECRETS.R2_KEY_SECRET}\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n`, 400],
      ];
      // Bun's own server answers these before any code of the service (a bare status, a reset or nothing);
      // on Deno serve runs Deno's node:http, Node's server ported.
      const nodeFront = runtime === "node" || runtime === "workerd" || runtime === "deno";
      for (const [what, bytes, status] of cases) {
        const answer = await sendRawBytes(new URL(url), bytes).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
        if (nodeFront) {
          if (answer instanceof Error) throw new Error(`${what}: ${answer.message}`);
          expect(answer.status, what).toBe(status);
          expect(Object.keys(JSON.parse(answer.body) as object).sort(), what).toEqual(ERROR_KEYS);
          expect(answer.body, what).not.toMatch(/HPE_|ERR_/);
        } else if (!(answer instanceof Error)) {
          expect(answer.status, what).toBeLessThan(500);
        }
        expect((await call("/health")).status, `after ${what}`).toBe(200);
      }
    });

    it(t("a 110 MB body to a data PUT is answered 413 (150 MB too, past Bun's own cap), and the next request works"), async () => {
      const MB = 1024 * 1024;
      const response = await call("/data/u1/ka/data.json", { method: "PUT", headers: data, body: new Uint8Array(110 * MB) });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR" });
      const connection = new RawConnection(new URL(url));
      for (const size of [110 * MB, 110 * MB, 150 * MB]) {
        const raw = await connection.send("PUT", "/data/u1/ka/data.json", data, { size }, 60_000);
        expect(raw.status, `raw PUT of ${size / MB} MB`).toBe(413);
        expect((await connection.send("GET", "/data/u1/ka/data.json", data)).status, `GET after the raw PUT of ${size / MB} MB`).toBe(200);
      }
      connection.close();
    }, 120_000);
  });

  describe(`graceful shutdown on ${runtime}`, () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `fa-conf-stop-${runtime}-`));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    const t = (name: string) => `[${variant.name}] ${name}`;

    it(t("SIGTERM with a request in flight: it completes with 200, the process exits 0, and a restart keeps its data"), async () => {
      const served = await spawnServe({ runtime, dataDir: join(dir, "data"), env: SECRETS, timeoutMs: 60_000 });
      try {
        const doc = JSON.stringify({ caseNumber: "STOP-1", files: [], notes: "x".repeat(20_000) });
        const head = [`PUT /data/u1/STOP-1/data.json HTTP/1.1`, `Host: ${new URL(served.url).host}`, `X-Custom-Auth-Key: ${SECRETS.R2_KEY_SECRET}`, "Content-Type: application/json", `Content-Length: ${doc.length}`, "", ""].join("\r\n");
        const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
        // The body's second half is sent only after SIGTERM, so the request is surely in flight.
        const pieces = async function* () {
          yield head + doc.slice(0, 10_000);
          await pause(1000);
          served.proc.kill("SIGTERM");
          await pause(1000);
          yield doc.slice(10_000);
        };
        const answer = await sendRawBytes(new URL(served.url), pieces(), 30_000);
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body)).toEqual({ success: true });
        expect(await served.exited).toBe(0);
      } finally {
        await served.stop("SIGKILL");
      }
      const again = await spawnServe({ runtime, dataDir: join(dir, "data"), env: SECRETS, timeoutMs: 60_000 });
      try {
        expect(await (await fetch(`${again.url}/data/u1/STOP-1/data.json`, { headers: data })).json()).toMatchObject({ caseNumber: "STOP-1" });
      } finally {
        expect(await again.stop("SIGTERM")).toBe(0);
      }
    }, 120_000);
  });

  describe(`outbound calls to local services on ${runtime}`, () => {
    let dir: string;
    let served: Served;
    let url: string;
    let services: LocalServices;
    beforeAll(async () => {
      services = await startLocalServices(fixture("sample.png"));
      dir = await mkdtemp(join(tmpdir(), `fa-conf-out-${runtime}-`));
      const env = {
        ...SECRETS,
        CAPTCHA_SECRET: "conf-captcha-secret",
        CAPTCHA_VERIFY_URL: `${services.url}/siteverify`,
        MAIL_TRANSPORT: "http",
        MAIL_HTTP_URL: `${services.url}/mail`,
        MAIL_HTTP_TOKEN: "conf-mail-token",
        ADMIN_EMAIL: "admin@lab.example",
        MAIL_FROM: "Lab <no-reply@lab.example>",
        PDF_IMAGE_HOSTS: services.host,
      };
      served = await spawnServe({ runtime, dataDir: join(dir, "data"), env, timeoutMs: 60_000 });
      url = served.url;
    }, 90_000);
    afterAll(async () => {
      const code = await served?.stop("SIGTERM");
      await services?.close();
      await rm(dir, { recursive: true, force: true });
      expect(code, `${runtime} exit code after SIGTERM`).toBe(0);
    }, 30_000);

    const t = (name: string) => `[${variant.name}] ${name}`;
    const json = { "Content-Type": "application/json" };

    it(t("captcha: tokens are checked with CAPTCHA_VERIFY_URL on 127.0.0.1"), async () => {
      const passed = await fetch(`${url}/captcha/`, { method: "POST", headers: json, body: JSON.stringify({ "captcha-response": "good-token" }) });
      expect(passed.status).toBe(200);
      expect(await passed.json()).toMatchObject({ success: true });
      const failed = await fetch(`${url}/captcha/`, { method: "POST", headers: json, body: JSON.stringify({ "captcha-response": "forged" }) });
      expect(failed.status).toBe(200);
      expect(await failed.json()).toMatchObject({ success: false, "error-codes": ["invalid-input-response"] });
      expect(services.siteverify.map((call) => new URLSearchParams(call.body).get("response"))).toEqual(["good-token", "forged"]);
      expect(new URLSearchParams(services.siteverify[0]!.body).get("secret")).toBe("conf-captcha-secret");
    });

    it(t("account deletion sends both mails through MAIL_HTTP_URL on 127.0.0.1"), async () => {
      const user = { "X-Custom-Auth-Key": SECRETS.USER_DB_AUTH };
      const profile = { email: "ana@lab.example", firstName: "Ana", lastName: "Ruiz", company: "State Lab", permitted: true };
      expect((await fetch(`${url}/user/out-u1`, { method: "PUT", headers: user, body: JSON.stringify(profile) })).status).toBe(201);
      const deleted = await fetch(`${url}/user/out-u1`, { method: "DELETE", headers: user });
      expect(deleted.status).toBe(200);
      expect(await deleted.json()).toMatchObject({ success: true });
      expect((await fetch(`${url}/user/out-u1`, { headers: user })).status).toBe(404);
      expect(services.mails.map((call) => call.authorization)).toEqual(["Bearer conf-mail-token", "Bearer conf-mail-token"]);
      const recipients = services.mails.map((call) => (JSON.parse(call.body) as { To: { email: string }[] }).To[0]!.email);
      expect(recipients.sort()).toEqual(["admin@lab.example", "ana@lab.example"]);
    });

    it(t("pdf: the image comes from a PDF_IMAGE_HOSTS host on 127.0.0.1"), async () => {
      const body = { imageUrl: `${services.url}/sample.png`, caseNumber: "OUT-1", annotationData: {}, activeAnnotations: [] };
      const rendered = await fetch(`${url}/pdf/`, { method: "POST", headers: json, body: JSON.stringify(body) });
      expect(rendered.status, await rendered.clone().text().catch(() => "")).toBe(200);
      expect(rendered.headers.get("content-type")).toBe("application/pdf");
      expect((await PDFDocument.load(await rendered.arrayBuffer())).getPageCount()).toBeGreaterThan(0);
      expect(services.images).toHaveLength(1);
    });
  });
  reviewConformance(runtime);
}
