// A worker app generates its OpenAPI document only once the generators are loaded: apart, so a
// Cloudflare worker bundled alone (which serves no document) carries none of them; the
// package's entry and createService load them. Runs in a module graph of its own (vitest
// isolates test files), where nothing loaded them yet.
import { describe, expect, it } from "vitest";
import { createDataWorker } from "../../../src/core/workers/data.ts";
import { loadOpenApiGenerators } from "../../../src/core/http/openapi-document.ts";
import { parseConfig } from "../../../src/core/config/mod.ts";
import { createMemoryPorts } from "../../../src/core/service/memory-ports.ts";

describe("OpenAPI document generators", () => {
  it("a worker made alone says what to load until loadOpenApiGenerators() ran, then documents its routes", () => {
    const ports = createMemoryPorts();
    const worker = createDataWorker({ blobs: ports.data, audit: ports.audit, clock: ports.clock, config: parseConfig({ R2_KEY_SECRET: "k" }), users: ports.users });
    const ask = () => worker.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "data", version: "1" } });
    expect(ask).toThrow(/loadOpenApiGenerators\(\)/);
    loadOpenApiGenerators();
    expect(Object.keys(ask().paths ?? {})).toContain("/audit/verify");
  });
});
