// A worker app generates its OpenAPI document only once the generators are loaded: apart, so a
// Cloudflare worker bundled alone (which serves no document) carries none of them; the
// package's entry and createService load them. The modules are imported afresh (test files
// share one module graph per vitest worker), so nothing loaded them yet.
import { describe, expect, it, vi } from "vitest";

describe("OpenAPI document generators", () => {
  it("a worker made alone says what to load until loadOpenApiGenerators() ran, then documents its routes", async () => {
    vi.resetModules();
    const { createDataWorker } = await import("../../../src/core/workers/data.ts");
    const { loadOpenApiGenerators } = await import("../../../src/core/http/openapi-document.ts");
    const { parseConfig } = await import("../../../src/core/config/mod.ts");
    const { createMemoryPorts } = await import("../../../src/core/service/memory-ports.ts");
    const ports = createMemoryPorts();
    const worker = createDataWorker({ blobs: ports.data, audit: ports.audit, clock: ports.clock, config: parseConfig({ R2_KEY_SECRET: "k" }), users: ports.users });
    const ask = () => worker.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "data", version: "1" } });
    expect(ask).toThrow(/loadOpenApiGenerators\(\)/);
    loadOpenApiGenerators();
    expect(Object.keys(ask().paths ?? {})).toContain("/audit/verify");
  });
});
