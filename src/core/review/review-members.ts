/**
 * @module
 * The lab and roles a user's own token last stated, kept in the audit store under
 * `review-members/` (docs/review.md#labs-and-roles): every worker writes them, the review worker
 * reads them to know whom an owner may ask. Apart from the review store so that a worker that
 * only remembers does not carry the review schema.
 */
import type { BlobStore } from "../ports.ts";
import { storageKeys } from "../storage/keys.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Lab and roles as a user's own token last stated them. */
export interface RememberedMember {
  /** The lab claim. */
  lab?: string | undefined;
  /** The known roles of the roles claim. */
  roles?: readonly string[] | undefined;
}

/** Remembers the lab and roles a user's token stated (written only when they changed). */
export async function rememberMember(store: BlobStore, uid: string, member: RememberedMember): Promise<void> {
  const text = JSON.stringify({ lab: member.lab, roles: member.roles });
  const key = storageKeys.reviewMember(uid);
  const stored = await store.get(key);
  if (stored !== null && decoder.decode(stored) === text) return;
  await store.put(key, encoder.encode(text));
}

/** What {@link rememberMember} kept for `uid`, or null. */
export async function rememberedMember(store: BlobStore, uid: string): Promise<RememberedMember | null> {
  const stored = await store.get(storageKeys.reviewMember(uid));
  if (stored === null) return null;
  try {
    const value = JSON.parse(decoder.decode(stored)) as RememberedMember;
    return { lab: typeof value.lab === "string" ? value.lab : undefined, roles: Array.isArray(value.roles) ? value.roles.filter((role) => typeof role === "string") : undefined };
  } catch {
    return null;
  }
}
