import { describe, expect, it } from "vitest";
import { createMemoryRateLimiter } from "../../../src/core/rate-limit/limiter.ts";
import { fixedClock } from "../../helpers/service.ts";

const rule = { limit: 3, windowSeconds: 60 };

describe("in-memory rate limiter", () => {
  it("allows the limit per window, counting down, then refuses until the window resets", async () => {
    const clock = fixedClock("2026-11-22T12:00:15Z");
    const limiter = createMemoryRateLimiter({ clock });
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await limiter.hit("ip:a:pdf", rule));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
    expect(decisions.every((d) => d.limit === 3)).toBe(true);
    // Windows are aligned to the minute: 45 s are left at 12:00:15.
    expect(decisions[3]!.resetSeconds).toBe(45);

    clock.set("2026-11-22T12:00:59.400Z");
    expect(await limiter.hit("ip:a:pdf", rule)).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 1 });

    clock.set("2026-11-22T12:01:00Z");
    expect(await limiter.hit("ip:a:pdf", rule)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 60 });
  });

  it("counts keys apart", async () => {
    const limiter = createMemoryRateLimiter({ clock: fixedClock("2026-11-22T12:00:00Z") });
    for (let i = 0; i < 3; i++) await limiter.hit("ip:a:pdf", rule);
    expect((await limiter.hit("ip:a:pdf", rule)).allowed).toBe(false);
    expect((await limiter.hit("ip:b:pdf", rule)).allowed).toBe(true);
    expect((await limiter.hit("ip:a:captcha", rule)).allowed).toBe(true);
  });

  it("aligns windows of other lengths to floor(now / window)", async () => {
    const clock = fixedClock("2026-11-22T12:00:07Z");
    const limiter = createMemoryRateLimiter({ clock });
    const tenSeconds = { limit: 1, windowSeconds: 10 };
    expect(await limiter.hit("k", tenSeconds)).toMatchObject({ allowed: true, resetSeconds: 3 });
    expect(await limiter.hit("k", tenSeconds)).toMatchObject({ allowed: false, resetSeconds: 3 });
    clock.set("2026-11-22T12:00:10Z");
    expect(await limiter.hit("k", tenSeconds)).toMatchObject({ allowed: true, resetSeconds: 10 });
  });

  it("sweeps expired windows so memory stays bounded", async () => {
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const limiter = createMemoryRateLimiter({ clock, maxKeys: 100 });
    for (let i = 0; i < 100; i++) await limiter.hit(`ip:${i}:pdf`, rule);
    expect(limiter.size()).toBe(100);
    // The next minute, the old windows are gone: one sweep leaves only the live key.
    clock.set("2026-11-22T12:01:00Z");
    await limiter.hit("ip:new:pdf", rule);
    expect(limiter.size()).toBe(1);
  });

  it("never holds more than maxKeys, dropping the oldest live windows", async () => {
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const limiter = createMemoryRateLimiter({ clock, maxKeys: 50 });
    for (let i = 0; i < 3; i++) await limiter.hit("ip:first:pdf", rule);
    for (let i = 0; i < 1000; i++) {
      await limiter.hit(`ip:${i}:pdf`, rule);
      expect(limiter.size()).toBeLessThanOrEqual(50);
    }
    // The first client's window was dropped to make room, so it counts afresh.
    expect((await limiter.hit("ip:first:pdf", rule)).remaining).toBe(2);
    // The most recent clients keep their counts.
    expect((await limiter.hit("ip:999:pdf", rule)).remaining).toBe(1);
  });

  it("a flood of new keys does not let a refused client through again: its window is kept when the oldest are dropped", async () => {
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const limiter = createMemoryRateLimiter({ clock, maxKeys: 50 });
    for (let i = 0; i < 4; i++) await limiter.hit("ip:refused:pdf", rule);
    expect((await limiter.hit("ip:refused:pdf", rule)).allowed).toBe(false);
    // Another 10,000 clients (distinct IPv6 /64s cost an attacker nothing), each with one hit.
    for (let i = 0; i < 10_000; i++) await limiter.hit(`ip:${i}:pdf`, rule);
    expect(limiter.size()).toBeLessThanOrEqual(50);
    expect((await limiter.hit("ip:refused:pdf", rule)).allowed).toBe(false);
    // Its window still ends: the next one counts afresh.
    clock.set("2026-11-22T12:01:00Z");
    expect((await limiter.hit("ip:refused:pdf", rule)).allowed).toBe(true);
  });

  it("rejects a rule that is not a positive whole limit and window", async () => {
    const limiter = createMemoryRateLimiter();
    await expect(limiter.hit("k", { limit: 0, windowSeconds: 60 })).rejects.toThrow(RangeError);
    await expect(limiter.hit("k", { limit: 5, windowSeconds: 0.5 })).rejects.toThrow(/window/);
  });
});
