import { describe, expect, it } from "vitest";
import { dataHeaders, KEYS, testService } from "../../helpers/service.ts";

const put = (app: ReturnType<typeof testService>["app"], path: string, body: BodyInit, headers = {}) =>
  app.request(path, { method: "PUT", body, headers: { ...dataHeaders, ...headers } });

async function expectError(response: Response, status: number, code: string): Promise<Record<string, unknown>> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ code });
  expect(typeof body.error).toBe("string");
  expect(typeof body.message).toBe("string");
  expect(typeof body.details).toBe("object");
  return body;
}

describe("data worker (spec 4.4)", () => {
  it("GET of a missing document answers 200 []", async () => {
    const { app } = testService();
    const response = await app.request("/data/u1/C-1/data.json", { headers: dataHeaders });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/application\/json/);
    expect(await response.json()).toEqual([]);
  });

  it("PUT stores any valid JSON and GET reads it back exactly", async () => {
    const { app } = testService();
    for (const body of ['{"caseNumber":"C-1","files":[]}', "[1,2,3]", '"text"', "42", "null", "true"]) {
      const response = await put(app, "/data/u1/C-1/data.json", body);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ success: true });
      const read = await app.request("/data/u1/C-1/data.json", { headers: dataHeaders });
      expect(await read.text()).toBe(body);
    }
  });

  it("stores under the decoded key: segments are percent-decoded exactly once", async () => {
    const { app, ports } = testService();
    await put(app, "/data/u1/case%201/data.json", '{"a":1}');
    expect(await ports.data.has("u1/case 1/data.json")).toBe(true);
    // %2541 decodes once to "%41", not to "A".
    await put(app, "/data/u1/x%2541/data.json", '{"b":2}');
    expect(await ports.data.has("u1/x%41/data.json")).toBe(true);
    expect(await ports.data.has("u1/xA/data.json")).toBe(false);
  });

  it("one trailing slash is the same document (docs/api.md Conventions); an empty segment is still a 400", async () => {
    const { app } = testService();
    expect((await put(app, "/data/u1/C-1/data.json/", '{"a":1}')).status).toBe(200);
    expect(await (await app.request("/data/u1/C-1/data.json", { headers: dataHeaders })).json()).toEqual({ a: 1 });
    expect(await (await app.request("/data/u1/C-1/data.json/", { headers: dataHeaders })).json()).toEqual({ a: 1 });
    await expectError(await app.request("/data/u1/C-1/data.json//", { headers: dataHeaders }), 400, "VALIDATION_ERROR");
    await expectError(await app.request("/data/u1//data.json", { headers: dataHeaders }), 400, "VALIDATION_ERROR");
    expect((await app.request("/data/u1/C-1/data.json/", { method: "DELETE", headers: dataHeaders })).status).toBe(200);
  });

  it("PUT of non-JSON, empty, truncated or invalid UTF-8 bodies answers 400", async () => {
    const { app, ports } = testService();
    const bodies: BodyInit[] = ["not json", "", '{"a":', "{'a':1}", new Uint8Array([0x22, 0xff, 0xfe, 0x22])];
    for (const body of bodies) {
      await expectError(await put(app, "/data/u1/C-1/data.json", body), 400, "VALIDATION_ERROR");
    }
    expect(await ports.data.has("u1/C-1/data.json")).toBe(false);
  });

  it("a key that is not .json answers 400 for GET, PUT and DELETE", async () => {
    const { app } = testService();
    for (const method of ["GET", "PUT", "DELETE"]) {
      for (const path of ["/data/u1/C-1/data.txt", "/data/u1/C-1/data", "/data/u1/.json", "/data/", "/data"]) {
        const response = await app.request(path, { method, body: method === "PUT" ? "{}" : undefined, headers: dataHeaders });
        await expectError(response, 400, "VALIDATION_ERROR");
      }
    }
  });

  it("refuses traversal and malformed keys with 400, never touching the store", async () => {
    const { app, ports } = testService();
    const paths = [
      "/data/u1%2F..%2F..%2Fetc/data.json", // encoded slash
      "/data/u1/%2e%2e%2fx/data.json",
      "/data/u1/..%5Cx/data.json", // backslash
      "/data/u1//data.json", // empty segment
      "/data/u1/a%00b/data.json", // control character
      "/data/u1/a%0Ab/data.json",
      "/data/u1/a%3Ab/data.json", // colon (unstorage's separator)
      "/data/u1/a%3Fb/data.json", // question mark
      "/data/u1/a%23b/data.json", // hash
      "/data/u1/%E0%A4%A/data.json", // broken percent-encoding
      "/data/u1/%C0%AE%C0%AE/data.json", // overlong UTF-8 dots
      `/data/u1/${"a".repeat(300)}/data.json`,
    ];
    for (const path of paths) {
      for (const method of ["GET", "PUT", "DELETE"]) {
        const response = await app.request(path, { method, body: method === "PUT" ? "{}" : undefined, headers: dataHeaders });
        await expectError(response, 400, "VALIDATION_ERROR");
      }
    }
    expect(await ports.data.list("")).toEqual([]);
  });

  it("DELETE answers 200 for an existing document, then 404", async () => {
    const { app } = testService();
    await put(app, "/data/u1/C-1/data.json", "{}");
    const first = await app.request("/data/u1/C-1/data.json", { method: "DELETE", headers: dataHeaders });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ success: true });
    await expectError(await app.request("/data/u1/C-1/data.json", { method: "DELETE", headers: dataHeaders }), 404, "NOT_FOUND");
  });

  it("a missing or wrong key answers 403 with the standard body, and nothing is written", async () => {
    const { app, ports } = testService();
    for (const headers of [{}, { "X-Custom-Auth-Key": "wrong" }, { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH }, { "X-Custom-Auth-Key": "" }] as Record<string, string>[]) {
      for (const method of ["GET", "PUT", "DELETE"]) {
        const response = await app.request("/data/u1/C-1/data.json", { method, headers, body: method === "PUT" ? "{}" : undefined });
        await expectError(response, 403, "FORBIDDEN");
      }
    }
    expect(await ports.data.list("")).toEqual([]);
  });

  it("with no R2_KEY_SECRET configured every request is refused", async () => {
    const { app } = testService({ R2_KEY_SECRET: "" });
    await expectError(await app.request("/data/u1/C-1/data.json", { headers: { "X-Custom-Auth-Key": "" } }), 403, "FORBIDDEN");
    await expectError(await app.request("/data/u1/C-1/data.json"), 403, "FORBIDDEN");
  });

  it("other methods answer 405 with Allow", async () => {
    const { app } = testService();
    for (const method of ["POST", "PATCH"]) {
      const response = await app.request("/data/u1/C-1/data.json", { method, headers: dataHeaders, body: "{}" });
      await expectError(response, 405, "VALIDATION_ERROR");
      expect(response.headers.get("allow")).toContain("PUT");
    }
  });

  it("a body over MAX_JSON_BYTES answers 413 and is not stored", async () => {
    const { app, ports } = testService({ MAX_JSON_BYTES: "1024" });
    const big = JSON.stringify({ pad: "x".repeat(2000) });
    await expectError(await put(app, "/data/u1/C-1/data.json", big), 413, "VALIDATION_ERROR");
    // Streamed without a length, too.
    const stream = new Blob([big]).stream();
    const response = await app.request("/data/u1/C-1/data.json", {
      method: "PUT",
      body: stream,
      headers: dataHeaders,
      duplex: "half",
    } as RequestInit);
    await expectError(response, 413, "VALIDATION_ERROR");
    expect(await ports.data.has("u1/C-1/data.json")).toBe(false);
  });

  it("answers a CORS preflight for the configured origin before authentication", async () => {
    const { app } = testService();
    const response = await app.request("/data/u1/C-1/data.json", {
      method: "OPTIONS",
      headers: { Origin: "https://lab.example", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "X-Custom-Auth-Key, Content-Type" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("https://lab.example");
    const allowed = (response.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    for (const header of ["content-type", "x-custom-auth-key", "authorization"]) expect(allowed).toContain(header);
    expect(response.headers.get("access-control-allow-methods")).toContain("PUT");

    const other = await app.request("/data/u1/C-1/data.json", {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "PUT" },
    });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();

    const real = await app.request("/data/u1/C-1/data.json", { headers: { ...dataHeaders, Origin: "https://lab.example" } });
    expect(real.headers.get("access-control-allow-origin")).toBe("https://lab.example");
  });
});
