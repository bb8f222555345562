/**
 * @module
 * Every user of the user store, summed up for an administrator (GET / of the user worker and
 * the `users list` command read it the same way). A record that cannot be read is listed as such,
 * so one broken record never hides the others.
 */
import type { KvStore } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import { checkSegment } from "../storage/keys.ts";
import type { UserData, UserSummary } from "../schemas/user.ts";
import type { UserRecords } from "./user-records.ts";

/** The summary of one record. */
export function summaryOf(user: UserData): UserSummary {
  return {
    uid: user.uid,
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    company: user.company,
    permitted: user.permitted,
    cases: user.cases.length,
    readOnlyCases: user.readOnlyCases?.length ?? 0,
    createdAt: user.createdAt,
  };
}

/** Whether a key of the user store can be a user id (anything else there is no user record). */
function isUserKey(key: string): boolean {
  try {
    checkSegment(key, "userUid");
    return true;
  } catch {
    return false;
  }
}

/** Every user of `users`, sorted by uid. */
export async function listUsers(users: KvStore, records: UserRecords): Promise<UserSummary[]> {
  const uids = (await users.list("")).filter(isUserKey).sort();
  const listed: UserSummary[] = [];
  for (const uid of uids) {
    try {
      const user = await records.view(uid);
      // Removed since it was listed.
      if (user === null) continue;
      listed.push(summaryOf({ ...user, uid } as UserData));
    } catch (err) {
      if (!(err instanceof ServiceError) || err.kind !== "failed") throw err;
      listed.push({ uid, unreadable: err.message });
    }
  }
  return listed;
}
