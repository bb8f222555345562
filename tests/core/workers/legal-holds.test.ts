import { describe, expect, it } from "vitest";
import { dataHeaders, fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { fixture, uploadForm } from "../../helpers/images.ts";

const ADMIN = "admin-key-0123456789";
const user = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };
const admin = { ...user, "X-Admin-Key": ADMIN };
const bearer = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };
const profile = { email: "ana@lab.example", firstName: "Ana", lastName: "Ruiz", company: "State Lab", permitted: true };

function service() {
  const clock = fixedClock("2026-11-22T12:00:00Z");
  return { ...testService({ ADMIN_AUTH: ADMIN, MAIL_FROM: "lab@lab.example", ADMIN_EMAIL: "admin@lab.example", RATE_LIMITS: "off" }, { clock }), clock };
}
type App = ReturnType<typeof service>["app"];
const send = (app: App, method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  app.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

/** A user with one case of one image and its annotations; answers the image id. */
async function seed(app: App, uid: string, caseNumber: string): Promise<string> {
  expect((await send(app, "PUT", `/user/${uid}`, user, profile)).status).toBe(201);
  expect((await send(app, "PUT", `/user/${uid}/cases`, user, { cases: [{ caseNumber }] })).status).toBe(200);
  const uploaded = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "scan.png"), headers: bearer });
  const imageId = ((await uploaded.json()) as { result: { id: string } }).result.id;
  const caseDoc = { caseNumber, files: [{ id: imageId, originalFilename: "scan.png", uploadedAt: "2026-11-22T12:00:00Z" }], createdAt: "2026-11-22T12:00:00Z" };
  expect((await send(app, "PUT", `/data/${uid}/${caseNumber}/data.json`, dataHeaders, caseDoc)).status).toBe(200);
  expect((await send(app, "PUT", `/data/${uid}/${caseNumber}/${imageId}/data.json`, dataHeaders, { boxAnnotations: [] })).status).toBe(200);
  return imageId;
}

describe("legal holds (docs/api.md#legal-holds)", () => {
  it("only an administrator lists, puts on and lifts holds; bodies are validated with the standard body", async () => {
    const { app } = service();
    for (const [method, body] of [["GET", undefined], ["PUT", { caseNumber: "C-1", reason: "R v. S" }], ["DELETE", { caseNumber: "C-1" }]] as const) {
      const refused = await send(app, method, "/user/u1/holds", user, body);
      expect(refused.status, method).toBe(403);
      expect(await refused.json()).toMatchObject({ code: "FORBIDDEN", details: { header: "X-Admin-Key" } });
      expect((await send(app, method, "/user/u1/holds", { ...user, "X-Admin-Key": "wrong" }, body)).status, method).toBe(401);
      expect((await send(app, method, "/user/u1/holds", { "X-Admin-Key": ADMIN }, body)).status, method).toBe(401);
    }
    for (const body of [{}, { caseNumber: "C-1" }, { caseNumber: "C-1", reason: "  " }, { caseNumber: "", reason: "x" }, { caseNumber: "a/b", reason: "x" }, { caseNumber: "C-1", reason: "x".repeat(2001) }, [], "x"]) {
      const response = await send(app, "PUT", "/user/u1/holds", admin, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR" });
    }
    expect((await app.request("/user/u1/holds", { method: "PUT", headers: admin, body: "{" })).status).toBe(400);
    expect((await send(app, "DELETE", "/user/u1/holds", admin, { caseNumber: "C-1" })).status).toBe(404);
    expect(await (await send(app, "GET", "/user/u1/holds", admin)).json()).toEqual({ userUid: "u1", holds: [] });
  });

  it("PUT holds (201), again records a new reason (200), DELETE lifts; each is an entry in the owner's trail", async () => {
    const { app, clock } = service();
    const imageId = await seed(app, "u1", "C-1");
    const placed = await send(app, "PUT", "/user/u1/holds", admin, { caseNumber: "C-1", reason: "State v. Doe" });
    expect(placed.status).toBe(201);
    const hold = { caseNumber: "C-1", reason: "State v. Doe", heldAt: "2026-11-22T12:00:00.000Z", heldBy: "admin", imageIds: [imageId] };
    expect(await placed.json()).toEqual({ userUid: "u1", holds: [hold] });
    clock.set("2026-11-23T08:00:00Z");
    const again = await send(app, "PUT", "/user/u1/holds", admin, { caseNumber: "C-1", reason: "State v. Doe (appeal)" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ userUid: "u1", holds: [{ ...hold, reason: "State v. Doe (appeal)" }] });
    expect(await (await send(app, "GET", "/user/u1/holds", admin)).json()).toEqual({ userUid: "u1", holds: [{ ...hold, reason: "State v. Doe (appeal)" }] });
    clock.set("2026-11-23T09:00:00Z");
    const lifted = await send(app, "DELETE", "/user/u1/holds", admin, { caseNumber: "C-1" });
    expect(lifted.status).toBe(200);
    expect(await lifted.json()).toEqual({ userUid: "u1", holds: [] });
    const trail = await (await app.request("/audit/audit/?userId=u1&startDate=2026-11-22&endDate=2026-11-23", { headers: { ...dataHeaders, "X-Admin-Key": ADMIN } })).json() as { entries: { action: string; timestamp: string; details: Record<string, unknown> }[] };
    // Oldest first (a read lists the newest day first).
    const holdEntries = trail.entries.filter((entry) => entry.action.startsWith("legal-hold")).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(holdEntries.map((entry) => [entry.action, entry.details.caseNumber, (entry.details.userProfileDetails as { legalHold: { change: string } }).legalHold.change])).toEqual([
      ["legal-hold-place", "C-1", "placed"],
      ["legal-hold-place", "C-1", "reason-updated"],
      ["legal-hold-lift", "C-1", "lifted"],
    ]);
  });

  it("while held, every path that removes data answers 409 naming the hold and the case stays whole; writes work; lifted, deletion works", async () => {
    const { app } = service();
    const imageId = await seed(app, "u1", "C-1");
    const otherImage = await seed(app, "u1-other", "C-9");
    expect((await send(app, "PUT", "/user/u1/holds", admin, { caseNumber: "C-1", reason: "State v. Doe" })).status).toBe(201);
    // Writes still work, even one that drops the image from the case document.
    expect((await send(app, "PUT", "/data/u1/C-1/data.json", dataHeaders, { caseNumber: "C-1", files: [], createdAt: "2026-11-22T12:00:00Z" })).status).toBe(200);
    expect((await send(app, "PUT", "/data/u1/C-1/notes.json", dataHeaders, { note: 1 })).status).toBe(200);
    const attempts: [string, string, Record<string, string>, unknown?][] = [
      ["DELETE", "/data/u1/C-1/data.json", dataHeaders],
      ["DELETE", `/data/u1/C-1/${imageId}/data.json`, dataHeaders],
      ["DELETE", "/data/u1/C-1/notes.json", dataHeaders],
      ["DELETE", `/data/u1/C-1/${imageId}/data.json`, { ...dataHeaders, "X-Admin-Key": ADMIN }],
      ["DELETE", `/image/${imageId}`, bearer],
      ["DELETE", "/user/u1/cases", user, { casesToDelete: ["C-0", "C-1"] }],
      ["DELETE", "/user/u1", user],
      ["DELETE", "/user/u1", admin],
    ];
    for (const [method, path, headers, body] of attempts) {
      const response = await send(app, method, path, headers, body);
      expect(response.status, path).toBe(409);
      const answer = await response.json() as { code: string; details: Record<string, unknown> };
      expect(answer.code, path).toBe("CONFLICT");
      expect(JSON.stringify(answer.details), path).toContain('"caseNumber":"C-1"');
      expect(JSON.stringify(answer), path).not.toContain("State v. Doe");
    }
    expect(await (await send(app, "GET", "/data/u1/C-1/data.json", dataHeaders)).json()).toMatchObject({ caseNumber: "C-1" });
    expect(await (await send(app, "GET", `/data/u1/C-1/${imageId}/data.json`, dataHeaders)).json()).toEqual({ boxAnnotations: [] });
    expect(await (await send(app, "GET", "/data/u1/C-1/notes.json", dataHeaders)).json()).toEqual({ note: 1 });
    expect((await send(app, "GET", "/user/u1", user)).status).toBe(200);
    expect(((await (await send(app, "GET", "/user/u1", user)).json()) as { cases: { caseNumber: string }[] }).cases.map((c) => c.caseNumber)).toEqual(["C-1"]);
    const signed = await (await app.request(`/image/${encodeURIComponent(`http://localhost/image/delivery/${imageId}/public`)}`, { headers: bearer })).text();
    expect((await app.request(signed)).status).toBe(200);
    // Another user's case, and keys outside the held folder, are not held.
    expect((await send(app, "DELETE", `/image/${otherImage}`, bearer)).status).toBe(200);
    expect((await send(app, "DELETE", "/data/u1-other/C-9/data.json", dataHeaders)).status).toBe(200);
    // Lifted: the same deletions go through.
    expect((await send(app, "DELETE", "/user/u1/holds", admin, { caseNumber: "C-1" })).status).toBe(200);
    expect((await send(app, "DELETE", "/data/u1/C-1/notes.json", dataHeaders)).status).toBe(200);
    expect((await send(app, "DELETE", "/user/u1", user)).status).toBe(200);
    expect(await (await send(app, "GET", "/data/u1/C-1/data.json", dataHeaders)).json()).toEqual([]);
  });

  it("concurrent holds of one user lose none", async () => {
    const { app } = service();
    const numbers = Array.from({ length: 40 }, (_, index) => `C-${index}`);
    const answers = await Promise.all(numbers.map((caseNumber) => send(app, "PUT", "/user/u1/holds", admin, { caseNumber, reason: "sweep" })));
    expect(answers.map((answer) => answer.status)).toEqual(numbers.map(() => 201));
    const listed = await (await send(app, "GET", "/user/u1/holds", admin)).json() as { holds: { caseNumber: string }[] };
    expect(listed.holds.map((hold) => hold.caseNumber).sort()).toEqual([...numbers].sort());
  });
});
