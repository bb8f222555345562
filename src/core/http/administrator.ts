/**
 * @module
 * Who may act as an administrator (docs/api.md#legal-holds): today the holder of the admin key
 * (`X-Admin-Key` matching `ADMIN_AUTH`, besides the worker's own key). The one place to widen
 * it: an identity token whose roles include `admin` (REVIEW.md) is to be accepted here.
 */
import type { Context } from "hono";
import { ServiceError } from "../errors.ts";
import type { Actor } from "../audit/service-events.ts";
import { actorOf } from "./actor.ts";
import type { WorkerEnv } from "./worker-app.ts";

/** Whether `actor` acts as an administrator. */
export function isAdministrator(actor: Actor | undefined): boolean {
  // Hook: identity tokens with the `admin` role (REVIEW.md) are to be accepted here too.
  return actor?.kind === "admin";
}

/** The name an administrator's action records (`heldBy`): `admin` for the admin key. */
export function administratorName(actor: Actor | undefined): string {
  return actor?.kind === "user" ? actor.uid : "admin";
}

/** Refuses (403 FORBIDDEN) a request not made by an administrator; `what` names the action. */
export function requireAdministrator(c: Context<WorkerEnv>, what: string): void {
  if (!isAdministrator(actorOf(c))) {
    throw ServiceError.forbidden(`${what} needs an administrator: send X-Admin-Key (ADMIN_AUTH) besides the worker's key`, { header: "X-Admin-Key" });
  }
}
