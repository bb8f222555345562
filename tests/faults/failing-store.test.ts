/**
 * A store that fails mid-request (issue 13, "Must show"): the memory ports wrapped so that the
 * Nth call of one method of one store throws. Each writing route is first run once to record
 * the calls it makes; then it is run again with each of those calls failing in turn. Every
 * run must answer the standard 5xx body without internals, leave what the API shows as it
 * was (account deletion: the record stays), and a retry once the store is back must succeed.
 * In-process (`app.request`), so Bun and Deno run it as hosts too.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fixedClock, KEYS, memoryPorts, testService } from "../helpers/service.ts";
import { fixture, uploadForm } from "../helpers/images.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { signDeliveryUrl } from "../../src/core/images/signed-url.ts";
import type { ServicePorts } from "../../src/core/service/service.ts";

const STORES = ["data", "audit", "users", "images", "outbox"] as const;
type StoreName = (typeof STORES)[number];
type Mode = "throw" | "reject";
interface Call {
  store: StoreName;
  method: string;
}
/** Which call fails: the `nth` (from 1) call of `method` on `store`. */
interface Fault extends Call {
  nth: number;
  mode: Mode;
}

// What a driver's error could carry: a connection string with a password, an address, a path.
const SECRET = "s3cr3t-pw";
const INTERNALS = [SECRET, "10.9.8.7", "ECONNRESET", "/srv/forensic", "FaultInjected", "at ", "node_modules", "Error:"];
const injected = (call: Call) =>
  Object.assign(new Error(`ECONNRESET redis://admin:${SECRET}@10.9.8.7:6379 while ${call.method} /srv/forensic/${call.store}`), { name: "FaultInjected" });

/** Ports whose every call is recorded, and of which one chosen call fails. */
class FaultPlan {
  calls: Call[] = [];
  private fault: Fault | undefined;
  private seen = 0;
  fired = false;

  arm(fault: Fault): void {
    this.fault = fault;
    this.seen = 0;
    this.fired = false;
  }
  disarm(): void {
    this.fault = undefined;
  }
  record(): void {
    this.calls = [];
  }

  wrap<T extends object>(store: StoreName, inner: T): T {
    const wrapped: Record<string, unknown> = {};
    for (const [method, value] of Object.entries(inner)) {
      if (typeof value !== "function") continue;
      const fn = value as (...args: unknown[]) => unknown;
      wrapped[method] = (...args: unknown[]) => {
        this.calls.push({ store, method });
        const fault = this.fault;
        if (fault !== undefined && fault.store === store && fault.method === method && ++this.seen === fault.nth) {
          this.fired = true;
          if (fault.mode === "throw") throw injected(fault);
          return Promise.reject(injected(fault));
        }
        return fn.apply(inner, args);
      };
    }
    return wrapped as T;
  }
}

function faultyService(env: Record<string, string> = {}) {
  const plan = new FaultPlan();
  const base = memoryPorts();
  const ports: ServicePorts = {
    ...base,
    clock: fixedClock("2026-11-22T12:00:00Z"),
    data: plan.wrap("data", base.data),
    audit: plan.wrap("audit", base.audit),
    users: plan.wrap("users", base.users),
    images: plan.wrap("images", base.images),
    outbox: plan.wrap("outbox", base.outbox!),
  };
  const { app } = testService({ PUBLIC_URL: PUBLIC, RATE_LIMITS: "off", ...env }, ports);
  return { app, plan, stores: base };
}
type Service = ReturnType<typeof faultyService>;
type App = Service["app"];

const PUBLIC = "https://lab.example";
const userAuth = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };
const dataAuth = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET, "Content-Type": "application/json" };
const bearer = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };
const profile = { email: "ana@lab.example", firstName: "Ana", lastName: "Ruiz", company: "State Lab", permitted: true };

const putUser = (app: App, path: string, body: unknown) => app.request(`/user/${path}`, { method: "PUT", headers: userAuth, body: JSON.stringify(body) });
const putData = (app: App, key: string, body: unknown) => app.request(`/data/${key}`, { method: "PUT", headers: dataAuth, body: JSON.stringify(body) });
const getText = async (app: App, path: string, headers: Record<string, string>) => {
  const response = await app.request(path, { headers });
  return `${response.status} ${await response.text()}`;
};
const upload = async (app: App): Promise<string> => {
  const response = await app.request("/image/", { method: "POST", headers: bearer, body: uploadForm(fixture("sample.png"), "item-1.png") });
  expect(response.status).toBe(200);
  return ((await response.json()) as { result: { id: string } }).result.id;
};
/** Whether an image can be signed and fetched through the API: "served", or the refusal's statuses. */
async function imageVisibility(app: App, id: string): Promise<string> {
  const signed = await app.request(`/image/${PUBLIC}/image/delivery/${id}/public`, { headers: bearer });
  // A signature made with the service's key, so delivery itself is asked even when signing refuses.
  const url = await signDeliveryUrl(new URL(`${PUBLIC}/image/delivery/${id}/public`), KEYS.HMAC_KEY, Math.floor(Date.parse("2026-11-22T13:00:00Z") / 1000));
  const delivered = await app.request(new URL(url).pathname + new URL(url).search);
  if (signed.status === 200 && delivered.status === 200) return "served";
  return `sign ${signed.status}, deliver ${delivered.status}`;
}

/** One writing route: state before it, the request, and what the API shows afterwards. */
interface Scenario {
  name: string;
  setup(service: Service): Promise<Record<string, string>>;
  act(app: App, ids: Record<string, string>): Response | Promise<Response>;
  /** What the API shows of the state this route touches (compared before and after a failure). */
  view(app: App, ids: Record<string, string>): Promise<unknown>;
  /** The success status of `act`. */
  ok: number;
}

/** A user u1 with case C-1 listing image file `img`, its annotations, and two audit entries. */
async function account(service: Service): Promise<Record<string, string>> {
  const { app } = service;
  expect((await putUser(app, "u1", profile)).status).toBe(201);
  expect((await putUser(app, "u1/cases", { cases: [{ caseNumber: "C-1" }] })).status).toBe(200);
  const img = await upload(app);
  expect((await putData(app, "u1/C-1/data.json", { files: [{ id: img, originalName: "item-1.png" }] })).status).toBe(200);
  expect((await putData(app, `u1/C-1/${img}/data.json`, { boxAnnotations: [{ id: "b1" }] })).status).toBe(200);
  expect((await putData(app, "u1/C-1/notes/data.json", { note: "kept with the case" })).status).toBe(200);
  for (const action of ["case-create", "file-upload"]) {
    const response = await app.request("/audit/audit/?userId=u1", { method: "POST", headers: dataAuth, body: JSON.stringify(auditEntry({ action })) });
    expect(response.status).toBe(200);
  }
  return { img };
}

const dataView = (keys: string[]) => async (app: App, ids: Record<string, string>) =>
  Promise.all(keys.map((key) => getText(app, `/data/${key.replace("{img}", ids.img!)}`, dataAuth)));
const userView = async (app: App) => getText(app, "/user/u1", userAuth);
const auditView = async (app: App) => getText(app, "/audit/audit/?userId=u1", dataAuth);

const SCENARIOS: Scenario[] = [
  {
    name: "data PUT over a case document",
    setup: account,
    act: (app, ids) => putData(app, "u1/C-1/data.json", { files: [{ id: ids.img, originalName: "renamed.png" }] }),
    view: dataView(["u1/C-1/data.json"]),
    ok: 200,
  },
  {
    name: "data PUT of a new case document (counted against the user's limits)",
    setup: account,
    act: (app) => putData(app, "u1/C-2/data.json", { files: [] }),
    view: dataView(["u1/C-2/data.json"]),
    ok: 200,
  },
  {
    name: "data PUT of annotations",
    setup: account,
    act: (app, ids) => putData(app, `u1/C-1/${ids.img}/data.json`, { boxAnnotations: [] }),
    view: dataView(["u1/C-1/{img}/data.json"]),
    ok: 200,
  },
  {
    name: "data DELETE",
    setup: account,
    act: (app, ids) => app.request(`/data/u1/C-1/${ids.img}/data.json`, { method: "DELETE", headers: dataAuth }),
    view: dataView(["u1/C-1/{img}/data.json"]),
    ok: 200,
  },
  {
    name: "audit POST (audit worker)",
    setup: account,
    act: (app) => app.request("/audit/audit/?userId=u1", { method: "POST", headers: dataAuth, body: JSON.stringify(auditEntry({ action: "annotation-edit" })) }),
    view: auditView,
    ok: 200,
  },
  {
    name: "audit POST (data worker)",
    setup: account,
    act: (app) => app.request("/data/audit/?userId=u1", { method: "POST", headers: dataAuth, body: JSON.stringify(auditEntry({ action: "annotation-edit" })) }),
    view: auditView,
    ok: 200,
  },
  {
    name: "user PUT (update)",
    setup: account,
    act: (app) => putUser(app, "u1", { company: "County Lab" }),
    view: userView,
    ok: 200,
  },
  {
    name: "user PUT (create)",
    setup: async () => ({}),
    act: (app) => putUser(app, "u1", profile),
    view: userView,
    ok: 201,
  },
  {
    name: "user PUT cases",
    setup: account,
    act: (app) => putUser(app, "u1/cases", { cases: [{ caseNumber: "C-7" }] }),
    view: userView,
    ok: 200,
  },
  {
    name: "user DELETE cases",
    setup: account,
    act: (app) => app.request("/user/u1/cases", { method: "DELETE", headers: userAuth, body: JSON.stringify({ casesToDelete: ["C-1"] }) }),
    view: userView,
    ok: 200,
  },
  {
    name: "image upload",
    setup: async () => ({}),
    act: (app) => app.request("/image/", { method: "POST", headers: bearer, body: uploadForm(fixture("sample.png"), "item-2.png") }),
    // Checked below by id: an upload that failed must not be signable or deliverable.
    view: async () => "no view",
    ok: 200,
  },
];

let logged: string[] = [];
beforeEach(() => {
  logged = [];
  // The service logs unknown errors; keep them to check they are redacted, and off the console.
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** The calls `act` makes, in order, each numbered by its occurrence of store and method. */
async function callsOf(scenario: Scenario): Promise<Fault[]> {
  const service = faultyService();
  const ids = await scenario.setup(service);
  service.plan.record();
  expect((await scenario.act(service.app, ids)).status, scenario.name).toBe(scenario.ok);
  const counts = new Map<string, number>();
  return service.plan.calls.map((call) => {
    const id = `${call.store}.${call.method}`;
    counts.set(id, (counts.get(id) ?? 0) + 1);
    return { ...call, nth: counts.get(id)!, mode: "reject" as Mode };
  });
}

/** Asserts the standard 5xx body, with no stack, driver message, address or key material. */
async function expectCleanServerError(response: Response, label: string): Promise<void> {
  expect(response.status, label).toBeGreaterThanOrEqual(500);
  expect(response.status, label).toBeLessThan(600);
  const text = await response.text();
  for (const leak of [...INTERNALS, ...Object.values(KEYS)]) expect(text, `${label} leaks ${leak}`).not.toContain(leak);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort(), label).toEqual(["code", "details", "error", "message"]);
  expect(body, label).toMatchObject({ code: "SERVER_ERROR", error: expect.any(String), message: expect.any(String), details: expect.any(Object) });
}

const label = (fault: Fault) => `${fault.store}.${fault.method} call ${fault.nth} (${fault.mode})`;

describe("a store that fails mid-request", () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: every failing store call answers the standard 5xx, changes nothing, and a retry succeeds`, async () => {
      const calls = await callsOf(scenario);
      expect(calls.length, "the route uses the stores").toBeGreaterThan(0);
      for (const call of calls) {
        for (const mode of ["reject", "throw"] as const) {
          const fault = { ...call, mode };
          const service = faultyService();
          const ids = await scenario.setup(service);
          const imagesBefore = new Set(await service.stores.images.list(""));
          const before = await scenario.view(service.app, ids);
          service.plan.arm(fault);
          const response = await scenario.act(service.app, ids);
          service.plan.disarm();
          expect(service.plan.fired, label(fault)).toBe(true);
          await expectCleanServerError(response, `${scenario.name}: ${label(fault)}`);
          expect(await scenario.view(service.app, ids), `${scenario.name}: ${label(fault)} changed what the API shows`).toEqual(before);
          if (scenario.name === "image upload") {
            // Whatever the failed upload left in the store is not an image anyone can sign or fetch.
            const left = (await service.stores.images.list("")).filter((key) => !imagesBefore.has(key));
            for (const id of new Set(left.map((key) => key.replace(/^images\//, "").replace(/\.json$/, "")))) {
              expect(await imageVisibility(service.app, id), label(fault)).toBe("sign 404, deliver 404");
            }
            // Nor anything at all: bytes without metadata would stay unreachable for good.
            expect(left, label(fault)).toEqual([]);
          }
          // The store is back: the same request now succeeds (no lock or half-written state left behind).
          expect((await scenario.act(service.app, ids)).status, `${scenario.name}: retry after ${label(fault)}`).toBe(scenario.ok);
        }
      }
      // What was logged names the failure without the password it carried.
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) expect(line).not.toContain(SECRET);
    });
  }

  it("image DELETE: a failing store answers the standard 5xx; the image is either still served or gone, never half", async () => {
    const calls = await (async () => {
      const service = faultyService();
      const id = await upload(service.app);
      service.plan.record();
      expect((await service.app.request(`/image/${id}`, { method: "DELETE", headers: bearer })).status).toBe(200);
      return service.plan.calls;
    })();
    expect(calls.length).toBeGreaterThan(0);
    const counts = new Map<string, number>();
    for (const call of calls) {
      const nth = (counts.get(`${call.store}.${call.method}`) ?? 0) + 1;
      counts.set(`${call.store}.${call.method}`, nth);
      const fault: Fault = { ...call, nth, mode: "reject" };
      const service = faultyService();
      const id = await upload(service.app);
      service.plan.arm(fault);
      const response = await service.app.request(`/image/${id}`, { method: "DELETE", headers: bearer });
      service.plan.disarm();
      await expectCleanServerError(response, label(fault));
      const visible = await imageVisibility(service.app, id);
      expect(["served", "sign 404, deliver 404"], `${label(fault)}: ${visible}`).toContain(visible);
      // A retry finishes the job: 200 while the image was still served, 404 once it was gone; no bytes stay behind.
      const retry = await service.app.request(`/image/${id}`, { method: "DELETE", headers: bearer });
      expect(retry.status, label(fault)).toBe(visible === "served" ? 200 : 404);
      expect(await imageVisibility(service.app, id)).toBe("sign 404, deliver 404");
      // No live image key is left; record history keeps the deleted image as its deletion mark, whole.
      const left = await service.stores.images.list("");
      expect(left.filter((key) => !key.startsWith("#history/")), label(fault)).toEqual([]);
      expect(left.filter((key) => key.startsWith("#history/")).sort(), label(fault)).toEqual([`#history/images/${id}`, `#history/images/${id}.json`]);
    }
  });

  it("account deletion: a store failing at any step keeps the record; DELETE again finishes the job", async () => {
    const scenario = { name: "account deletion", setup: account, act: (app: App) => app.request("/user/u1", { method: "DELETE", headers: userAuth }), view: userView, ok: 200 };
    const calls = await callsOf(scenario);
    expect(new Set(calls.map((call) => call.store))).toEqual(new Set(["users", "data", "images", "outbox"]));
    for (const call of calls) {
      const fault: Fault = { ...call, mode: "reject" };
      const service = faultyService();
      const ids = await account(service);
      const record = await userView(service.app);
      service.plan.arm(fault);
      const response = await scenario.act(service.app);
      service.plan.disarm();
      if (fault.store === "outbox") {
        // A mail that cannot be written is spec 4.1 rule 5's own body.
        expect(response.status, label(fault)).toBe(500);
        expect(await response.json(), label(fault)).toEqual({ success: false, message: expect.stringContaining("confirmation emails could not be sent") });
      } else {
        await expectCleanServerError(response, label(fault));
      }
      expect(await userView(service.app), `${label(fault)}: the record stays`).toBe(record);

      const retry = await scenario.act(service.app);
      expect(retry.status, `retry after ${label(fault)}`).toBe(200);
      expect((await service.app.request("/user/u1", { headers: userAuth })).status).toBe(404);
      for (const key of ["u1/C-1/data.json", `u1/C-1/${ids.img}/data.json`, "u1/C-1/notes/data.json"]) {
        expect(await getText(service.app, `/data/${key}`, dataAuth), `${label(fault)}: ${key}`).toBe("200 []");
      }
      expect(await service.stores.data.list("u1/"), label(fault)).toEqual([]);
      // Nothing of the image is left in its store either (a retry removes what a failed attempt left),
      // but what record history keeps: the image's deletion mark under #history/.
      expect((await service.stores.images.list("")).filter((key) => !key.startsWith("#history/")), label(fault)).toEqual([]);
      expect(await imageVisibility(service.app, ids.img!), label(fault)).toBe("sign 404, deliver 404");
      // The audit trail is never deleted.
      const trail = JSON.parse((await auditView(service.app)).slice(4)) as { total: number };
      expect(trail.total).toBe(2);
      // Both mails went out at least once (a failure after they were sent sends them again on retry).
      const mails = await service.stores.outbox!.list("");
      expect(mails.length, label(fault)).toBeGreaterThanOrEqual(2);
    }
  });

  it("with the admin key, a trace that cannot be written answers the standard 5xx; the write is whole or absent, and a retry succeeds", async () => {
    const admin = { ...dataAuth, "X-Admin-Key": "admin-key-0123456789" };
    const fault: Fault = { store: "audit", method: "appendToJsonArray", nth: 1, mode: "reject" };
    const service = faultyService({ ADMIN_AUTH: "admin-key-0123456789" });
    const { img } = await account(service);
    const old = { files: [{ id: img, originalName: "item-1.png" }] };
    const next = { files: [], note: "written by support" };
    service.plan.arm(fault);
    const response = await service.app.request("/data/u1/C-1/data.json", { method: "PUT", headers: admin, body: JSON.stringify(next) });
    service.plan.disarm();
    expect(service.plan.fired).toBe(true);
    await expectCleanServerError(response, label(fault));
    // Not a mix: the old document or the new one.
    expect([`200 ${JSON.stringify(old)}`, `200 ${JSON.stringify(next)}`]).toContain(await getText(service.app, "/data/u1/C-1/data.json", dataAuth));
    const retry = await service.app.request("/data/u1/C-1/data.json", { method: "PUT", headers: admin, body: JSON.stringify(next) });
    expect(retry.status).toBe(200);
    const trail = JSON.parse((await auditView(service.app)).slice(4)) as { entries: { action: string }[] };
    expect(trail.entries.filter((entry) => entry.action === "file-access")).toHaveLength(1);
  });
});
