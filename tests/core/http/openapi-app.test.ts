// The OpenAPIHono of src/core/http/openapi-app.ts behaves as @hono/zod-openapi's: routes
// validate, describe themselves, merge into the app they are mounted in, and zod schemas take
// OpenAPI metadata through `.openapi()`, without that package being imported.
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createRoute, OpenAPIHono } from "../../../src/core/http/openapi-app.ts";
import { loadOpenApiGenerators } from "../../../src/core/http/openapi-document.ts";

// As the package's entry and createService do.
loadOpenApiGenerators();

const Item = z.object({ name: z.string().min(1).openapi({ example: "bullet" }) }).openapi("Item");

const putItem = createRoute({
  method: "put",
  path: "/items/{id}",
  request: {
    params: z.object({ id: z.string().regex(/^\d+$/) }),
    body: { content: { "application/json": { schema: Item } }, required: true },
  },
  responses: { 200: { description: "Stored", content: { "application/json": { schema: Item } } } },
});

function itemsApp() {
  const app = new OpenAPIHono();
  return app.openapi(putItem, (c) => c.json(c.req.valid("json"), 200));
}

describe("OpenAPIHono without @hono/zod-openapi at run time", () => {
  it("validates params and JSON bodies, and refuses another media type with 415", async () => {
    const app = itemsApp();
    const put = (path: string, body: string, type = "application/json") => app.request(path, { method: "PUT", body, headers: { "Content-Type": type } });
    const ok = await put("/items/7", JSON.stringify({ name: "bullet" }));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ name: "bullet" });
    expect((await put("/items/x", JSON.stringify({ name: "bullet" }))).status).toBe(400);
    expect((await put("/items/7", JSON.stringify({ name: "" }))).status).toBe(400);
    expect((await put("/items/7", "name=bullet", "text/plain")).status).toBe(415);
  });

  it("a route's own hook, else the app's default hook, answers a failed validation", async () => {
    const app = new OpenAPIHono({ defaultHook: (result, c) => (result.success ? undefined : c.json({ refused: true }, 422)) });
    app.openapi(putItem, (c) => c.json(c.req.valid("json"), 200));
    const response = await app.request("/items/7", { method: "PUT", body: "{}", headers: { "Content-Type": "application/json" } });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ refused: true });
  });

  it("describes its routes with the schemas' .openapi() metadata, under the mount point once mounted", () => {
    const parent = new OpenAPIHono();
    parent.route("/shop", itemsApp());
    const document = parent.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } });
    expect(Object.keys(document.paths ?? {})).toEqual(["/shop/items/{id}"]);
    expect(document.components?.schemas?.["Item"]).toMatchObject({ properties: { name: { type: "string", example: "bullet" } } });
    const operation = document.paths?.["/shop/items/{id}"]?.put;
    expect(operation?.parameters).toEqual([expect.objectContaining({ name: "id", in: "path", required: true })]);
  });

  it("serves the document with doc31", async () => {
    const app = itemsApp();
    app.doc31("/openapi.json", { openapi: "3.1.0", info: { title: "t", version: "1" } });
    const response = await app.request("/openapi.json");
    expect(response.status).toBe(200);
    expect(((await response.json()) as { paths: Record<string, unknown> }).paths).toHaveProperty("/items/{id}");
  });
});
