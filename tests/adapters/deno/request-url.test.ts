/**
 * Dot segments resolve as the URL standard says, so a path means on Deno what it means on
 * Node, Bun and workerd (which resolve them before the service sees the request). A `Request`
 * built in JavaScript has its URL resolved already: here its `url` is set as Deno's server
 * hands it over; the runtimes' own requests are in the conformance suite
 * (tests/conformance/suite.ts) and the workerd tests.
 */
import { describe, expect, it } from "vitest";
import { dotSegmentsResolved, withDotSegmentsResolved } from "../../../src/adapters/deno/request-url.ts";

/** A request whose `url` reads as `sent`, as `Deno.serve` gives it (a getter of its prototype there, so redefinable). */
function asSent(sent: string, init?: RequestInit): Request {
  return Object.defineProperty(new Request("http://h/placeholder", init), "url", { value: sent, configurable: true });
}

describe("dotSegmentsResolved", () => {
  it("resolves `.`, `..` and their percent-encoded forms in the path, keeping the origin and the query", () => {
    const cases: [string, string][] = [
      ["http://h/data/u1/%2e%2e/u2/data.json", "http://h/data/u2/data.json"],
      ["http://h/data/u1/../u2/data.json", "http://h/data/u2/data.json"],
      ["http://127.0.0.1:8000/data/u1/.%2E/u2/%2e/C-1/data.json?x=%2e%2e", "http://127.0.0.1:8000/data/u2/C-1/data.json?x=%2e%2e"],
      ["http://h/data/%2e%2e/%2e%2e/%2e%2e/health", "http://h/health"],
      ["http://h/data/u1/case%201/..", "http://h/data/u1/"],
    ];
    for (const [sent, resolved] of cases) expect(dotSegmentsResolved(sent), sent).toBe(resolved);
  });

  it("leaves a URL as it is when its path has no dot segment, holds a backslash, or its origin does not parse as written", () => {
    const kept = [
      "http://h/data/u1/C-1/data.json",
      "http://h/data/u1/case%201/.hidden.json",
      "http://h/data/u1%2F..%2Fx.json",
      "http://h/a/..b/c.",
      "http://h/data/u1/C-1/data.json?x=/../y",
      "http://h/data/u1\\..\\u2/data.json",
      "http://h/data/u1/../a\\b/data.json",
      "http:///data/u1/%2e%2e/u2/data.json",
      "http://a b/data/u1/%2e%2e/u2/data.json",
      "http://a:99999/data/u1/%2e%2e/u2/data.json",
    ];
    for (const url of kept) expect(dotSegmentsResolved(url), url).toBe(url);
  });
});

describe("withDotSegmentsResolved", () => {
  it("moves the method, the headers and the body to the resolved request", async () => {
    const sent = asSent("http://h/data/u1/%2e%2e/u2/data.json", { method: "PUT", headers: { "X-Custom-Auth-Key": "k" }, body: "[1]" });
    const resolved = withDotSegmentsResolved(sent);
    expect([resolved.url, resolved.method, resolved.headers.get("X-Custom-Auth-Key")]).toEqual(["http://h/data/u2/data.json", "PUT", "k"]);
    expect(await resolved.text()).toBe("[1]");
  });

  it("keeps a method as sent in lower case, with its body (a new Request upper-cased `get` and then refused the body: a 500)", async () => {
    // Deno.serve hands `get` over as written; a Request built in JavaScript upper-cases it.
    const sent = Object.defineProperty(asSent("http://h/user/../keys/R2_KEY_SECRET", { method: "POST", body: "x" }), "method", { value: "get" });
    const resolved = withDotSegmentsResolved(sent);
    expect([resolved.url, resolved.method]).toEqual(["http://h/keys/R2_KEY_SECRET", "get"]);
    expect(await resolved.text()).toBe("x");
  });

  it("returns the request itself when there is nothing to resolve", () => {
    const sent = asSent("http://h/data/u1/C-1/data.json");
    expect(withDotSegmentsResolved(sent)).toBe(sent);
  });
});
