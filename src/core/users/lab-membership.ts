/**
 * @module
 * A user's lab and roles (docs/review.md#labs-and-roles): each from the identity token's claim
 * when it has one, else from the user record (where only an administrator sets them). A user
 * with no roles is an `examiner`; the admin key acts as an `admin` of no lab.
 */
import type { Actor } from "../audit/service-events.ts";
import { type LabRole, LabRoleSchema } from "../schemas/user.ts";
import type { UserRecords } from "./user-records.ts";

/** Where a user belongs and what they may do. */
export interface LabMembership {
  /** The lab, or undefined when neither the token nor the record names one. */
  lab: string | undefined;
  /** At least one role: `examiner` when none is given. */
  roles: readonly LabRole[];
}

const knownRoles = (values: readonly unknown[]): LabRole[] => LabRoleSchema.options.filter((role) => values.includes(role));

/** The lab and roles of `actor`: its token's claims, else its user record's fields. */
export async function membershipOf(actor: Actor, records: UserRecords): Promise<LabMembership> {
  if (actor.kind === "admin") return { lab: undefined, roles: ["admin"] };
  let lab = actor.lab;
  let roles = actor.roles === undefined ? undefined : knownRoles(actor.roles);
  if (lab === undefined || roles === undefined) {
    const record = await records.view(actor.uid);
    lab ??= typeof record?.lab === "string" && record.lab !== "" ? record.lab : undefined;
    roles ??= Array.isArray(record?.roles) ? knownRoles(record.roles) : [];
  }
  return { lab, roles: roles.length === 0 ? ["examiner"] : roles };
}

/**
 * True when `actor` is an administrator: the admin key, or a user whose roles include `admin`
 * (the token's claim, else the record's; without `records`, the token's claim alone).
 * The one place that decides (legal holds, history prune, lab and roles of a record).
 */
export async function isAdministrator(actor: Actor | undefined, records: UserRecords | undefined): Promise<boolean> {
  if (actor === undefined) return false;
  if (actor.kind === "admin") return true;
  if (records === undefined) return knownRoles(actor.roles ?? []).includes("admin");
  return (await membershipOf(actor, records)).roles.includes("admin");
}
