/**
 * @module
 * Which annotations of a file are still the version a review pinned (docs/review.md): the pinned
 * bytes, and each confirmation a `verified` signature wrote (or is writing) over them, by this review or by
 * another review of the same case (two reviewers of one file, a verification and a technical
 * review, do not make each other's file "amended"). A confirmation adds the reviewer's
 * confirmation and changes nothing the owner wrote.
 */
import type { Review } from "../schemas/review.ts";

/**
 * The SHA-256s of `fileId`'s annotations that count as `review`'s pinned version: its pinned
 * hash and, in turn, the confirmations of every review (of `caseReviews`, the case's reviews)
 * that pinned a hash already counted. Every confirmation is written over a hash its own review
 * counts, so it is over one counted here too.
 */
export function unamendedHashes(review: Review, fileId: string, caseReviews: readonly Review[]): Set<string> {
  const counted = new Set<string>();
  const pinned = review.files.find((file) => file.fileId === fileId)?.sha256;
  if (pinned === undefined || pinned === null) return counted;
  counted.add(pinned);
  const reviews = [review, ...caseReviews.filter((each) => each.id !== review.id)];
  const added = new Set<string>();
  for (let grew = true; grew;) {
    grew = false;
    for (const each of reviews) {
      const theirs = each.files.find((file) => file.fileId === fileId)?.sha256;
      if (added.has(each.id) || theirs === undefined || theirs === null || !counted.has(theirs)) continue;
      added.add(each.id);
      grew = true;
      for (const confirmation of each.confirmations) if (confirmation.fileId === fileId) counted.add(confirmation.sha256);
      // One being written now counts too: its bytes may land before it is listed as written.
      for (const signing of each.signing ?? []) if (signing.fileId === fileId) for (const sha of signing.sha256s ?? []) counted.add(sha);
    }
  }
  return counted;
}
