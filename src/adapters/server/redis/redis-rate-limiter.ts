/**
 * @module
 * A `RateLimiter` on Redis, exact across any number of server processes: each hit is one
 * `MULTI` of `INCR` and `PEXPIRE` on `${prefix}${key}:${windowIndex}`, so concurrent hits
 * never lose a count, and a window's counter disappears on its own once the window is over.
 * The window index comes from the `Clock` port (not Redis's time), so tests control it.
 *
 * @example
 * ```ts
 * const limiter = createRedisRateLimiter(new Redis(url), { prefix: "fa:rl:" });
 * await limiter.hit("ip:203.0.113.7:pdf", { limit: 20, windowSeconds: 60 });
 * ```
 */
import type { Redis } from "ioredis";
import { type Clock, systemClock } from "../../../core/ports.ts";
import {
  assertRateRule,
  decide,
  fixedWindow,
  type RateDecision,
  type RateLimiter,
  type RateRule,
} from "../../../core/rate-limit/limiter.ts";

/** Options of {@link createRedisRateLimiter}. */
export interface RedisRateLimiterOptions {
  /** Prefix of every counter key (default `fa:rl:`). */
  prefix?: string;
  /** The time source that places hits in windows (default: the system clock). */
  clock?: Clock;
}

// Counters outlive their window by this much, so a clock a little ahead of Redis's never
// sees a counter expire while its window is still open.
const EXPIRY_SLACK_MS = 5_000;

/** A limiter whose counts live in Redis, shared by every process using the same server and prefix. */
export function createRedisRateLimiter(redis: Redis, options: RedisRateLimiterOptions = {}): RateLimiter {
  const prefix = options.prefix ?? "fa:rl:";
  const clock = options.clock ?? systemClock;
  return {
    async hit(key: string, rule: RateRule): Promise<RateDecision> {
      assertRateRule(rule);
      const nowMs = clock.now().getTime();
      const window = fixedWindow(nowMs, rule.windowSeconds);
      const counter = `${prefix}${key}:${window.index}`;
      const results = await redis
        .multi()
        .incr(counter)
        .pexpire(counter, window.endMs - nowMs + EXPIRY_SLACK_MS)
        .exec();
      if (!results) throw new Error("Redis discarded the rate-limit transaction");
      const [incrError, count] = results[0] ?? [new Error("no reply to INCR"), null];
      if (incrError) throw incrError;
      return decide(Number(count), rule, window.resetSeconds);
    },
  };
}
