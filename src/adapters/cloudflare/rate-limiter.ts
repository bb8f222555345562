/**
 * @module
 * A `RateLimiter` over Cloudflare's Workers rate-limiting binding (`[[ratelimits]]` in the
 * wrangler configuration). The binding counts per key in its own windows, with the limit
 * and period (10 or 60 s) fixed in wrangler, and answers only `{ success }`; so the rule a
 * request names cannot change the binding's limit, and the counts are per Cloudflare
 * location and approximate (Cloudflare's documentation says so). Give each limit its own
 * binding when routes need different limits.
 *
 * What the binding does not report is filled in conservatively: the limit is the one
 * configured for the binding (or the rule's when not given), `remaining` is `limit - 1`
 * when allowed (the binding tells no count) and 0 when refused, and the reset is the
 * binding's whole period.
 *
 * @example
 * ```ts
 * // wrangler: [[ratelimits]] name = "UPLOAD_LIMITER", namespace_id = "1001", simple = { limit = 30, period = 60 }
 * const limiter = createCloudflareRateLimiter(env.UPLOAD_LIMITER, { limit: 30, period: 60 });
 * ```
 */
import type { RateDecision, RateLimiter, RateRule } from "../../core/rate-limit/limiter.ts";

/** The part of the Workers `RateLimit` binding used here (the real binding satisfies it). */
export interface RateLimitBindingLike {
  /** Counts one hit of `key`; `success` is false when the key is over the binding's limit. */
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

/** What the binding was configured with in wrangler (`simple = { limit, period }`). */
export interface CloudflareRateLimiterOptions {
  /** The binding's `simple.limit`; default: the limit of the rule each hit names. */
  limit?: number;
  /** The binding's `simple.period` in seconds: 10 or 60 (default 60). */
  period?: 10 | 60;
}

/** A limiter over a Workers rate-limiting binding. */
export function createCloudflareRateLimiter(
  binding: RateLimitBindingLike,
  options: CloudflareRateLimiterOptions = {},
): RateLimiter {
  const period = options.period ?? 60;
  if (period !== 10 && period !== 60) throw new RangeError(`a rate-limiting binding's period is 10 or 60 seconds, not ${String(period)}`);
  return {
    async hit(key: string, rule: RateRule): Promise<RateDecision> {
      const limit = options.limit ?? rule.limit;
      const { success } = await binding.limit({ key });
      return {
        allowed: success,
        limit,
        remaining: success ? Math.max(0, limit - 1) : 0,
        resetSeconds: period,
      };
    },
  };
}
