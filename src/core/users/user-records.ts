/**
 * @module
 * User records in the user store (`USER_DB`, keyed by userUid): read with the schema,
 * written whole. Read-modify-write runs under a per-user lock so that two concurrent
 * updates of one user in this process do not lose each other.
 */
import type { KvStore } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import { KeyedMutex } from "../storage/keyed-mutex.ts";
import { storageKeys } from "../storage/keys.ts";
import { type UserData, UserDataSchema } from "../schemas/user.ts";

/** Reads and writes user records. */
export interface UserRecords {
  /** The record, or null when the user does not exist. */
  get(userUid: string): Promise<UserData | null>;
  /** Runs `change` on the current record (or null) and stores what it returns, under the user's lock. */
  update<T>(userUid: string, change: (current: UserData | null) => Promise<{ next: UserData | null; result: T }> | { next: UserData | null; result: T }): Promise<T>;
  /** Removes the record; true when it existed. */
  delete(userUid: string): Promise<boolean>;
}

/** User records over a KV store. */
export function userRecords(users: KvStore): UserRecords {
  const mutex = new KeyedMutex();
  async function get(userUid: string): Promise<UserData | null> {
    const stored = await users.get(storageKeys.user(userUid));
    if (stored === null) return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(stored);
    } catch {
      throw ServiceError.server("The stored user record is not valid JSON");
    }
    const record = UserDataSchema.safeParse(parsed);
    if (!record.success) throw ServiceError.server("The stored user record does not match UserData");
    return record.data;
  }
  return {
    get,
    update(userUid, change) {
      const key = storageKeys.user(userUid);
      return mutex.run(key, async () => {
        const { next, result } = await change(await get(userUid));
        if (next !== null) await users.put(key, JSON.stringify(next));
        return result;
      });
    },
    delete: (userUid) => users.delete(storageKeys.user(userUid)),
  };
}
