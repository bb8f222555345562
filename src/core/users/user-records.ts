/**
 * @module
 * User records in the user store (`USER_DB`, keyed by userUid): read with the schema,
 * written whole. Read-modify-write runs under a per-user lock so that two concurrent
 * updates of one user in this process do not lose each other, and, where the store has a
 * compare-and-set (`replaceIf`), writes only over the text it read, retrying on a conflict,
 * so that updates from other processes are not lost either.
 */
import type { KvStore } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import { KeyedMutex } from "../storage/keyed-mutex.ts";
import { CONFLICT, retryOnConflict } from "../storage/conflict-retry.ts";
import { storageKeys } from "../storage/keys.ts";
import { type UserData, UserDataSchema } from "../schemas/user.ts";

/** Reads and writes user records. */
export interface UserRecords {
  /** The record, or null when the user does not exist. */
  get(userUid: string): Promise<UserData | null>;
  /**
   * The record as this process keeps it, shared by every reader: for checks that only read it
   * (no copy of it is parsed, as {@link UserRecords.get} makes one). Null when the user does not exist.
   */
  view(userUid: string): Promise<KeptUserData | null>;
  /** The record as a GET answers it (the JSON text of {@link UserRecords.get}'s record), or null. */
  answer(userUid: string): Promise<string | null>;
  /**
   * Runs `change` on the current record (or null) and stores what it returns (nothing when
   * `next` is null), under the user's lock. Where the store has a compare-and-set, `change` runs
   * again on the new record when another process wrote in between (up to 50 times), so it must
   * have no effect beyond its answer that may not happen twice.
   */
  update<T>(userUid: string, change: (current: UserData | null) => Promise<{ next: UserData | null; result: T }> | { next: UserData | null; result: T }): Promise<T>;
  /** Removes the record; true when it existed. */
  delete(userUid: string): Promise<boolean>;
}

/** `T` read-only all the way down. */
type Frozen<T> = T extends readonly (infer U)[] ? readonly Frozen<U>[] : T extends object ? { readonly [K in keyof T]: Frozen<T[K]> } : T;

/** A user record shared by its readers: read-only all the way down. */
export type KeptUserData = Frozen<UserData>;

/** A stored text this process validated, and what it holds. */
interface Validated {
  /** The text as stored. */
  stored: string;
  /** The record it holds. */
  record: UserData;
  /** The record as JSON, what a GET answers. */
  answer: string;
}

/** Compare-and-set attempts of one update before it gives up (as the blob stores' updates). */
const MAX_ATTEMPTS = 50;

/** How many characters of validated records are kept, so a read of an unchanged record skips the parse and the schema. */
const VALIDATED_CHARS = 4 * 1024 * 1024;

/** User records over a KV store. */
export function userRecords(users: KvStore): UserRecords {
  const mutex = new KeyedMutex();
  // By key, oldest first. A hit needs the stored text to be exactly the one validated, so a
  // write by anyone (another process, another isolate) is read and validated again.
  const validated = new Map<string, Validated>();
  let validatedChars = 0;
  const forget = (key: string) => {
    const known = validated.get(key);
    if (known === undefined) return;
    validated.delete(key);
    validatedChars -= known.stored.length + known.answer.length;
  };
  async function read(userUid: string): Promise<Validated | null> {
    const key = storageKeys.user(userUid);
    const stored = await users.get(key);
    const known = validated.get(key);
    if (known !== undefined && known.stored === stored) return known;
    forget(key);
    if (stored === null) return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(stored);
    } catch {
      throw ServiceError.server("The stored user record is not valid JSON");
    }
    const record = UserDataSchema.safeParse(parsed);
    if (!record.success) throw ServiceError.server("The stored user record does not match UserData");
    const entry = { stored, record: record.data, answer: JSON.stringify(record.data) };
    const size = entry.stored.length + entry.answer.length;
    if (size <= VALIDATED_CHARS / 16) {
      validated.set(key, entry);
      validatedChars += size;
      for (const oldest of validated.keys()) {
        if (validatedChars <= VALIDATED_CHARS) break;
        forget(oldest);
      }
    }
    return entry;
  }
  // Each caller gets a record of its own: the kept one is never handed out to be changed.
  async function get(userUid: string): Promise<UserData | null> {
    const entry = await read(userUid);
    return entry === null ? null : (JSON.parse(entry.answer) as UserData);
  }
  // Over the text read where the store can compare and set; without one (Workers KV) the lock above is all there is.
  const write = users.replaceIf?.bind(users) ?? (async (key: string, _read: string | null, value: string) => {
    await users.put(key, value);
    return true;
  });
  return {
    get,
    view: async (userUid) => (await read(userUid))?.record ?? null,
    answer: async (userUid) => (await read(userUid))?.answer ?? null,
    update(userUid, change) {
      const key = storageKeys.user(userUid);
      return mutex.run(key, () =>
        retryOnConflict(key, MAX_ATTEMPTS, async () => {
          const entry = await read(userUid);
          const { next, result } = await change(entry === null ? null : (JSON.parse(entry.answer) as UserData));
          return next === null || (await write(key, entry?.stored ?? null, JSON.stringify(next))) ? result : CONFLICT;
        })
      );
    },
    delete: (userUid) => users.delete(storageKeys.user(userUid)),
  };
}
