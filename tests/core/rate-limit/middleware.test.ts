import { afterEach, describe, expect, it, vi } from "vitest";
import { createWorkerApp } from "../../../src/core/http/worker-app.ts";
import { clientNetwork, rateLimit, type RateLimitOptions } from "../../../src/core/http/rate-limit.ts";
import { createMemoryRateLimiter, type RateLimiter } from "../../../src/core/rate-limit/limiter.ts";
import { DEFAULT_RATE_LIMITS, parseRateLimits } from "../../../src/core/rate-limit/rules.ts";
import { fixedClock } from "../../helpers/service.ts";

const IP = "203.0.113.7";
const OTHER_IP = "198.51.100.9";

function appWith(options: Partial<RateLimitOptions> & { limiter: RateLimiter }) {
  const app = createWorkerApp({ allowedOrigin: undefined });
  const limits = options.limits ?? parseRateLimits("image.upload=3/60s");
  app.post("/upload", rateLimit({ route: "image.upload", by: "ip", ...options, limits }), (c) => c.json({ ok: true }));
  return app;
}

const upload = (app: ReturnType<typeof appWith>, ip: string | null = IP, headers: Record<string, string> = {}) =>
  app.request("/upload", { method: "POST", headers }, ip === null ? {} : { clientIp: ip });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("rateLimit middleware", () => {
  it("allows N with a decreasing X-RateLimit-Remaining, then answers 429 with the standard body", async () => {
    const clock = fixedClock("2026-11-22T12:00:20Z");
    const app = appWith({ limiter: createMemoryRateLimiter({ clock }) });
    for (const remaining of [2, 1, 0]) {
      const response = await upload(app);
      expect(response.status).toBe(200);
      expect(response.headers.get("X-RateLimit-Limit")).toBe("3");
      expect(response.headers.get("X-RateLimit-Remaining")).toBe(String(remaining));
      expect(response.headers.get("X-RateLimit-Reset")).toBe("40");
    }
    const refused = await upload(app);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      error: "Too Many Requests",
      code: "FORBIDDEN",
      message: "Too many requests for image.upload; retry in 40 s",
      details: { route: "image.upload", retryAfterSeconds: 40, scope: "ip" },
    });
    expect(refused.headers.get("Retry-After")).toBe("40");
    expect(refused.headers.get("X-RateLimit-Limit")).toBe("3");
    expect(refused.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(refused.headers.get("X-RateLimit-Reset")).toBe("40");

    // Another client IP has its own count.
    const other = await upload(app, OTHER_IP);
    expect(other.status).toBe(200);
    expect(other.headers.get("X-RateLimit-Remaining")).toBe("2");

    // Past the window, the first IP is allowed again.
    clock.set("2026-11-22T12:01:00Z");
    const again = await upload(app);
    expect(again.status).toBe(200);
    expect(again.headers.get("X-RateLimit-Remaining")).toBe("2");
    expect(again.headers.get("X-RateLimit-Reset")).toBe("60");
  });

  it("counts per user across IPs when by user, and not at all without a user", async () => {
    const limiter = createMemoryRateLimiter({ clock: fixedClock("2026-11-22T12:00:00Z") });
    const app = appWith({ limiter, by: "user", user: (c) => c.req.header("X-User") });
    const statuses: number[] = [];
    for (const ip of [IP, OTHER_IP, "192.0.2.1", "192.0.2.2"]) statuses.push((await upload(app, ip, { "X-User": "u1" })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await upload(app, "192.0.2.3", { "X-User": "u1" });
    expect(((await refused.json()) as { details: { scope: string } }).details.scope).toBe("user");
    expect((await upload(app, IP, { "X-User": "u2" })).status).toBe(200);
    // No user known: not counted, no headers.
    for (let i = 0; i < 5; i++) {
      const anonymous = await upload(app, IP);
      expect(anonymous.status).toBe(200);
      expect(anonymous.headers.get("X-RateLimit-Remaining")).toBeNull();
    }
  });

  it("does not count a request whose client IP is unknown", async () => {
    const app = appWith({ limiter: createMemoryRateLimiter({ clock: fixedClock("2026-11-22T12:00:00Z") }) });
    for (let i = 0; i < 5; i++) expect((await upload(app, null)).status).toBe(200);
  });

  it("limits nothing when off, and nothing on a route the function leaves out", async () => {
    const limiter = createMemoryRateLimiter({ clock: fixedClock("2026-11-22T12:00:00Z") });
    const off = appWith({ limiter, limits: "off" });
    for (let i = 0; i < 5; i++) expect((await upload(off)).headers.get("X-RateLimit-Limit")).toBeNull();

    const app = createWorkerApp({ allowedOrigin: undefined });
    app.use(
      "*",
      rateLimit({ limiter, limits: parseRateLimits("pdf=1/60s"), by: "ip", route: (c) => (c.req.path === "/pdf" ? "pdf" : undefined) }),
    );
    app.get("/pdf", (c) => c.text("pdf"));
    app.get("/free", (c) => c.text("free"));
    const ip = { clientIp: IP };
    expect((await app.request("/pdf", {}, ip)).status).toBe(200);
    expect((await app.request("/pdf", {}, ip)).status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await app.request("/free", {}, ip)).status).toBe(200);
  });

  it("reports the stricter of an IP and a user limit", async () => {
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const limiter = createMemoryRateLimiter({ clock });
    const app = createWorkerApp({ allowedOrigin: undefined });
    const user = (c: Parameters<NonNullable<RateLimitOptions["user"]>>[0]) => c.req.header("X-User");
    const limits = parseRateLimits("data.write=5/60s");
    app.put(
      "/case",
      rateLimit({ limiter, limits, route: "data.write", by: "ip" }),
      rateLimit({ limiter, limits, route: "data.write", by: "user", user }),
      (c) => c.json({ ok: true }),
    );
    const put = (ip: string, who: string) => app.request("/case", { method: "PUT", headers: { "X-User": who } }, { clientIp: ip });
    // u1 spends 3 from IP (ip 2 left, user 2 left), then u2 spends 1 from the same IP.
    for (let i = 0; i < 3; i++) await put(IP, "u1");
    let response = await put(IP, "u2");
    // IP: 4 used (1 left) is stricter than u2's 4 left.
    expect(response.headers.get("X-RateLimit-Remaining")).toBe("1");
    // u1 from another IP: user has 1 left after this (5-4), the fresh IP has 4 left.
    response = await put(OTHER_IP, "u1");
    expect(response.headers.get("X-RateLimit-Remaining")).toBe("1");
    response = await put(OTHER_IP, "u1");
    expect(response.headers.get("X-RateLimit-Remaining")).toBe("0");
    // The user limit refuses next, though the IP still has room; the 429 says so.
    response = await put(OTHER_IP, "u1");
    expect(response.status).toBe(429);
    expect(response.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(((await response.json()) as { details: { scope: string } }).details.scope).toBe("user");
  });

  it("lets requests through when the limiter fails, logging one line without the client's IP, then one per 10 s with the count since", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const now = vi.spyOn(Date, "now").mockReturnValue(Date.parse("2026-11-25T12:00:00Z"));
    try {
      const broken: RateLimiter = { hit: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6379")) };
      const app = appWith({ limiter: broken });
      for (let i = 0; i < 5; i++) {
        const response = await upload(app);
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ ok: true });
      }
      expect(warn).toHaveBeenCalledTimes(1);
      const line = String(warn.mock.calls[0]![0]);
      expect(line).toContain("image.upload");
      expect(line).toContain("ECONNREFUSED");
      expect(line).not.toContain(IP);
      now.mockReturnValue(Date.parse("2026-11-25T12:00:10Z"));
      expect((await upload(app)).status).toBe(200);
      expect(warn).toHaveBeenCalledTimes(2);
      expect(String(warn.mock.calls[1]![0])).toContain("(4 more let through since the last line)");
    } finally {
      now.mockRestore();
      warn.mockRestore();
    }
  });

  it("adds its headers to a response whose headers are immutable", async () => {
    const app = createWorkerApp({ allowedOrigin: undefined });
    const limiter = createMemoryRateLimiter({ clock: fixedClock("2026-11-22T12:00:00Z") });
    app.get("/go", rateLimit({ limiter, limits: parseRateLimits(undefined), route: "image.serve", by: "ip" }), () =>
      Response.redirect("https://lab.example/elsewhere", 302),
    );
    const response = await app.request("/go", {}, { clientIp: IP });
    expect(response.status).toBe(302);
    expect(response.headers.get("Location")).toBe("https://lab.example/elsewhere");
    expect(response.headers.get("X-RateLimit-Remaining")).toBe(String(DEFAULT_RATE_LIMITS["image.serve"].limit - 1));
  });

  it("requires a user function for by user", () => {
    expect(() => rateLimit({ limiter: createMemoryRateLimiter(), limits: "off", route: "pdf", by: "user" })).toThrow(/user function/);
  });
});

describe("clientNetwork: what one IP limit counts", () => {
  it("IPv4 as is, IPv6 by its /64, IPv4-mapped IPv6 as IPv4", () => {
    expect(clientNetwork("203.0.113.7")).toBe("203.0.113.7");
    expect(clientNetwork("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(clientNetwork("2001:db8:1:2::9")).toBe("2001:db8:1:2::/64");
    expect(clientNetwork("2001:DB8:0001:0002:ffff::1")).toBe("2001:db8:1:2::/64");
    expect(clientNetwork("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientNetwork("::1")).toBe("0:0:0:0::/64");
    expect(clientNetwork("::ffff:198.51.100.4")).toBe("198.51.100.4");
    expect(clientNetwork("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(clientNetwork(undefined)).toBeUndefined();
  });
});
