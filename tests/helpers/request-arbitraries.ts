/**
 * fast-check arbitraries of hostile but sendable requests to every worker: paths built from
 * key pieces, percent-encodings and long segments; credentials right and wrong; bodies that
 * are JSON of any shape, deeply nested, oversized, binary or not UTF-8.
 */
import fc from "fast-check";
import { KEYS } from "./service.ts";

/** One request as a test sends it, through `app.request` or over HTTP. */
export interface GeneratedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
}

/** The seed of this run: `FC_SEED` when set (to replay a failure), else a fixed one. */
export const PROPERTY_SEED = Number(process.env.FC_SEED ?? 20261123);

/** Parameters for `fc.assert` that print the seed and the shrunk request on failure. */
export const propertyParameters = (numRuns: number): fc.Parameters<unknown> => ({
  seed: PROPERTY_SEED,
  numRuns,
  verbose: 1,
  // The failure message then starts with how to replay it.
  reporter: (details) => {
    if (details.failed) {
      throw new Error(`Property failed with FC_SEED=${details.seed} (path ${details.counterexamplePath}): ${fc.defaultReportMessage(details)}`);
    }
  },
});

const encoder = new TextEncoder();

/** A key segment the key rules accept: no `/ \ : ? #` or controls, not `.`/`..`, at most 255 bytes. */
export const validSegment = fc
  .string({ unit: "grapheme", minLength: 1, maxLength: 80 })
  .map((text) => text.replace(/[\u0000-\u001f\u007f-\u009f/\\:?#%]/g, "_"))
  .filter((text) => text !== "." && text !== ".." && text !== "" && encoder.encode(text).length <= 255);

const hostileSegment = fc.oneof(
  fc.constantFrom("u1", "C-1", "data.json", "..", ".", "", "%2e%2e", "%2F", "%5C", "%00", "%ff", "%", "%E0%A4", "audit", "__proto__", "x.json", ".json", "%3A", "%3F"),
  validSegment.map(encodeURIComponent),
  fc.integer({ min: 200, max: 300 }).map((n) => "a".repeat(n)),
  fc.string({ unit: "binary", maxLength: 20 }).map(encodeURIComponent),
  fc.uint8Array({ maxLength: 12 }).map((bytes) => Array.from(bytes, (b) => `%${b.toString(16).padStart(2, "0")}`).join("")),
);

const mounts = ["/data", "/audit", "/keys", "/captcha", "/data/audit", "/audit/audit", "/image", "/image/delivery", "/image/https:", "/user", "/pdf", ""];
const queries = fc.oneof(
  fc.constantFrom("", "?userId=u1", "?userId=", "?userId=%ff", "?userId=u1&startDate=2026-02-30", "?userId=u1&startDate=2026-11-22T12:51:07.123Z&endDate=2026-11-21T08:00:00Z", "?userId=..", "?userId=u1&userId=u2", "?owner=u1"),
  validSegment.map((userId) => `?userId=${encodeURIComponent(userId)}`),
  fc.string({ maxLength: 40 }).map((text) => `?userId=u1&startDate=${encodeURIComponent(text)}&endDate=${encodeURIComponent(text)}`),
);

const path = fc
  .tuple(fc.constantFrom(...mounts), fc.array(hostileSegment, { minLength: 0, maxLength: 4 }), queries)
  .map(([mount, segments, query]) => `${mount}/${segments.join("/")}${query}`);

const nested = (depth: number, open: string, close: string) => `${open.repeat(depth)}${close.repeat(depth)}`;
const body = fc.oneof(
  fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value) ?? "null"),
  fc.integer({ min: 1, max: 6000 }).map((depth) => nested(depth, "[", "]")),
  fc.integer({ min: 1, max: 6000 }).map((depth) => `{"timestamp":"2026-11-22T12:00:00.000Z","userId":"u1","userEmail":"u1@lab.example","action":"case-create","result":"success","details":{"x":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}}`),
  fc.integer({ min: 1, max: 6000 }).map((depth) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => new Uint8Array(bytes)),
  fc.constantFrom("", "{", "null", "\u0000", '"\ud800"', "not json", '{"__proto__":{"x":1}}', '{"a":1e999}'),
  // Around the size limits the tests configure (64 KiB documents, 8 KiB audit entries).
  fc.integer({ min: 1, max: 160 }).map((kilobytes) => `"${"x".repeat(kilobytes * 1024)}"`),
  fc.record({
    email: fc.oneof(fc.emailAddress(), fc.string()),
    firstName: fc.string({ maxLength: 300 }),
    lastName: fc.string(),
    company: fc.string(),
    permitted: fc.oneof(fc.boolean(), fc.string()),
  }).map((record) => JSON.stringify(record)),
  fc.record({ cases: fc.array(fc.record({ caseNumber: fc.oneof(validSegment, hostileSegment) }), { maxLength: 5 }) }).map((value) => JSON.stringify(value)),
);

const headerSet = fc.constantFrom<Record<string, string>>(
  { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET },
  { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" },
  { "X-Custom-Auth-Key": KEYS.KEYS_AUTH },
  { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` },
  { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}`, "Content-Type": "multipart/form-data; boundary=x" },
  { "X-Custom-Auth-Key": "wrong" },
  {},
  { "Content-Type": "application/x-www-form-urlencoded" },
  { "X-Identity-Token": "a.b.c", "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET },
);

const methods = fc.constantFrom("GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS");

/** Anything at all: any mount, any segments, any credential, any body. */
const anywhere: fc.Arbitrary<GeneratedRequest> = fc
  .tuple(methods, path, headerSet, body)
  .map(([method, requestPath, headers, requestBody]) => ({ method, path: requestPath, headers, ...(method === "GET" || method === "HEAD" ? {} : { body: requestBody }) }));

/** A segment as a client sends it: mostly valid (up to the 255-byte limit), sometimes hostile. */
const segment = fc.oneof(
  { weight: 5, arbitrary: validSegment.map(encodeURIComponent) },
  { weight: 2, arbitrary: fc.integer({ min: 200, max: 255 }).map((n) => "s".repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 85 }).map((n) => encodeURIComponent("é✓".repeat(n))) },
  { weight: 2, arbitrary: hostileSegment },
);
/** The worker's own credential most of the time, another one sometimes. */
const credential = (own: Record<string, string>) => fc.oneof({ weight: 4, arbitrary: fc.constant(own) }, { weight: 1, arbitrary: headerSet });

const DATA = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
const USER = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH, "Content-Type": "application/json" };
const IMAGE = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };

/** An audit entry whose extra field nests `[` up to tens of thousands deep. */
const deepEntry = fc.integer({ min: 1, max: 30_000 }).map((depth) =>
  `{"timestamp":"2026-11-22T12:00:00.000Z","userId":"u1","userEmail":"u1@lab.example","action":"case-create","result":"success","details":{"x":${"[".repeat(depth)}${"]".repeat(depth)}}}`
);
const auditBody = fc.oneof(deepEntry, body);
const dates = fc.oneof(
  fc.constant(""),
  fc.constantFrom("&startDate=2026-11-22T12:51:07.123Z&endDate=2026-11-22T08:00:00Z", "&startDate=2026-11-20&endDate=2026-11-22", "&startDate=2025-01-01&endDate=2026-11-22", "&startDate=x"),
  fc.tuple(fc.date({ noInvalidDate: true }), fc.date({ noInvalidDate: true })).map(([a, b]) => `&startDate=${a.toISOString()}&endDate=${b.toISOString()}`),
);

/** Requests shaped like each route's, so that deep checks (not just routing) are reached. */
const routed: fc.Arbitrary<GeneratedRequest> = fc.oneof(
  fc.tuple(fc.constantFrom("GET", "PUT", "DELETE"), segment, segment, fc.constantFrom("data.json", "x.json", "f1/data.json"), credential(DATA), body).map(([method, user, kase, name, headers, requestBody]) => ({
    method, path: `/data/${user}/${kase}/${name}`, headers, ...(method === "PUT" ? { body: requestBody } : {}),
  })),
  fc.tuple(fc.constantFrom("POST", "GET"), fc.constantFrom("/audit/audit/", "/data/audit/"), fc.oneof(fc.constant("u1"), segment), dates, credential(DATA), auditBody).map(([method, route, userId, range, headers, requestBody]) => ({
    method, path: `${route}?userId=${userId}${method === "GET" ? range : ""}`, headers, ...(method === "POST" ? { body: requestBody } : {}),
  })),
  fc.tuple(fc.constantFrom("GET", "PUT", "DELETE"), segment, fc.boolean(), credential(USER), body).map(([method, uid, cases, headers, requestBody]) => ({
    method, path: `/user/${uid}${cases ? "/cases" : ""}`, headers, ...(method === "GET" ? {} : { body: requestBody }),
  })),
  fc.tuple(segment, credential({ "X-Custom-Auth-Key": KEYS.KEYS_AUTH })).map(([name, headers]) => ({ method: "GET", path: `/keys/${name}`, headers })),
  fc.tuple(fc.constantFrom("GET", "DELETE"), segment, fc.constantFrom("", "/public", "/striae"), credential(IMAGE)).map(([method, id, variant, headers]) => ({
    method, path: method === "GET" ? `/image/https://imagedelivery.net/${KEYS.ACCOUNT_HASH}/${id}${variant}` : `/image/${id}`, headers,
  })),
  fc.tuple(segment, segment, fc.string({ maxLength: 20 })).map(([id, variant, sig]) => ({ method: "GET", path: `/image/delivery/${id}/${variant}?exp=99999999999&sig=${encodeURIComponent(sig)}`, headers: {} })),
  fc.tuple(fc.uint8Array({ maxLength: 300 }), fc.constantFrom("file", "picture")).map(([bytes, field]) => {
    const boundary = "----fa";
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    const payload = new Uint8Array([...new TextEncoder().encode(head), ...bytes, ...new TextEncoder().encode(tail)]);
    return { method: "POST", path: "/image", headers: { ...IMAGE, "Content-Type": `multipart/form-data; boundary=${boundary}` }, body: payload };
  }),
  body.map((requestBody) => ({ method: "POST", path: "/pdf", headers: { "Content-Type": "application/json" }, body: requestBody })),
);

/** Any request to any worker: half shaped like a route's, half anything at all. */
export const anyRequest: fc.Arbitrary<GeneratedRequest> = fc.oneof(routed, anywhere);

/** A JSON document the data worker must store and give back as it was. */
export const storableDocument = fc.jsonValue({ maxDepth: 12 });

/** A valid audit entry with generated text and extra fields (kept as sent). */
export const auditEntryFor = (userId: string) =>
  fc.record({
    note: fc.string({ unit: "grapheme", maxLength: 200 }),
    extra: fc.jsonValue({ maxDepth: 8 }),
  }).map(({ note, extra }) => ({
    timestamp: "2026-11-22T12:00:00.000Z",
    userId,
    userEmail: "u1@lab.example",
    action: "case-create",
    result: "success",
    details: { caseNumber: "C-1", note, extra },
  }));
