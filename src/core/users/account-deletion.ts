/**
 * @module
 * Account deletion in the order of docs/api.md#user-worker: read the record; delete every case (own
 * and read-only) with its files' annotations and its images; send the confirmation to the
 * user and the notification to the administrator; delete the record last. Resumable: each
 * step tolerates what an earlier, failed attempt already removed, and a case document is
 * removed only after its files and images, so a retry still finds what is left. Audit
 * trails stay (append-only). An account with a case on legal hold is refused (409) before
 * anything is removed.
 */
import type { Clock, Mailer } from "../ports.ts";
import { type ServerFailureKind, ServiceError } from "../errors.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { checkSegment } from "../storage/keys.ts";
import { adminDeletionMail, type DeletionSummary, userDeletionMail } from "../mail/deletion-mails.ts";
import { caseFileIds, type CaseStore } from "../cases/case-store.ts";
import type { UserRecords } from "./user-records.ts";
import type { LegalHoldStore } from "./legal-holds.ts";

/** What a deletion needs. */
export interface AccountDeletionDeps {
  /** The user records. */
  users: UserRecords;
  /** Legal holds: an account with a held case is not deleted at all (docs/api.md#legal-holds). */
  holds: LegalHoldStore;
  /** Cases, annotations and images: in the stores or over HTTP. */
  resources: CaseStore;
  /** Sends the two mails. */
  mailer: Mailer;
  /** Dates the mails. */
  clock: Clock;
  /** `MAIL_FROM` and `ADMIN_EMAIL`. */
  config: Pick<ServiceConfig, "mailFrom" | "adminEmail">;
}

/** How a deletion ended. */
export type DeletionOutcome =
  | { status: "deleted"; summary: DeletionSummary }
  | { status: "not-found" }
  | { status: "mail-failed"; reason: string };

/** Whether `segment` can be one segment of a stored key. */
function canNameStored(segment: string): boolean {
  try {
    checkSegment(segment);
    return true;
  } catch {
    return false;
  }
}

/** Case numbers that can name a stored case (a malformed one in the record cannot). */
function storableCaseNumbers(numbers: string[]): string[] {
  return [...new Set(numbers)].filter(canNameStored);
}

const SERVER_KINDS: ReadonlySet<string> = new Set<ServerFailureKind>(["failed", "upstream-failed", "unavailable", "upstream-timeout"]);

/** A store's refusal (a worker answering 403 or 404) is this service's failure, not the caller's. */
function asServerFailure(err: unknown): unknown {
  return err instanceof ServiceError && !SERVER_KINDS.has(err.kind) ? ServiceError.server(err.message) : err;
}

/** Removes every case of the user with its files' annotations and images; answers how many cases. */
async function deleteCases(resources: CaseStore, userUid: string, listed: string[]): Promise<number> {
  // Every case under the user's prefix goes, listed in the record or not.
  const caseNumbers = storableCaseNumbers([...listed, ...(await resources.storedCaseNumbers?.(userUid) ?? [])]);
  for (const caseNumber of caseNumbers) {
    // No case document (removed by an earlier attempt, or never written): what is left of its folder still goes.
    const fileIds = await caseFileIds(resources, userUid, caseNumber) ?? [];
    // A case document is any JSON its owner stored: an id no stored file or image can have (`a/b`) names nothing to remove.
    for (const fileId of fileIds.filter(canNameStored)) {
      await resources.deleteAnnotations(userUid, caseNumber, fileId);
      await resources.deleteImage(fileId, userUid);
    }
    if (resources.deleteCaseFolder !== undefined) await resources.deleteCaseFolder(userUid, caseNumber);
    else await resources.deleteCase(userUid, caseNumber);
  }
  // What the user stored outside any case folder goes too.
  await resources.deleteUserDocuments?.(userUid);
  return caseNumbers.length;
}

/** Deletes one account; store or upstream failures throw and leave the record in place. */
export async function deleteAccount(deps: AccountDeletionDeps, userUid: string): Promise<DeletionOutcome> {
  const user = await deps.users.get(userUid);
  if (user === null) return { status: "not-found" };
  const held = await deps.holds.list(userUid);
  if (held.length > 0) {
    throw ServiceError.conflict(
      `User ${userUid} has ${held.length} case(s) on legal hold: the account is not deleted until an administrator lifts every hold`,
      { legalHolds: held.map((hold) => ({ userUid, caseNumber: hold.caseNumber, heldAt: hold.heldAt })) },
    );
  }

  const listed = [...user.cases.map((assignment) => assignment.caseNumber), ...(user.readOnlyCases ?? []).map((readOnly) => readOnly.caseNumber)];
  const casesDeleted = await deleteCases(deps.resources, userUid, listed).catch((err: unknown) => {
    throw asServerFailure(err);
  });

  const summary: DeletionSummary = { user, casesDeleted, deletedAt: deps.clock.now().toISOString() };
  const from = deps.config.mailFrom;
  const admin = deps.config.adminEmail;
  if (from === undefined || admin === undefined) return { status: "mail-failed", reason: "MAIL_FROM or ADMIN_EMAIL is not configured" };
  try {
    const toUser = userDeletionMail(summary, from);
    if (toUser !== null) await deps.mailer.send(toUser);
    await deps.mailer.send(adminDeletionMail(summary, from, admin));
  } catch (err) {
    return { status: "mail-failed", reason: err instanceof Error ? err.message : "mail transport failed" };
  }
  await deps.users.delete(userUid);
  return { status: "deleted", summary };
}
