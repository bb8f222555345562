/**
 * @module
 * The cases a user holds in the data store, whatever their record lists: every
 * `{userUid}/{caseNumber}/...` key names one. Clients write case documents through the data
 * worker directly, so the record alone cannot tell how many cases exist.
 */
import type { BlobStore } from "../ports.ts";
import { checkSegment } from "../storage/keys.ts";

/** The distinct case numbers with at least one stored key under `{userUid}/{caseNumber}/`. */
export async function storedCaseNumbers(data: BlobStore, userUid: string): Promise<string[]> {
  const prefix = `${checkSegment(userUid, "userUid")}/`;
  const numbers = new Set<string>();
  for (const key of await data.list(prefix)) {
    const rest = key.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash > 0) numbers.add(rest.slice(0, slash));
  }
  return [...numbers];
}
