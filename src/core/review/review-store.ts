/**
 * @module
 * Where reviews live (docs/storage.md#reviews): in the audit store, beside the trails and kept
 * like them (account deletion removes neither), under `reviews/`, `review-index/` and
 * `review-members/`, prefixes no audit day or head uses. A backup that copies every key of
 * every store carries them.
 */
import type { BlobStore, Bytes } from "../ports.ts";
import { storageKeys } from "../storage/keys.ts";
import { type Review, ReviewSchema } from "../schemas/review.ts";
import { ServiceError } from "../errors.ts";
import { type RememberedMember, rememberedMember, rememberMember } from "./review-members.ts";

export type { RememberedMember } from "./review-members.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MARKER = encoder.encode("{}");

/** Reads and writes reviews. */
export interface ReviewStore {
  /** Stores a new review with the pinned copies of its case document and annotations. */
  create(review: Review, caseBytes: Bytes | null, pinned: ReadonlyMap<string, Bytes>): Promise<void>;
  /** The review, or null. */
  get(id: string): Promise<Review | null>;
  /** Changes a review atomically; `change` throws to refuse. */
  update(id: string, change: (review: Review) => Review): Promise<Review>;
  /** The reviews assigned to `reviewer`. */
  inbox(reviewer: string): Promise<Review[]>;
  /** The reviews of one case. */
  ofCase(owner: string, caseNumber: string): Promise<Review[]>;
  /** The annotations of a file as pinned when the review opened. */
  pinned(id: string, fileId: string): Promise<Bytes | null>;
  /** The case document as pinned when the review opened. */
  pinnedCase(id: string): Promise<Bytes | null>;
  /** Remembers the lab and roles a user's token stated (written only when they changed). */
  remember(uid: string, member: RememberedMember): Promise<void>;
  /** What {@link ReviewStore.remember} kept. */
  remembered(uid: string): Promise<RememberedMember | null>;
}

function parseReview(bytes: Uint8Array): Review {
  const parsed = ReviewSchema.safeParse(JSON.parse(decoder.decode(bytes)));
  if (!parsed.success) throw ServiceError.server("A stored review is not readable");
  return parsed.data;
}

/** Reviews over the audit store. */
export function reviewStore(store: BlobStore): ReviewStore {
  const many = async (keys: string[]): Promise<Review[]> => {
    const ids = keys.map((key) => key.slice(key.lastIndexOf("/") + 1)).filter((id) => id !== "");
    const reviews = await Promise.all(ids.map(async (id) => {
      const bytes = await store.get(storageKeys.review(id));
      return bytes === null ? null : parseReview(bytes);
    }));
    // Newest first.
    return reviews.filter((review): review is Review => review !== null).sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1));
  };
  return {
    async create(review, caseBytes, pinned) {
      for (const [fileId, bytes] of pinned) await store.put(storageKeys.reviewPinned(review.id, fileId), bytes);
      if (caseBytes !== null) await store.put(storageKeys.reviewCase(review.id), caseBytes);
      await store.put(storageKeys.review(review.id), encoder.encode(JSON.stringify(review)));
      // The indexes last: a review listed is a review whole.
      await store.put(storageKeys.reviewInbox(review.reviewer, review.id), MARKER);
      await store.put(storageKeys.reviewsOfCase(review.owner, review.caseNumber, review.id), MARKER);
    },
    async get(id) {
      const bytes = await store.get(storageKeys.review(id));
      return bytes === null ? null : parseReview(bytes);
    },
    async update(id, change) {
      let result: Review | undefined;
      await store.update(storageKeys.review(id), (current) => {
        if (current === null) throw ServiceError.notFound("No such review", { reviewId: id });
        result = change(parseReview(current));
        return encoder.encode(JSON.stringify(result));
      });
      return result!;
    },
    inbox: async (reviewer) => many(await store.list(storageKeys.reviewInbox(reviewer))),
    ofCase: async (owner, caseNumber) => many(await store.list(storageKeys.reviewsOfCase(owner, caseNumber))),
    pinned: (id, fileId) => store.get(storageKeys.reviewPinned(id, fileId)),
    pinnedCase: (id) => store.get(storageKeys.reviewCase(id)),
    remember: (uid, member) => rememberMember(store, uid, member),
    remembered: (uid) => rememberedMember(store, uid),
  };
}
