import { describe, expect, it } from "vitest";
import { dataHeaders, KEYS, stubVerifier, testService } from "../helpers/service.ts";

// A small deterministic generator, so a failure names a reproducible case.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const pieces = [
  "u1", "C-1", "data.json", "..", ".", "", "%2e%2e", "%2F", "%5C", "%00", "%ff", "%", "%E0%A4", "a b", "é", "✓",
  "audit", "audit-trails", "x.json", ".json", "%3A", "%3F", "%23", "__proto__", "constructor", "a".repeat(300),
];
const bodies: (string | Uint8Array<ArrayBuffer>)[] = [
  "", "{", "}", "[]", "{}", "null", "[[[[[[[[[[", '{"a":', "\u0000", '"\ud800"', "not json", '{"__proto__":{"x":1}}',
  new Uint8Array([0xff, 0xfe, 0xfd]), new Uint8Array([0xc0, 0xae]), JSON.stringify({ timestamp: "x", action: 1 }),
  JSON.stringify({ "captcha-response": ["a"] }), JSON.stringify({ email: "a@b.example", firstName: "A", lastName: "B", company: "C", permitted: true }),
  JSON.stringify({ cases: [{ caseNumber: ".." }, { caseNumber: "C-1" }] }), JSON.stringify({ casesToDelete: ["C-1", 5] }), JSON.stringify({ email: 5, permitted: "yes" }), "9".repeat(5000), '{"a":1e999}',
];
const methods = ["GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS"];
const mounts = ["/data", "/audit", "/keys", "/captcha", "", "/data/audit", "/audit/audit", "/image", "/image/delivery", "/image/https:", "/user", "/user/u1", "/user/u1/cases", "/pdf"];
const queries = ["", "?userId=u1", "?userId=", "?userId=%ff", "?userId=u1&startDate=2026-02-30", "?userId=u1&startDate=x&endDate=y", "?userId=..&startDate=2026-01-01&endDate=2026-01-02", "?userId=u1&userId=u2"];

describe("no input answers 500", () => {
  it("2,000 generated requests against every worker answer below 500 with JSON error bodies", async () => {
    const { app } = testService({}, { captcha: stubVerifier({ success: false, "error-codes": ["invalid-input-response"] }) });
    const next = random(20261122);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    const headerSets: Record<string, string>[] = [dataHeaders, { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" }, { "X-Custom-Auth-Key": KEYS.KEYS_AUTH }, { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` }, { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}`, "Content-Type": "multipart/form-data; boundary=x" }, {}, { "Content-Type": "application/x-www-form-urlencoded" }];
    for (let i = 0; i < 2_000; i++) {
      const depth = 1 + Math.floor(next() * 4);
      // Every tenth request goes to the PDF worker's one route, the rest anywhere.
      const path = i % 10 === 0 ? "/pdf" : `${pick(mounts)}/${Array.from({ length: depth }, () => pick(pieces)).join("/")}${pick(queries)}`;
      const method = pick(methods);
      const body = method === "GET" || method === "HEAD" ? undefined : pick(bodies);
      const response = await app.request(path, { method, body, headers: pick(headerSets) });
      expect(response.status, `${method} ${path}`).toBeLessThan(500);
      if (response.status >= 400 && method !== "HEAD") {
        const error = (await response.json()) as Record<string, unknown>;
        expect(Object.keys(error).sort(), `${method} ${path}`).toEqual(["code", "details", "error", "message"]);
      }
    }
  }, 60_000);
});
