/**
 * @module
 * Whether one of a user's cases lists an image: the fallback owner check for images
 * uploaded before identity mode recorded owners (issue 7: "an image can be signed or
 * deleted only by the user whose case lists it").
 */
import type { BlobStore, KvStore } from "../ports.ts";
import { storageKeys } from "../storage/keys.ts";
import { userRecords } from "./user-records.ts";

const decoder = new TextDecoder();

/** True when a case (own or read-only) of `uid` lists a file with id `imageId`. */
export type CaseListsImage = (uid: string, imageId: string) => Promise<boolean>;

/** The check over the user records and the case documents. */
export function caseListsImage(users: KvStore, data: BlobStore): CaseListsImage {
  const records = userRecords(users);
  return async (uid, imageId) => {
    const user = await records.get(uid);
    if (user === null) return false;
    const cases = [...user.cases, ...(user.readOnlyCases ?? [])].map((entry) => entry.caseNumber);
    for (const caseNumber of new Set(cases)) {
      const stored = await data.get(storageKeys.case(uid, caseNumber));
      if (stored === null) continue;
      try {
        const doc: unknown = JSON.parse(decoder.decode(stored));
        const files: unknown = (doc as { files?: unknown } | null)?.files;
        if (Array.isArray(files) && files.some((file) => (file as { id?: unknown } | null)?.id === imageId)) return true;
      } catch {
        // A case document that is not JSON lists nothing.
      }
    }
    return false;
  };
}
