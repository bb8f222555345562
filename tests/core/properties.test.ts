/**
 * Property-based tests over every route, in process (so Node, Bun and Deno hosts all run
 * them): thousands of generated requests never answer 5xx and always answer errors in the
 * standard body; what answered 2xx reads back equal. Seeded; a failure prints FC_SEED to
 * replay it (`FC_SEED=... npx vitest run tests/core/properties.test.ts`).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dataHeaders, KEYS, stubVerifier, testService } from "../helpers/service.ts";
import { anyRequest, auditEntryFor, propertyParameters, storableDocument, validSegment } from "../helpers/request-arbitraries.ts";

const LIMITS = { MAX_JSON_BYTES: String(64 * 1024), MAX_AUDIT_ENTRY_BYTES: String(64 * 1024), RATE_LIMITS: "off" };
const service = () => testService(LIMITS, { captcha: stubVerifier({ success: false, "error-codes": ["invalid-input-response"] }) }).app;
const STANDARD_KEYS = ["code", "details", "error", "message"];

/** After a write that answered 2xx, what it wrote still reads (a poisoned trail would 5xx here). */
async function readsBack(app: ReturnType<typeof service>, request: { method: string; path: string; headers: Record<string, string> }) {
  if (request.method !== "PUT" && request.method !== "POST") return;
  const read = await app.request(request.path, { headers: request.headers });
  expect(read.status, `GET after ${request.method} ${request.path}`).toBeLessThan(500);
  await read.body?.cancel();
}

describe("properties of every route (in process)", () => {
  it("3,000 generated requests: never a 5xx, every error in the standard body", async () => {
    const app = service();
    await fc.assert(
      fc.asyncProperty(anyRequest, async (request) => {
        const response = await app.request(request.path, { method: request.method, headers: request.headers, body: request.body });
        expect(response.status, `${request.method} ${request.path}`).toBeLessThan(500);
        if (response.status >= 400 && request.method !== "HEAD") {
          const error = (await response.json()) as Record<string, unknown>;
          expect(Object.keys(error).sort(), `${request.method} ${request.path}`).toEqual(STANDARD_KEYS);
          // Library internals never reach a client.
          expect(JSON.stringify(error)).not.toMatch(/Cannot read properties|is not a function|DataView|Maximum call stack|at \w+ \(/);
        } else {
          await response.body?.cancel();
          await readsBack(app, request);
        }
      }),
      propertyParameters(3_000),
    );
    // Whatever was stored on the way, every trail it touched still reads, and the service answers.
    for (const userId of ["u1", "u2"]) {
      expect((await app.request(`/audit/audit/?userId=${userId}`, { headers: dataHeaders })).status, userId).toBe(200);
    }
    expect((await app.request("/health")).status).toBe(200);
  }, 240_000);

  it("a data document that answered 200 reads back equal, under any storable key", async () => {
    const app = service();
    await fc.assert(
      fc.asyncProperty(validSegment, validSegment, storableDocument, async (user, caseNumber, document) => {
        const path = `/data/${encodeURIComponent(user)}/${encodeURIComponent(caseNumber)}/data.json`;
        const text = JSON.stringify(document);
        const put = await app.request(path, { method: "PUT", headers: dataHeaders, body: text });
        if (text.length > 64 * 1024) return expect(put.status).toBe(413);
        expect(put.status, path).toBe(200);
        const got = await app.request(path, { headers: dataHeaders });
        expect(got.status).toBe(200);
        expect(await got.json()).toEqual(JSON.parse(text));
      }),
      propertyParameters(400),
    );
  }, 120_000);

  it("an audit entry that answered 200 is in the day's trail as sent", async () => {
    const app = service();
    await fc.assert(
      fc.asyncProperty(validSegment.chain((userId) => fc.tuple(fc.constant(userId), auditEntryFor(userId))), async ([userId, entry]) => {
        const query = `?userId=${encodeURIComponent(userId)}`;
        const text = JSON.stringify(entry);
        const posted = await app.request(`/audit/audit/${query}`, { method: "POST", headers: dataHeaders, body: text });
        if (new TextEncoder().encode(text).length > 64 * 1024) return expect(posted.status).toBe(413);
        expect(posted.status, text.slice(0, 200)).toBe(200);
        const trail = (await (await app.request(`/audit/audit/${query}`, { headers: dataHeaders })).json()) as { entries: unknown[] };
        expect(trail.entries).toContainEqual(expect.objectContaining(JSON.parse(text) as Record<string, unknown>));
      }),
      propertyParameters(300),
    );
  }, 120_000);

  it("a user record that answered 201 reads back with what was sent", async () => {
    const app = service();
    const userAuth = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
    const profile = fc.record({
      firstName: fc.string({ unit: "grapheme", maxLength: 100 }),
      lastName: fc.string({ unit: "grapheme", maxLength: 100 }),
      company: fc.string({ unit: "grapheme", maxLength: 100 }),
      permitted: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(validSegment, profile, async (uid, fields) => {
        const path = `/user/${encodeURIComponent(uid)}`;
        await app.request(path, { method: "DELETE", headers: userAuth });
        const put = await app.request(path, { method: "PUT", headers: userAuth, body: JSON.stringify({ email: "a@lab.example", ...fields }) });
        expect(put.status, path).toBeLessThan(500);
        if (put.status !== 201) return;
        const got = (await (await app.request(path, { headers: userAuth })).json()) as Record<string, unknown>;
        // Profile text is stored trimmed.
        expect(got).toMatchObject({ uid, firstName: fields.firstName.trim(), lastName: fields.lastName.trim(), company: fields.company.trim(), permitted: fields.permitted });
      }),
      propertyParameters(300),
    );
  }, 120_000);
});
