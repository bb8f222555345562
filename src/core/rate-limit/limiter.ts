/**
 * @module
 * The `RateLimiter` port and its in-memory implementation. A limiter counts hits of a key
 * in fixed windows aligned to `floor(now / window)`, so every process that shares a
 * backend (Redis, the Cloudflare binding) agrees on where a window starts. The in-memory
 * limiter counts for one process only, which is what a single server needs.
 *
 * @example
 * ```ts
 * const limiter = createMemoryRateLimiter();
 * const decision = await limiter.hit("ip:203.0.113.7:image.upload", { limit: 30, windowSeconds: 60 });
 * if (!decision.allowed) console.log(`retry in ${decision.resetSeconds} s`);
 * ```
 */
import { type Clock, systemClock } from "../ports.ts";

/** A limit: at most `limit` hits per fixed window of `windowSeconds`. */
export interface RateRule {
  /** Hits allowed per window (a positive integer). */
  limit: number;
  /** The window length in whole seconds (at least 1). */
  windowSeconds: number;
}

/** The outcome of one hit. */
export interface RateDecision {
  /** True when the hit is within the limit. */
  allowed: boolean;
  /** The limit of the window the hit counted in. */
  limit: number;
  /** Hits still allowed in this window after this one (0 when refused). */
  remaining: number;
  /** Whole seconds until the window resets, at least 1. */
  resetSeconds: number;
}

/** Counts hits per key and decides whether each is within its rule. */
export interface RateLimiter {
  /** Counts one hit of `key` and answers whether it is within `rule`. */
  hit(key: string, rule: RateRule): Promise<RateDecision>;
}

/** Options of {@link createMemoryRateLimiter}. */
export interface MemoryRateLimiterOptions {
  /** The time source; tests pass a clock they move by hand. Default: the system clock. */
  clock?: Clock;
  /** Most keys held at once (default 100 000); beyond it the oldest windows are dropped. */
  maxKeys?: number;
}

/** Throws a `RangeError` unless the rule has a positive whole limit and window. */
export function assertRateRule(rule: RateRule): void {
  if (!Number.isSafeInteger(rule.limit) || rule.limit < 1 || !Number.isSafeInteger(rule.windowSeconds) || rule.windowSeconds < 1) {
    throw new RangeError(`invalid rate rule ${rule.limit}/${rule.windowSeconds}s: limit and window must be whole numbers of at least 1`);
  }
}

/** Where a window of `windowSeconds` containing `nowMs` starts and ends, and its index. */
export function fixedWindow(nowMs: number, windowSeconds: number): { index: number; endMs: number; resetSeconds: number } {
  const windowMs = windowSeconds * 1000;
  const index = Math.floor(nowMs / windowMs);
  const endMs = (index + 1) * windowMs;
  return { index, endMs, resetSeconds: Math.max(1, Math.ceil((endMs - nowMs) / 1000)) };
}

/** The decision for the `count`-th hit of a window. */
export function decide(count: number, rule: RateRule, resetSeconds: number): RateDecision {
  return {
    allowed: count <= rule.limit,
    limit: rule.limit,
    remaining: Math.max(0, rule.limit - count),
    resetSeconds,
  };
}

interface WindowCount {
  index: number;
  windowSeconds: number;
  endMs: number;
  count: number;
  /** Past its limit: the client is being refused until the window ends. */
  refused: boolean;
}

/** How many refused windows one new key may move to the back before an old window is dropped whatever it holds. */
const REFUSED_KEPT_PER_INSERT = 64;

const SWEEP_EVERY_MS = 60_000;
const SWEEP_WHEN_FULL_MS = 1_000;

/** The in-memory limiter, which can also tell how many keys it holds. */
export interface MemoryRateLimiter extends RateLimiter {
  /** The number of keys held now (live windows, plus expired ones not yet swept). */
  size(): number;
}

/**
 * A limiter that counts in this process's memory. Expired windows are swept once a minute
 * and whenever `maxKeys` is reached; if every key is still live at the bound, the oldest
 * windows are dropped (those clients start afresh) so memory never grows past the bound,
 * except those refusing their client: up to 64 of them are kept for each new key.
 */
export function createMemoryRateLimiter(options: MemoryRateLimiterOptions = {}): MemoryRateLimiter {
  const clock = options.clock ?? systemClock;
  const maxKeys = Math.max(1, options.maxKeys ?? 100_000);
  // Insertion order is window-start order: a key whose window rolls over is re-inserted.
  const counts = new Map<string, WindowCount>();
  let lastSweepMs = Number.NEGATIVE_INFINITY;

  const sweepExpired = (nowMs: number): void => {
    for (const [key, entry] of counts) if (entry.endMs <= nowMs) counts.delete(key);
    lastSweepMs = nowMs;
  };

  return {
    size: (): number => counts.size,
    hit(key: string, rule: RateRule): Promise<RateDecision> {
      try {
        assertRateRule(rule);
      } catch (err) {
        return Promise.reject(err);
      }
      const nowMs = clock.now().getTime();
      const window = fixedWindow(nowMs, rule.windowSeconds);
      if (nowMs >= lastSweepMs + SWEEP_EVERY_MS || nowMs < lastSweepMs) sweepExpired(nowMs);
      let entry = counts.get(key);
      if (!entry || entry.index !== window.index || entry.windowSeconds !== rule.windowSeconds) {
        counts.delete(key);
        // A full sweep costs O(keys): at most once a second, so a flood of new keys cannot
        // make every request pay for it.
        if (counts.size >= maxKeys && nowMs >= lastSweepMs + SWEEP_WHEN_FULL_MS) sweepExpired(nowMs);
        // Still full of live windows: drop the oldest rather than grow. A window refusing its
        // client is kept (moved to the back): a flood of new keys must not let that client through again.
        let kept = 0;
        for (const [oldestKey, oldest] of counts) {
          if (counts.size < maxKeys) break;
          counts.delete(oldestKey);
          if (oldest.refused && kept++ < REFUSED_KEPT_PER_INSERT) counts.set(oldestKey, oldest);
        }
        entry = { index: window.index, windowSeconds: rule.windowSeconds, endMs: window.endMs, count: 0, refused: false };
        counts.set(key, entry);
      }
      // A refused hit does not count further: the client is told the same thing until reset.
      if (entry.count <= rule.limit) entry.count++;
      entry.refused = entry.count > rule.limit;
      return Promise.resolve(decide(entry.count, rule, window.resetSeconds));
    },
  };
}
