/**
 * @module
 * UserLimits (docs/api.md#user-limits): permitted accounts get `MAX_CASES`/`MAX_FILES_PER_CASE` (unlimited
 * unless set), demo accounts (`permitted: false`) the small `DEMO_*` limits.
 */
import type { ServiceConfig } from "../config/mod.ts";
import type { UserData, UserLimits } from "../schemas/user.ts";

/** The limits that apply to a user. */
export function limitsFor(user: Pick<UserData, "permitted">, config: Pick<ServiceConfig, "limits" | "demoLimits">): UserLimits {
  return user.permitted ? config.limits : config.demoLimits;
}
