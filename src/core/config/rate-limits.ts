/**
 * @module
 * Requests per route and window, per client IP and per user.
 */
import * as z from "zod";
import { parseRateLimits } from "../rate-limit/rules.ts";
import { variable } from "./variables.ts";

/** The rate-limit variable, parsed into a limit per route (or `off`). */
export const RateLimitsSection = z.object({
  RATE_LIMITS: variable(
    z.string().optional().transform((value, ctx) => {
      try {
        return parseRateLimits(value);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: err instanceof Error ? err.message : String(err) });
        return z.NEVER;
      }
    }),
    "`off`, or overrides such as `image.upload=30/60s,pdf=20/60s`: a route or a worker, `=N/W` ([syntax](docs/configuration.md#rate-limits))",
    { usedBy: "all", defaultText: "the defaults of [rate limits](docs/api.md#rate-limits)", typeText: "`off` or `name=N/W,...`" },
  ),
}).transform((e) => ({ rateLimits: e.RATE_LIMITS }));

/** What {@link RateLimitsSection} parses. */
export type RateLimitsConfig = z.output<typeof RateLimitsSection>;
