/**
 * The service's routes fit Hono's regular-expression router: one route it cannot order (a
 * parameter of any characters beside a static route) puts every request of the service on
 * the trie router, several times slower to match. A key of several segments still reaches
 * its handler, and the mount itself is still refused as before.
 */
import { describe, expect, it } from "vitest";
import { dataHeaders, KEYS, testService } from "../../helpers/service.ts";

describe("routing", () => {
  it("every route of the service is matched by Hono's RegExpRouter", async () => {
    const { app } = testService({ API_DOCS: "on" });
    expect((await app.request("/health")).status).toBe(200);
    expect(app.router.name).toBe("SmartRouter + RegExpRouter");
  });

  it("a method the read-only paths do not take (/health, /openapi.json, the docs page) is a 405 with Allow, not a 404; they have no CORS, so OPTIONS is one of them", async () => {
    const { app } = testService({ API_DOCS: "on" });
    for (const path of ["/health", "/openapi.json", "/docs", "/docs/assets/swagger-ui-dist/swagger-ui.css"]) {
      expect((await app.request(path)).status, path).toBe(200);
      for (const method of ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
        const refused = await app.request(path, { method });
        expect(refused.status, `${method} ${path}`).toBe(405);
        expect(refused.headers.get("Allow"), `${method} ${path}`).toBe("GET");
        expect(await refused.json()).toMatchObject({ code: "VALIDATION_ERROR", details: { allowed: ["GET"] } });
      }
    }
    expect((await app.request("/health", { method: "HEAD" })).status).toBe(200);
    expect((await testService({ API_DOCS: "off" }).app.request("/docs", { method: "POST" })).status).toBe(404);
  });

  it("a HEAD answer carries the Content-Length its GET sends (without one, Bun and Deno wrote Content-Length: 0)", async () => {
    const { app } = testService({ API_DOCS: "on" });
    expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: dataHeaders, body: '{"caseNumber":"C-1"}' })).status).toBe(200);
    const keys = { "X-Custom-Auth-Key": KEYS.KEYS_AUTH };
    for (const [path, headers] of [["/health", {}], ["/openapi.json", {}], ["/docs", {}], ["/data/u1/C-1/data.json", dataHeaders], ["/data/u1/none/data.json", dataHeaders], ["/keys/USER_DB_AUTH", keys], ["/keys/NOPE", keys], ["/pdf/", {}]] as const) {
      const get = await app.request(path, { headers });
      const bytes = (await get.arrayBuffer()).byteLength;
      const head = await app.request(path, { method: "HEAD", headers });
      expect(head.status, path).toBe(get.status);
      expect(head.headers.get("content-length"), path).toBe(String(bytes));
      expect((await head.arrayBuffer()).byteLength, path).toBe(0);
    }
  });

  it("keys of several segments and the bare mounts answer as the routes say", async () => {
    const { app } = testService();
    const put = await app.request("/data/u1/case%201/f1/data.json", { method: "PUT", headers: dataHeaders, body: "[1]" });
    expect(put.status).toBe(200);
    expect(await (await app.request("/data/u1/case%201/f1/data.json", { headers: dataHeaders })).text()).toBe("[1]");
    expect((await app.request("/data/audit/?userId=u1", { headers: dataHeaders })).status).toBe(200);
    for (const method of ["GET", "PUT", "DELETE"]) {
      const bare = await app.request("/data", { method, headers: dataHeaders, ...(method === "PUT" ? { body: "[]" } : {}) });
      expect(bare.status).toBe(400);
      expect((await bare.json()).message).toBe("Storage key is missing");
    }
    const unsigned = await app.request("/image", { headers: { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` } });
    expect(unsigned.status).toBe(400);
    expect((await unsigned.json()).message).toContain("The delivery URL is missing");
  });
});
