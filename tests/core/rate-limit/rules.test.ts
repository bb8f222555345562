import { describe, expect, it } from "vitest";
import { DEFAULT_RATE_LIMITS, parseRateLimits, RATE_LIMIT_ROUTES } from "../../../src/core/rate-limit/rules.ts";

describe("RATE_LIMITS", () => {
  it("is on with the defaults when unset or blank", () => {
    expect(parseRateLimits(undefined)).toBe(DEFAULT_RATE_LIMITS);
    expect(parseRateLimits("  ")).toBe(DEFAULT_RATE_LIMITS);
    expect(Object.keys(DEFAULT_RATE_LIMITS).sort()).toEqual([...RATE_LIMIT_ROUTES].sort());
  });

  it("keeps uploads, PDF renders and CAPTCHA checks stricter than reads", () => {
    const d = DEFAULT_RATE_LIMITS;
    for (const strict of [d["image.upload"], d.pdf, d.captcha]) {
      for (const read of [d["user.read"], d["data.read"], d["audit.read"], d["image.serve"]]) {
        expect(strict.limit / strict.windowSeconds).toBeLessThan(read.limit / read.windowSeconds);
      }
    }
  });

  it("is off when set to off", () => {
    expect(parseRateLimits("off")).toBe("off");
    expect(parseRateLimits(" OFF ")).toBe("off");
  });

  it("overrides the named routes and keeps the defaults of the rest", () => {
    const limits = parseRateLimits("image.upload=10/60s, pdf=5/5m,captcha=3/1h,keys=7/30");
    if (limits === "off") throw new Error("unexpected off");
    expect(limits["image.upload"]).toEqual({ limit: 10, windowSeconds: 60 });
    expect(limits.pdf).toEqual({ limit: 5, windowSeconds: 300 });
    expect(limits.captcha).toEqual({ limit: 3, windowSeconds: 3600 });
    expect(limits.keys).toEqual({ limit: 7, windowSeconds: 30 });
    expect(limits["data.read"]).toEqual(DEFAULT_RATE_LIMITS["data.read"]);
    expect(limits["image.sign"]).toEqual(DEFAULT_RATE_LIMITS["image.sign"]);
  });

  it("applies a worker entry to all its routes, and a route entry wins whatever the order", () => {
    for (const text of ["image=100/60s,image.upload=5/60s", "image.upload=5/60s,image=100/60s"]) {
      const limits = parseRateLimits(text);
      if (limits === "off") throw new Error("unexpected off");
      expect(limits["image.upload"]).toEqual({ limit: 5, windowSeconds: 60 });
      for (const route of ["image.sign", "image.serve", "image.delete"] as const) {
        expect(limits[route]).toEqual({ limit: 100, windowSeconds: 60 });
      }
      expect(limits["data.write"]).toEqual(DEFAULT_RATE_LIMITS["data.write"]);
    }
    const data = parseRateLimits("data=50/10s");
    if (data === "off") throw new Error("unexpected off");
    expect([data["data.read"], data["data.write"]]).toEqual([
      { limit: 50, windowSeconds: 10 },
      { limit: 50, windowSeconds: 10 },
    ]);
  });

  it("refuses bad entries with a message naming the entry and the syntax", () => {
    const cases: [string, RegExp][] = [
      ["image.uplod=5/60s", /bad entry "image\.uplod=5\/60s": unknown route or worker "image\.uplod"/],
      ["video=5/60s", /unknown route or worker "video"/],
      ["pdf=5", /bad entry "pdf=5": not of the form name=N\/W/],
      ["pdf=five/60s", /bad entry "pdf=five\/60s"/],
      ["pdf=5/60d", /bad entry "pdf=5\/60d"/],
      ["pdf=0/60s", /bad entry "pdf=0\/60s": the limit must be/],
      ["pdf=5/0s", /bad entry "pdf=5\/0s": the window must be/],
      ["pdf=5/25h", /the window must be between 1 second and 24 hours/],
      ["pdf=-1/60s", /bad entry "pdf=-1\/60s"/],
      ["pdf=5/60s,pdf=6/60s", /bad entry "pdf=6\/60s": "pdf" is given twice/],
      ["off,pdf=5/60s", /bad entry "off"/],
    ];
    for (const [text, message] of cases) {
      expect(() => parseRateLimits(text), text).toThrow(message);
      expect(() => parseRateLimits(text), text).toThrow(/expected "off" or a comma list of name=N\/W.*image\.upload=30\/60s/);
    }
  });

  it("ignores empty entries from a trailing comma", () => {
    const limits = parseRateLimits("pdf=5/60s,");
    if (limits === "off") throw new Error("unexpected off");
    expect(limits.pdf).toEqual({ limit: 5, windowSeconds: 60 });
  });
});
