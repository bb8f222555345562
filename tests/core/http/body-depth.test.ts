/**
 * JSON nesting is limited on every JSON body of every worker (issue 13 item 1), stored
 * documents too deep to parse are still served, and 4xx answers never carry a library's
 * message (issue 13 item 7).
 */
import { describe, expect, it } from "vitest";
import { zipSync } from "fflate";
import { dataHeaders, KEYS, stubVerifier, testService } from "../../helpers/service.ts";
import { auditEntry } from "../../helpers/audit-entry.ts";
import { fixture, uploadForm } from "../../helpers/images.ts";
import { jsonDepthOverflow, MAX_JSON_DEPTH } from "../../../src/core/encoding/json-depth.ts";
import { jsonSyntaxFault } from "../../../src/core/encoding/json-syntax.ts";
import { parseJsonText } from "../../../src/core/http/body.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { importConfirmations, portsExchangeStore, previewCaseImport } from "../../../src/core/exchange/mod.ts";
import { buildManifest } from "../../../src/core/exchange/package/manifest.ts";
import { sha256Hex } from "../../../src/core/encoding/digest.ts";
import { statusOf } from "../../../src/core/http/errors.ts";

const nested = (levels: number, inner = "1"): string => `${"[".repeat(levels)}${inner}${"]".repeat(levels)}`;
const userHeaders = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
const bearer = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };

/** Texts that come from engines or libraries, never from this service. */
const LIBRARY_TEXTS = [
  /Cannot read propert/i,
  /DataView/,
  /is not a function/,
  /undefined is not/,
  /Unexpected token/,
  /in JSON at position/,
  /JSON Parse error/,
  /JSON\.parse/,
  /SyntaxError|TypeError|RangeError/,
  /Maximum call stack/i,
  /Multipart stream not finished|missing initial boundary|Unexpected data after end of stream/,
];

function expectNoLibraryText(body: unknown, what: string): void {
  const text = JSON.stringify(body);
  for (const pattern of LIBRARY_TEXTS) expect(text, `${what}: ${text}`).not.toMatch(pattern);
}

/** Every route that reads a JSON body, with a valid body that has room for a nested field. */
const JSON_ROUTES: { name: string; path: string; method: string; headers: Record<string, string>; body: (extra: string) => string }[] = [
  { name: "data PUT", path: "/data/u1/C-1/data.json", method: "PUT", headers: dataHeaders, body: (extra) => `{"caseNumber":"C-1","extra":${extra}}` },
  { name: "audit POST (data)", path: "/data/audit/?userId=u1", method: "POST", headers: dataHeaders, body: (extra) => JSON.stringify(auditEntry()).replace(/}$/, `,"extra":${extra}}`) },
  { name: "audit POST (audit)", path: "/audit/audit/?userId=u1", method: "POST", headers: dataHeaders, body: (extra) => JSON.stringify(auditEntry()).replace(/}$/, `,"extra":${extra}}`) },
  { name: "user PUT", path: "/user/u1", method: "PUT", headers: userHeaders, body: (extra) => `{"email":"a@lab.example","firstName":"A","lastName":"B","company":"Lab","permitted":true,"extra":${extra}}` },
  { name: "user cases PUT", path: "/user/u1/cases", method: "PUT", headers: userHeaders, body: (extra) => `{"cases":[{"caseNumber":"C-1","extra":${extra}}]}` },
  { name: "user cases DELETE", path: "/user/u1/cases", method: "DELETE", headers: userHeaders, body: (extra) => `{"casesToDelete":["C-1"],"extra":${extra}}` },
  { name: "pdf POST", path: "/pdf/", method: "POST", headers: {}, body: (extra) => `{"imageUrl":"data:image/png;base64,AA==","extra":${extra}}` },
  { name: "captcha POST", path: "/captcha/", method: "POST", headers: {}, body: (extra) => `{"cf-turnstile-response":"t","extra":${extra}}` },
];

function service() {
  return testService({}, { captcha: stubVerifier({ success: true, "error-codes": [] }) });
}

describe("the nesting depth of JSON text", () => {
  it("counts [ and { outside strings, honouring escapes, and finds the first level over the limit", () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(jsonDepthOverflow(nested(64))).toBe(-1);
    expect(jsonDepthOverflow(nested(65))).toBe(64);
    expect(jsonDepthOverflow(`{"a":${nested(63)}}`)).toBe(-1);
    // The offset is that of the bracket at level 65.
    const atLevel65 = (text: string) => text.indexOf(nested(64)) + 63;
    const inObject = `{"a":${nested(64)}}`;
    expect(jsonDepthOverflow(inObject)).toBe(atLevel65(inObject));
    // Brackets inside strings, after escaped quotes and backslashes, are text.
    expect(jsonDepthOverflow(JSON.stringify({ a: "[".repeat(500), b: '\\"{{{{', c: "\\" + "{".repeat(100) }))).toBe(-1);
    for (const text of [`["\\\\", ${nested(64)}]`, `["\\"", ${nested(64)}]`, `["a\\\\\\"[", ${nested(64)}]`]) {
      expect(jsonDepthOverflow(text), text).toBe(atLevel65(text));
    }
    // An unclosed string runs to the end: what follows its quote is text.
    expect(jsonDepthOverflow(`["abc${nested(100)}`)).toBe(-1);
    expect(jsonDepthOverflow(`["\\\\\\\\"${nested(65)}`)).toBe(`["\\\\\\\\"`.length + 63);
    // Closers without openers do not buy depth.
    expect(jsonDepthOverflow(`${"]".repeat(10)}${nested(65)}`)).toBe(74);
  });

  it("is linear: a megabyte of nesting is measured in well under a second", () => {
    const text = `[${'"[{",'.repeat(100_000)}${nested(60)}]`;
    const started = performance.now();
    expect(jsonDepthOverflow(text)).toBe(-1);
    expect(jsonDepthOverflow(nested(500_000))).toBe(64);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("parseJsonText refuses deep text before parsing, with 400 VALIDATION_ERROR naming the limit", () => {
    for (const text of [nested(65), nested(4_100), nested(1_000_000)]) {
      let thrown: unknown;
      try {
        parseJsonText(text);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ServiceError);
      const error = thrown as ServiceError;
      expect(statusOf(error)).toBe(400);
      expect(error.code).toBe("VALIDATION_ERROR");
      expect(error.message).toBe("Request body is nested deeper than 64 levels of arrays and objects");
      expect(error.details).toMatchObject({ maxDepth: 64, position: 64 });
    }
    expect(parseJsonText(nested(64))).toBeInstanceOf(Array);
  });

  it("describes syntax faults by line, column and what was expected, the same on every runtime", () => {
    expect(jsonSyntaxFault('{"a": 1}')).toBeUndefined();
    expect(jsonSyntaxFault('{"a" 1}')).toEqual({ position: 5, line: 1, column: 6, problem: "expected ':' after a property name, found '1'" });
    expect(jsonSyntaxFault("{\n  \"a\": 1,\n}")).toMatchObject({ line: 3, column: 1, problem: "expected a property name in double quotes, found '}'" });
    expect(jsonSyntaxFault("[1,]")).toMatchObject({ position: 3, problem: "expected a value (object, array, string, number, true, false or null), found ']'" });
    expect(jsonSyntaxFault('{"a": "b')).toMatchObject({ position: 6, problem: "a string is not closed (missing '\"')" });
    expect(jsonSyntaxFault('["\\x"]')).toMatchObject({ problem: "invalid escape in a string: \\x" });
    expect(jsonSyntaxFault("[1] x")).toMatchObject({ position: 4, problem: "unexpected 'x' after the JSON value" });
    expect(jsonSyntaxFault("[01]")).toMatchObject({ position: 2 });
    expect(jsonSyntaxFault("{")).toMatchObject({ problem: "expected a property name in double quotes, found the end of the text" });
    expect(jsonSyntaxFault('["a\tb"]')).toMatchObject({ problem: "control character U+0009 inside a string (must be escaped)" });
    // Whatever the engine accepts, the checker accepts, and the reverse.
    for (const text of ["0", "-0.5e+3", '"\\u00e9\\n"', "[true,false,null]", ' {"a":[{}, []]} ', "1.", ".5", "+1", "[1 2]", "tru", '{"a":1,}']) {
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      expect(jsonSyntaxFault(text) === undefined, text).toBe(valid);
    }
  });
});

describe("every JSON body of every worker", () => {
  it("nested deeper than 64 levels is a 400 VALIDATION_ERROR naming the limit, and nothing is stored", async () => {
    const { app, ports } = service();
    for (const route of JSON_ROUTES) {
      for (const levels of [64, 4_100]) {
        const response = await app.request(route.path, { method: route.method, headers: route.headers, body: route.body(nested(levels)) });
        expect(response.status, `${route.name} ${levels}`).toBe(400);
        const body = (await response.json()) as { code: string; message: string; details: Record<string, unknown> };
        expect(body.code).toBe("VALIDATION_ERROR");
        expect(body.message, route.name).toContain("nested deeper than 64 levels");
        expect(body.details.maxDepth).toBe(64);
      }
    }
    expect(await ports.data.list("")).toEqual([]);
    expect(await ports.audit.list("")).toEqual([]);
    expect(await ports.users.list("")).toEqual([]);
  });

  it("100,000 levels (200 KB) on the data and audit routes are a 400 too, not a 500", async () => {
    const { app } = testService({ MAX_AUDIT_ENTRY_BYTES: "1000000" });
    for (const route of JSON_ROUTES.slice(0, 3)) {
      const response = await app.request(route.path, { method: route.method, headers: route.headers, body: route.body(nested(100_000)) });
      expect(response.status, route.name).toBe(400);
    }
  });

  it("a number too large for a double (1e400, -1e999, 309 digits) is a 400 naming where, not a 500 or a silent null; nothing is stored", async () => {
    const { app, ports } = service();
    for (const route of JSON_ROUTES) {
      const shapes = [
        ["1e400", "extra"],
        ["[1, -1E+999]", "extra.1"],
        [`{"n":${"9".repeat(309)}}`, "extra.n"],
        // Fewer digits and a two-digit exponent, or 300 digits and a one-digit one, overflow too.
        [`[${"2" + "0".repeat(209)}e99]`, "extra.0"],
        [`-2${"0".repeat(299)}e9`, "extra"],
      ] as const;
      for (const [extra, path] of shapes) {
        const response = await app.request(route.path, { method: route.method, headers: route.headers, body: route.body(extra) });
        expect(response.status, `${route.name} ${extra.slice(0, 20)}`).toBe(400);
        const body = (await response.json()) as { code: string; message: string; details: Record<string, unknown> };
        expect(body.code).toBe("VALIDATION_ERROR");
        expect(body.message, route.name).toContain("a number too large for a double");
        expect(body.details.path, route.name).toBe(path.replace(/^extra/, route.name === "user cases PUT" ? "cases.0.extra" : "extra"));
      }
    }
    expect(await ports.data.list("")).toEqual([]);
    expect(await ports.audit.list("")).toEqual([]);
    expect(await ports.users.list("")).toEqual([]);
    // The largest doubles, tiny numbers and such text in strings are ordinary.
    for (const extra of ["1.7976931348623157e308", "1e-400", '"1e400"', `"${"9".repeat(400)}"`]) {
      const body = `{"caseNumber":"C-1","extra":${extra}}`;
      expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body })).status, extra).toBe(200);
    }
  });

  it("looking for such numbers is linear: 9 MB of 299-digit numbers (each just short of the run that may overflow) parse in well under a second", () => {
    const text = `[${Array.from({ length: 31_000 }, () => "1".repeat(299)).join(",")}]`;
    const started = performance.now();
    expect((parseJsonText(text) as number[]).length).toBe(31_000);
    // A check tried at every digit cost 300 steps a character here: 2.4 s on a 2-core VM.
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("a compressed body (Content-Encoding: gzip) is a 415 on every JSON route and on upload, never stored as its bytes; identity is no encoding", async () => {
    const { app, ports } = service();
    for (const route of JSON_ROUTES) {
      const response = await app.request(route.path, { method: route.method, headers: { ...route.headers, "Content-Encoding": "gzip" }, body: route.body("1") });
      expect(response.status, route.name).toBe(415);
      expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR", message: "Content-Encoding gzip is not accepted: send the body uncompressed" });
    }
    const upload = await app.request("/image/", { method: "POST", headers: { ...bearer, "Content-Encoding": "br" }, body: uploadForm(fixture("sample.png"), "a.png") });
    expect(upload.status).toBe(415);
    expect(await ports.data.list("")).toEqual([]);
    expect(await ports.images.list("")).toEqual([]);
    const plain = await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: { ...dataHeaders, "Content-Encoding": "identity" }, body: "{}" });
    expect(plain.status).toBe(200);
  });

  it("62 levels inside a body (64 in all) are accepted and read back", async () => {
    const { app } = service();
    const body = `{"caseNumber":"C-1","extra":${nested(62)}}`;
    expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body })).status).toBe(200);
    const read = await app.request("/data/u1/C-1/data.json", { headers: dataHeaders });
    expect(await read.text()).toBe(body);
  });

  it("a stored document too deep to parse (written before the limit) is served as stored, not a 500", async () => {
    const { app, ports } = service();
    const stored = `{"caseNumber":"C-1","extra":${nested(200_000)}}`;
    await ports.data.put("u1/C-1/data.json", new TextEncoder().encode(stored));
    const response = await app.request("/data/u1/C-1/data.json", { headers: dataHeaders });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(stored);
  });
});

describe("4xx answers say what is wrong with the input, never a library's message", () => {
  const malformed = ["{", '{"a" 1}', "[1,]", "nul", '"\\x"', "{'a':1}", '{"a":1}}', "\u0000"];
  const wrongTypes = ['"text"', "null", "42", "true", "[]", "[{}]", '{"details":null}'];

  it("malformed JSON gets our description: what was expected, at which line and column", async () => {
    const { app } = service();
    for (const route of JSON_ROUTES) {
      for (const text of malformed) {
        const response = await app.request(route.path, { method: route.method, headers: route.headers, body: text });
        expect(response.status, `${route.name} ${JSON.stringify(text)}`).toBe(400);
        const body = (await response.json()) as { code: string; message: string; details: Record<string, unknown> };
        expect(body.code).toBe("VALIDATION_ERROR");
        expect(body.message).toMatch(/is not valid JSON: .+ at line \d+, column \d+$/);
        expect(body.details).toMatchObject({ reason: expect.any(String), position: expect.any(Number), line: expect.any(Number), column: expect.any(Number) });
        expectNoLibraryText(body, `${route.name} ${JSON.stringify(text)}`);
      }
    }
  });

  it("valid JSON of the wrong type is a 400 naming the field, without library messages", async () => {
    const { app } = service();
    for (const route of JSON_ROUTES) {
      for (const text of wrongTypes) {
        const response = await app.request(route.path, { method: route.method, headers: route.headers, body: text });
        // Any JSON is a valid data document; the other routes need their object.
        if (route.name === "data PUT") {
          expect(response.status, text).toBeLessThan(500);
          continue;
        }
        expect(response.status, `${route.name} ${text}`).toBe(400);
        const body = await response.json();
        expect(body).toMatchObject({ code: "VALIDATION_ERROR" });
        expectNoLibraryText(body, `${route.name} ${text}`);
      }
    }
  });

  it("a broken multipart upload is a 400 that says what a valid body looks like", async () => {
    const { app } = service();
    const form = new Request("http://x/", { method: "POST", body: uploadForm(fixture("sample.png"), "a.png") });
    const contentType = form.headers.get("Content-Type")!;
    const whole = new Uint8Array(await form.arrayBuffer());
    const bodies: [string, BodyInit, string][] = [
      ["truncated", whole.slice(0, whole.length - 40), contentType],
      ["no initial boundary", "garbage\r\n\r\nmore", contentType],
      ["empty", "", contentType],
      ["no boundary parameter", whole, "multipart/form-data"],
    ];
    for (const [what, body, type] of bodies) {
      const response = await app.request("/image/", { method: "POST", headers: { ...bearer, "Content-Type": type }, body });
      expect(response.status, what).toBe(400);
      const answer = (await response.json()) as { code: string; message: string };
      expect(answer.code).toBe("VALIDATION_ERROR");
      expectNoLibraryText(answer, what);
    }
  });

  it("a truncated image is a 400 on upload and on /pdf, without a decoder's message", async () => {
    const { app } = service();
    for (const name of ["sample.png", "sample.jpg"]) {
      const whole = fixture(name);
      for (const cut of [whole.length - 20, Math.floor(whole.length / 2), 40]) {
        const bytes = whole.slice(0, cut);
        const upload = await app.request("/image/", { method: "POST", headers: bearer, body: uploadForm(bytes, name) });
        expect(upload.status, `upload ${name} cut at ${cut}`).toBe(400);
        expectNoLibraryText(await upload.json(), `upload ${name} ${cut}`);
        const type = name.endsWith(".png") ? "image/png" : "image/jpeg";
        const imageUrl = `data:${type};base64,${btoa(String.fromCharCode(...bytes))}`;
        const pdf = await app.request("/pdf/", { method: "POST", body: JSON.stringify({ imageUrl }) });
        expect(pdf.status, `pdf ${name} cut at ${cut}`).toBe(400);
        expectNoLibraryText(await pdf.json(), `pdf ${name} ${cut}`);
      }
    }
  });
});

describe("JSON files of the exchange import", () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  const deepData = `{"metadata":{"caseNumber":"C-1"},"x":${nested(4_100)}}`;
  const manifestOf = async (data: string) => JSON.stringify(await buildManifest(await sha256Hex(encode(data)), {}, "2026-11-22T12:00:00.000Z"), null, 2);

  it("a case package whose manifest or data file nests too deeply is refused with the reason", async () => {
    const packages: Record<string, Uint8Array>[] = [
      { "C-1_data.json": encode('{"metadata":{"caseNumber":"C-1"}}'), "FORENSIC_MANIFEST.json": encode(`{"x":${nested(4_100)}}`) },
      // Hashes that match, so the data file itself is read.
      { "C-1_data.json": encode(deepData), "FORENSIC_MANIFEST.json": encode(await manifestOf(deepData)) },
    ];
    for (const files of packages) {
      const preview = await previewCaseImport(zipSync(files));
      expect(JSON.stringify(preview)).toContain("nested deeper than 64 levels");
      expectNoLibraryText(preview, Object.keys(files).join());
    }
  });

  it("a confirmation file nested too deeply is refused with the reason", async () => {
    const { ports } = service();
    const result = await importConfirmations(portsExchangeStore(ports), "u1", encode(deepData));
    expect(result.success).toBe(false);
    expect(result.errors?.join(" ")).toContain("nested deeper than 64 levels");
    expectNoLibraryText(result, "confirmations");
  });
});
