/**
 * The URL Bun's server hands over when the Host is missing or not a host is the path alone:
 * `withReadableUrl` makes it what Node's server makes of it. Here a request's `url` is set as
 * Bun hands it over; Bun's own requests are in the conformance suite (tests/conformance/suite.ts).
 */
import { describe, expect, it } from "vitest";
import { withReadableUrl } from "../../../src/adapters/bun/request-url.ts";
import { hostInUrl, serverAuthority } from "../../../src/adapters/server/request-url.ts";

const ORIGIN = "http://127.0.0.1:8787";

/** A request whose `url` reads as `sent`, as `Bun.serve` gives it. */
function asSent(sent: string, init?: RequestInit): Request {
  return Object.defineProperty(new Request("http://h/placeholder", init), "url", { value: sent });
}

async function refusal(answer: Request | Response): Promise<unknown> {
  expect(answer).toBeInstanceOf(Response);
  const response = answer as Response;
  expect(response.status).toBe(400);
  expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  return response.json();
}

describe("withReadableUrl", () => {
  it("passes a request with a full URL that parses as it is", () => {
    const request = asSent("http://127.0.0.1:8787/data/u1/C-1/data.json?x=1");
    expect(withReadableUrl(request, ORIGIN)).toBe(request);
  });

  it("puts a path alone under the server's origin when the request names no Host, with its method, headers and body", async () => {
    const put = asSent("/data/u1/C-1/data.json?x=1", { method: "PUT", headers: { "X-Custom-Auth-Key": "k" }, body: '{"a":1}' });
    const readable = withReadableUrl(put, ORIGIN) as Request;
    expect(readable).toBeInstanceOf(Request);
    expect(readable.url).toBe(`${ORIGIN}/data/u1/C-1/data.json?x=1`);
    expect(readable.method).toBe("PUT");
    expect(readable.headers.get("x-custom-auth-key")).toBe("k");
    expect(await readable.text()).toBe('{"a":1}');
    const emptyHost = withReadableUrl(asSent("/health", { headers: { Host: "" } }), ORIGIN) as Request;
    expect(emptyHost.url).toBe(`${ORIGIN}/health`);
  });

  it("refuses with 400 in the standard body a path alone whose request names a Host that is not one, and a full URL that does not parse", async () => {
    for (const request of [asSent("/health", { headers: { Host: "a b" } }), asSent("http://[::1/data/u1/x.json"), asSent("http://a:99999/health")]) {
      expect(await refusal(withReadableUrl(request, ORIGIN))).toEqual({
        error: "Bad Request",
        code: "VALIDATION_ERROR",
        message: "The request cannot be read: Invalid URL",
        details: {},
      });
    }
  });

  it("refuses a Host holding a path, a query, a user or a backslash, even when the URL it made parses (Deno's `http://h/data/u1/x.json` from `Host: h/data/u1`)", async () => {
    for (const host of ["h/data/u1", "h?x", "h#x", "u@h", "h\\x"]) {
      const request = asSent("http://h/data/u1/x.json", { headers: { Host: host } });
      expect(await refusal(withReadableUrl(request, ORIGIN)), host).toMatchObject({ message: "The request cannot be read: Invalid host header" });
    }
    const fine = asSent("http://EXAMPLE.com:8787/health", { headers: { Host: "EXAMPLE.com:8787" } });
    expect(withReadableUrl(fine, ORIGIN)).toBe(fine);
  });

  it("addresses a request without a Host to the listening host and port, bracketed as a URL writes them", () => {
    expect(serverAuthority("127.0.0.1", 8787)).toBe("127.0.0.1:8787");
    expect(serverAuthority("::", 8787)).toBe("[::]:8787");
    expect(serverAuthority("0.0.0.0", 1)).toBe("0.0.0.0:1");
    expect(hostInUrl("fe80::1%eth0")).toBe("[fe80::1%25eth0]");
    // A URL holds no IPv6 zone: localhost instead of a URL that does not parse.
    expect(serverAuthority("fe80::1%eth0", 8787)).toBe("localhost:8787");
  });
});
