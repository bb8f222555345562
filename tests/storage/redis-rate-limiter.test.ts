import { describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { createRedisRateLimiter } from "../../src/adapters/server/redis/redis-rate-limiter.ts";
import { redisForSuite } from "../helpers/redis-server.ts";
import { fixedClock } from "../helpers/service.ts";

const { client, prefix: fresh } = redisForSuite();

describe("Redis rate limiter", () => {
  it("allows exactly the limit of 50 concurrent hits", async () => {
    const limiter = createRedisRateLimiter(client(), { prefix: fresh("rl"), clock: fixedClock("2026-11-22T12:00:00Z") });
    const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.hit("ip:203.0.113.7:pdf", { limit: 20, windowSeconds: 60 })));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    expect(decisions.map((d) => d.remaining).sort((a, b) => a - b)).toEqual([...Array(31).fill(0), ...Array.from({ length: 19 }, (_, i) => i + 1)]);
    expect(decisions.every((d) => d.limit === 20 && d.resetSeconds === 60)).toBe(true);
  });

  it("starts a new count when the clock passes into the next window", async () => {
    const clock = fixedClock("2026-11-22T12:00:50Z");
    const prefix = fresh("rl");
    const redis = client();
    const limiter = createRedisRateLimiter(redis, { prefix, clock });
    const rule = { limit: 2, windowSeconds: 60 };
    expect((await limiter.hit("k", rule)).remaining).toBe(1);
    expect((await limiter.hit("k", rule)).remaining).toBe(0);
    expect(await limiter.hit("k", rule)).toEqual({ allowed: false, limit: 2, remaining: 0, resetSeconds: 10 });
    clock.set("2026-11-22T12:01:00Z");
    expect(await limiter.hit("k", rule)).toEqual({ allowed: true, limit: 2, remaining: 1, resetSeconds: 60 });

    // One counter per window, keyed by the window index, each expiring after its window.
    const index = Math.floor(Date.parse("2026-11-22T12:01:00Z") / 60_000);
    expect(await redis.get(`${prefix}k:${index}`)).toBe("1");
    const ttl = await redis.pttl(`${prefix}k:${index}`);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(65_000);
  });

  it("shares counts between two limiters on two connections", async () => {
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const prefix = fresh("rl");
    const a = createRedisRateLimiter(client(), { prefix, clock });
    const b = createRedisRateLimiter(client(), { prefix, clock });
    const rule = { limit: 10, windowSeconds: 60 };
    const decisions = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).hit("user:u1:image.upload", rule)),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect((await a.hit("user:u1:image.upload", rule)).allowed).toBe(false);
    expect((await b.hit("user:u2:image.upload", rule)).remaining).toBe(9);
  });

  it("fails (so the middleware can fail open) when Redis is unreachable", async () => {
    const dead = new Redis("redis://127.0.0.1:1/0", { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    dead.on("error", () => undefined);
    const limiter = createRedisRateLimiter(dead);
    await expect(limiter.hit("k", { limit: 1, windowSeconds: 60 })).rejects.toThrow();
    dead.disconnect();
  });
});
