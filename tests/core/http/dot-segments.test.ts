/**
 * Dot segments resolve as the URL standard says, so a path means on Deno and in a worker
 * what it means on Node and Bun (whose servers resolve them first). A `Request` built in
 * JavaScript has its URL resolved already: the runtimes' own requests are in the conformance
 * suite (tests/conformance/suite.ts) and the workerd tests.
 */
import { describe, expect, it } from "vitest";
import { dotSegmentsResolved } from "../../../src/core/http/dot-segments.ts";

describe("dotSegmentsResolved", () => {
  it("resolves `.`, `..` and their percent-encoded forms, keeping the query", () => {
    const cases: [string, string][] = [
      ["http://h/data/u1/%2e%2e/u2/data.json", "http://h/data/u2/data.json"],
      ["http://h/data/u1/../u2/data.json", "http://h/data/u2/data.json"],
      ["http://h/data/u1/.%2E/u2/%2e/C-1/data.json?x=%2e%2e", "http://h/data/u2/C-1/data.json?x=%2e%2e"],
      ["http://h/data/%2e%2e/%2e%2e/%2e%2e/health", "http://h/health"],
      ["http://h/data/u1\\..\\u2/data.json", "http://h/data/u2/data.json"],
    ];
    for (const [sent, resolved] of cases) expect(dotSegmentsResolved(sent), sent).toBe(resolved);
  });

  it("leaves a URL without a dot segment as it is", () => {
    for (const url of ["http://h/data/u1/C-1/data.json", "http://h/data/u1/case%201/.hidden.json", "http://h/data/u1%2F..%2Fx.json", "http://h/a/..b/c."]) {
      expect(dotSegmentsResolved(url), url).toBe(url);
    }
  });
});
