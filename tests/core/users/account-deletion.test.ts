import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { simpleParser } from "mailparser";
import { parseConfig } from "../../../src/core/config/mod.ts";
import { createService } from "../../../src/core/service/service.ts";
import type { ImageHost } from "../../../src/core/ports.ts";
import { createFilePorts } from "../../../src/adapters/server/files/file-ports.ts";
import { DELETION_MAIL_FAILURE_MESSAGE } from "../../../src/core/workers/user.ts";
import { fixedClock, KEYS } from "../../helpers/service.ts";
import { closedPort, startHttpServer } from "../../helpers/http-server.ts";
import { type Caller, filesUnder, seedAccount } from "../../helpers/accounts.ts";
import { auditEntry } from "../../helpers/audit-entry.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function dataDir() {
  const dir = await mkdtemp(join(tmpdir(), "fa-deletion-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The service over real files under `dir`, as `serve` builds it. */
function serviceOn(dir: string, env: Record<string, string> = {}, overrides: { imageHost?: ImageHost } = {}) {
  const ports = { ...createFilePorts(dir), clock: fixedClock("2026-11-22T12:00:00Z"), ...overrides };
  const app = createService(ports, parseConfig({ ...KEYS, ADMIN_EMAIL: "admin@lab.example", MAIL_FROM: "Lab <no-reply@lab.example>", ...env }));
  const at = (mount: string): Caller => (path, init) => Promise.resolve(app.request(`${mount}${path}`, init));
  return { app, ports, call: { user: at("/user"), data: at("/data"), image: at("/image") } };
}

const userHeaders = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };

/** What is left of `uid` on disk: data documents, the record, its images. */
async function remains(dir: string, uid: string, imageIds: string[]) {
  const data = (await filesUnder(join(dir, "data"))).filter((path) => path.startsWith(`${uid}/`));
  const users = (await filesUnder(join(dir, "users"))).filter((path) => path === uid);
  // What record history keeps of deleted images (#history/images/) is not the image.
  const images = (await filesUnder(join(dir, "images"))).filter((path) => !path.startsWith("#history/") && imageIds.some((id) => path.includes(id)));
  return [...data, ...users, ...images];
}

describe("account deletion against real files (spec 4.1 rules 4 and 5)", () => {
  it("removes every case (own and read-only), annotation and image, writes two .eml files, keeps the audit trail and other users", async () => {
    const dir = await dataDir();
    const { app, call } = serviceOn(dir);
    const mine = await seedAccount(call, "u1", { own: ["C-1", "C-2"], readOnly: ["R-1"], filesPerCase: 3 });
    const theirs = await seedAccount(call, "u2", { own: ["C-1"], readOnly: [], filesPerCase: 2 });
    const audit = await app.request("/data/audit/?userId=u1", { method: "POST", headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET }, body: JSON.stringify(auditEntry({ userId: "u1" })) });
    expect(audit.status).toBe(200);
    const myImages = Object.values(mine).flat();
    expect(myImages).toHaveLength(9);
    expect((await remains(dir, "u1", myImages)).length).toBeGreaterThan(9 * 3);
    // Documents a client stored beside the case folders go too.
    for (const key of ["u1/profile.json", "u1/notes.json"]) {
      expect((await app.request(`/data/${key}`, { method: "PUT", headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET }, body: "{}" })).status).toBe(200);
    }

    const response = await app.request("/user/u1", { method: "DELETE", headers: userHeaders });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true, message: expect.stringContaining("3 case") });

    expect(await remains(dir, "u1", myImages)).toEqual([]);
    expect((await app.request("/user/u1", { headers: userHeaders })).status).toBe(404);
    // The other user's account is whole.
    expect((await remains(dir, "u2", Object.values(theirs).flat())).length).toBe(1 + 1 + 2 + 2 * 2);
    // The audit trail stays: its day and the head of its hash chain.
    expect(await filesUnder(join(dir, "audit"))).toEqual(["audit-heads/u1.json", "audit-trails/u1-2026-11-22.json"]);

    const outbox = await filesUnder(join(dir, "outbox"));
    expect(outbox).toHaveLength(2);
    for (const name of outbox) expect(name).toMatch(/^\d{8}T\d{6}\.\d{3}Z-[0-9a-f-]{36}\.eml$/);
    const mails = await Promise.all(outbox.map(async (name) => simpleParser(await readFile(join(dir, "outbox", name)))));
    const to = mails.map((mail) => (Array.isArray(mail.to) ? "" : mail.to?.value[0]?.address)).sort();
    expect(to).toEqual(["admin@lab.example", "u1@lab.example"]);
    for (const mail of mails) {
      expect(mail.from?.value[0]).toEqual({ address: "no-reply@lab.example", name: "Lab" });
      expect(mail.text).toContain("u1");
    }
  });

  it("a case document listing file ids no stored file can have (`a/b`, `..`, 300 bytes, NUL, `:`) still deletes: those ids are skipped, the real files go", async () => {
    const dir = await dataDir();
    const { app, call } = serviceOn(dir);
    const mine = await seedAccount(call, "u1", { own: ["C-1"], readOnly: [], filesPerCase: 2 });
    const real = mine["C-1"]!;
    const hostile = ["a/b", "..", "x".repeat(300), "a\u0000b", "a:b", "a\\b"];
    const files = [...hostile.map((id) => ({ id })), ...real.map((id) => ({ id }))];
    const put = await call.data("/u1/C-1/data.json", { method: "PUT", headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET }, body: JSON.stringify({ caseNumber: "C-1", files }) });
    expect(put.status).toBe(200);

    const response = await app.request("/user/u1", { method: "DELETE", headers: userHeaders });
    expect(response.status).toBe(200);
    expect(await remains(dir, "u1", real)).toEqual([]);
    expect((await app.request("/user/u1", { headers: userHeaders })).status).toBe(404);
  });

  it("names and company never become markup: the HTML part is escaped, headers stay single lines", async () => {
    const dir = await dataDir();
    const { app } = serviceOn(dir);
    const hostile = { email: "eve@lab.example", firstName: "<script>alert(1)</script>", lastName: "O'Brien & \"Co\"", company: "<b>Evil</b>\r\nBcc: victim@x.example", permitted: true };
    expect((await app.request("/user/eve", { method: "PUT", headers: userHeaders, body: JSON.stringify(hostile) })).status).toBe(201);
    expect((await app.request("/user/eve", { method: "DELETE", headers: userHeaders })).status).toBe(200);
    const outbox = await filesUnder(join(dir, "outbox"));
    const mails = await Promise.all(outbox.map(async (name) => simpleParser(await readFile(join(dir, "outbox", name)))));
    for (const mail of mails) {
      expect(mail.html).not.toMatch(/<script|<b>/);
      expect(mail.headers.has("bcc")).toBe(false);
    }
    const admin = mails.find((mail) => mail.text?.includes("Company"))!;
    expect(admin.html).toContain("&lt;b&gt;Evil&lt;/b&gt;");
    const user = mails.find((mail) => !mail.text?.includes("Company"))!;
    expect(user.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(user.text).toContain("<script>alert(1)</script>"); // the plain part is plain text
  });

  it("mail through an HTTP API on a closed port: 500 with the body of rule 5, the record stays; with mail working, DELETE again completes", async () => {
    const dir = await dataDir();
    const port = await closedPort();
    const failing = serviceOn(dir, { MAIL_TRANSPORT: "http", MAIL_HTTP_URL: `http://127.0.0.1:${port}/api/v1/email`, MAIL_HTTP_TOKEN: "mail-token" });
    const images = Object.values(await seedAccount(failing.call, "u1", { own: ["C-1", "C-2"], readOnly: ["R-1"], filesPerCase: 2 })).flat();

    const refused = await failing.app.request("/user/u1", { method: "DELETE", headers: userHeaders });
    expect(refused.status).toBe(500);
    expect(await refused.json()).toEqual({ success: false, message: DELETION_MAIL_FAILURE_MESSAGE });
    expect(DELETION_MAIL_FAILURE_MESSAGE).toMatch(/account deletion failed because confirmation emails could not be sent/i);
    expect((await failing.app.request("/user/u1", { headers: userHeaders })).status).toBe(200);

    const received: { authorization: string | undefined; body: Record<string, unknown> }[] = [];
    const api = await startHttpServer((req, body, res) => {
      received.push({ authorization: req.headers.authorization, body: JSON.parse(body) as Record<string, unknown> });
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ MessageID: crypto.randomUUID() }));
    });
    cleanups.push(api.close);
    const working = serviceOn(dir, { MAIL_TRANSPORT: "http", MAIL_HTTP_URL: `${api.url}/api/v1/email`, MAIL_HTTP_TOKEN: "mail-token" });
    const done = await working.app.request("/user/u1", { method: "DELETE", headers: userHeaders });
    expect(done.status).toBe(200);
    expect(await remains(dir, "u1", images)).toEqual([]);
    expect(received).toHaveLength(2);
    for (const call of received) {
      expect(call.authorization).toBe("Bearer mail-token");
      expect(call.body).toMatchObject({ From: { name: "Lab", email: "no-reply@lab.example" }, ContentType: "HTML", Subject: expect.any(String), PlainContent: expect.any(String), HTMLContent: expect.any(String) });
    }
    expect(received.map((call) => (call.body.To as { email: string }[])[0]!.email).sort()).toEqual(["admin@lab.example", "u1@lab.example"]);
  });

  it("a mail API answering non-2xx is a failure too", async () => {
    const dir = await dataDir();
    const api = await startHttpServer((_req, _body, res) => {
      res.writeHead(401, { "Content-Type": "application/json" });
      res.end('{"Errors":[{"Code":401,"Message":"Invalid API key"}]}');
    });
    cleanups.push(api.close);
    const { app } = serviceOn(dir, { MAIL_TRANSPORT: "http", MAIL_HTTP_URL: api.url, MAIL_HTTP_TOKEN: "bad" });
    await app.request("/user/u1", { method: "PUT", headers: userHeaders, body: JSON.stringify({ email: "a@lab.example", firstName: "A", lastName: "B", company: "C", permitted: true }) });
    const response = await app.request("/user/u1", { method: "DELETE", headers: userHeaders });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ success: false, message: DELETION_MAIL_FAILURE_MESSAGE });
    expect((await app.request("/user/u1", { headers: userHeaders })).status).toBe(200);
  });

  it("is resumable: a store failure half-way is a 500 that keeps the record, and DELETE again finishes the job", async () => {
    const dir = await dataDir();
    const healthy = serviceOn(dir);
    const images = Object.values(await seedAccount(healthy.call, "u1", { own: ["C-1", "C-2"], readOnly: ["R-1"], filesPerCase: 3 })).flat();
    // An image host that fails on the fourth deletion, after three went through.
    let deletions = 0;
    const real = healthy.ports.images;
    const flaky = serviceOn(dir, {}, {
      imageHost: {
        upload: () => Promise.reject(new Error("unused")),
        signedUrl: () => Promise.reject(new Error("unused")),
        delete: async (id) => {
          if (++deletions === 4) throw new Error("disk unplugged");
          const existed = (await real.delete(`images/${id}.json`)) ;
          await real.delete(`images/${id}`);
          return existed;
        },
      },
    });
    const failed = await flaky.app.request("/user/u1", { method: "DELETE", headers: userHeaders });
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ code: "SERVER_ERROR" });
    expect((await flaky.app.request("/user/u1", { headers: userHeaders })).status).toBe(200);
    expect((await remains(dir, "u1", images)).length).toBeGreaterThan(0);
    expect(await filesUnder(join(dir, "outbox"))).toEqual([]);

    const again = await healthy.app.request("/user/u1", { method: "DELETE", headers: userHeaders });
    expect(again.status).toBe(200);
    expect(await remains(dir, "u1", images)).toEqual([]);
    expect(await filesUnder(join(dir, "outbox"))).toHaveLength(2);
  });
});
