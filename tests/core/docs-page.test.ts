/**
 * The API reference page at /docs: Swagger UI over the service's own document, its script and
 * stylesheet served by the service (the bytes of the installed swagger-ui-dist, so the
 * generated src/core/http/docs-assets.ts is current), nothing loaded from elsewhere, on by
 * default and off with API_DOCS=off, and right under a parent's prefix.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { testService } from "../helpers/service.ts";

const dist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

describe("GET /docs", () => {
  it("is Swagger UI over /openapi.json, its assets on this origin, its one inline script allowed by hash", async () => {
    const { app } = testService();
    const response = await app.request("/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain(`url: '/openapi.json'`);
    expect(html).toContain(`<script src="/docs/assets/swagger-ui-dist/swagger-ui-bundle.js"`);
    expect(html).toContain(`<link rel="stylesheet" href="/docs/assets/swagger-ui-dist/swagger-ui.css"`);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const csp = response.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toMatch(/^default-src 'none'/);
    expect(csp).toContain("connect-src 'self'");
    const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]!);
    expect(inline).toHaveLength(1);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(inline[0]!)));
    expect(csp).toContain(`script-src 'self' 'sha256-${btoa(String.fromCharCode(...digest))}'`);
    expect(response.headers.get("X-Frame-Options")).toBe("DENY");
  });

  it("serves swagger-ui-dist's script and stylesheet byte for byte (the generated asset module is current)", async () => {
    const { app } = testService();
    for (const [name, type] of [["swagger-ui-bundle.js", "text/javascript"], ["swagger-ui.css", "text/css"]] as const) {
      const response = await app.request(`/docs/assets/swagger-ui-dist/${name}`);
      expect(response.status, name).toBe(200);
      expect(response.headers.get("Content-Type")).toContain(type);
      const served = new Uint8Array(await response.arrayBuffer());
      const installed = new Uint8Array(readFileSync(join(dist, name)));
      expect(served.length, name).toBe(installed.length);
      expect(served.every((byte, i) => byte === installed[i]), `${name} differs from swagger-ui-dist's: run node scripts/docs-assets.mjs`).toBe(true);
    }
    expect((await app.request("/docs/assets/swagger-ui-dist/other.js")).status).toBe(404);
    expect((await app.request("/docs/assets/swagger-ui-dist/..%2Fpackage.json")).status).toBe(404);
  });

  it("is off with API_DOCS=off: /docs and its assets are 404", async () => {
    const { app } = testService({ API_DOCS: "off" });
    expect((await app.request("/docs")).status).toBe(404);
    expect((await app.request("/docs/assets/swagger-ui-dist/swagger-ui.css")).status).toBe(404);
  });

  it("mounted under a prefix, points at the prefixed document and assets", async () => {
    const { app } = testService();
    const parent = new Hono();
    parent.route("/forensic", app);
    const html = await (await parent.request("/forensic/docs")).text();
    expect(html).toContain(`url: '/forensic/openapi.json'`);
    expect(html).toContain(`src="/forensic/docs/assets/swagger-ui-dist/swagger-ui-bundle.js"`);
    expect((await parent.request("/forensic/docs/assets/swagger-ui-dist/swagger-ui.css")).status).toBe(200);
  });
});
