/**
 * @module
 * The append-only audit trail over the audit store: one JSON array per user and UTC day.
 * Appends go through the store's lossless `appendToJsonArray`; nothing here rewrites an
 * entry that was written before.
 */
import type { BlobStore, Clock } from "../ports.ts";
import type { ValidationAuditEntry } from "../schemas/audit.ts";
import { storageKeys } from "../storage/keys.ts";
import { parseJsonArray } from "../storage/json-array.ts";
import { utcDay } from "./days.ts";

/** What an append answers (spec 4.8). */
export interface AuditAppendResult {
  entryCount: number;
  filename: string;
}

/** Appends an entry to today's file (server clock, UTC) of `userId`. */
export async function appendAuditEntry(
  store: BlobStore,
  clock: Clock,
  userId: string,
  entry: ValidationAuditEntry,
): Promise<AuditAppendResult> {
  const filename = storageKeys.auditDay(userId, utcDay(clock.now()));
  const entryCount = await store.appendToJsonArray(filename, entry);
  return { entryCount, filename };
}

/** Reads several days (at most `parallel` files at a time) in day order. */
export async function readAuditDays(
  store: BlobStore,
  userId: string,
  days: readonly string[],
  parallel = 16,
): Promise<unknown[]> {
  const perDay: unknown[][] = new Array(days.length);
  for (let i = 0; i < days.length; i += parallel) {
    await Promise.all(
      days.slice(i, i + parallel).map(async (day, offset) => {
        perDay[i + offset] = await readAuditDay(store, userId, day);
      }),
    );
  }
  return perDay.flat();
}

/** One day: the entries under the legacy key first (they are older), then the current key. */
export async function readAuditDay(store: BlobStore, userId: string, day: string): Promise<unknown[]> {
  const [legacy, current] = await Promise.all([
    store.get(storageKeys.legacyAuditDay(userId, day)),
    store.get(storageKeys.auditDay(userId, day)),
  ]);
  return [...(legacy ? parseJsonArray(legacy).items : []), ...(current ? parseJsonArray(current).items : [])];
}
