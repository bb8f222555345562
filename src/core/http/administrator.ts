/**
 * @module
 * Who may act as an administrator (docs/api.md#legal-holds, docs/review.md#labs-and-roles): the
 * holder of the admin key (`X-Admin-Key` matching `ADMIN_AUTH`, besides the worker's own key), or
 * an identity token's user whose roles include `admin` (the token's claim, else their record).
 */
import type { Context } from "hono";
import { ServiceError } from "../errors.ts";
import type { Actor } from "../audit/service-events.ts";
import { actorOf } from "./actor.ts";
import type { WorkerEnv } from "./worker-app.ts";
import { isAdministrator } from "../users/lab-membership.ts";
import type { UserRecords } from "../users/user-records.ts";

/** The name an administrator's action records (`heldBy`): the token's user, or `admin` for the admin key. */
export function administratorName(actor: Actor | undefined): string {
  return actor?.kind === "user" ? actor.uid : "admin";
}

/**
 * Refuses (403 FORBIDDEN) a request not made by an administrator; `what` names the action.
 * `records` gives the roles of a token that states none (without them, the token's claim alone).
 */
export async function requireAdministrator(c: Context<WorkerEnv>, records: UserRecords | undefined, what: string): Promise<void> {
  if (!await isAdministrator(actorOf(c), records)) {
    throw ServiceError.forbidden(`${what} needs an administrator: the admin key (X-Admin-Key: ADMIN_AUTH) besides the worker's key, or an identity token with role admin`, { header: "X-Admin-Key" });
  }
}

/**
 * Refuses (403 FORBIDDEN) a request without the admin key: what reaches every lab's records at
 * once (a backup, a restore) is the operator's, never a lab administrator's token.
 */
export function requireAdminKey(c: Context<WorkerEnv>, what: string): void {
  if (actorOf(c)?.kind !== "admin") {
    throw ServiceError.forbidden(`${what} needs the admin key (X-Admin-Key: ADMIN_AUTH) besides the worker's key`, { header: "X-Admin-Key" });
  }
}
