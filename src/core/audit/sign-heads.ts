/**
 * @module
 * Signing the heads of trails that were unsigned when `AUDIT_SIGNING_KEY` was set
 * (`forensic-annotation audit sign-heads`, docs/storage.md#signing-existing-trails). An append
 * never signs over an unsigned head, since that would vouch for whatever was done to it: the
 * operator signs each such head once, after its whole trail verified, when turning signing on.
 * Later, an unsigned head may be one written without the key over a signed trail (its tail
 * dropped): a store already holding signed heads is signed only when forced.
 */
import type { BlobStore } from "../ports.ts";
import { type HeadSigner, type HeadSigning, readHead, signUnsignedHead } from "./chain.ts";
import { auditVerifyDays, readAuditTrail, storedHeadBytes, storedHeadValue } from "./trail.ts";
import { type AuditVerification, verifyAuditTrail } from "./verify.ts";
import type { AuditJwk } from "./head-signature.ts";
import { ServiceError } from "../errors.ts";

/**
 * What signing one user's head did: signed, already signed, no head, tampered (not signed),
 * changed by an append meanwhile (run again), or unverifiable (`error` says why; not signed).
 */
export interface HeadSigningOutcome {
  /** The user whose trail it is. */
  userId: string;
  /** What was done. */
  outcome: HeadSigning | "no head" | "tampered" | "unverifiable";
  /** The trail's verification, when it was read. */
  verification?: AuditVerification;
  /** Why the trail could not be verified at all (a user id the store cannot hold, a trail too long for one verification). */
  error?: string;
}

const HEAD_FILE = /^audit-heads\/(.+)\.json$/;
// An append moving the head while the trail is read: read again, a few times.
const TRIES = 3;

/** The users the audit store holds a head for. */
export async function usersWithHeads(store: BlobStore): Promise<string[]> {
  return (await store.list("audit-heads/")).flatMap((key) => {
    const user = HEAD_FILE.exec(key)?.[1];
    return user === undefined || user.includes("/") ? [] : [user];
  });
}

/**
 * Verifies the whole trail of `userId` (signatures checked with `publicKeys`, an unsigned head
 * allowed) and, when it is intact and its head unsigned, signs the head as it was verified.
 */
export async function signAuditHead(
  store: BlobStore,
  userId: string,
  keys: { signer: HeadSigner; publicKeys: readonly AuditJwk[] },
  today: Date,
): Promise<HeadSigningOutcome> {
  let verification: AuditVerification | undefined;
  for (let attempt = 0; attempt < TRIES; attempt++) {
    const before = await storedHeadBytes(store, userId);
    if (before === null) return { userId, outcome: "no head" };
    const input = await readAuditTrail(store, userId, await auditVerifyDays(store, userId, undefined, undefined, today));
    verification = await verifyAuditTrail(input, { publicKeys: keys.publicKeys });
    // What was verified is the head read before the days (else an append moved it: read again).
    if (JSON.stringify(storedHeadValue(before)) !== JSON.stringify(input.head)) continue;
    if (!verification.valid) return { userId, outcome: "tampered", verification };
    if (verification.head?.signature !== "unsigned") return { userId, outcome: "already signed", verification };
    const outcome = await signUnsignedHead(store, userId, keys.signer, before);
    if (outcome !== "changed") return { userId, outcome, verification };
  }
  return { userId, outcome: "changed", ...(verification === undefined ? {} : { verification }) };
}

/**
 * Thrown by {@link signAuditHeads} on a store that already holds signed heads (`force` not given):
 * signing has begun there, so an unsigned head may be one written without the key.
 */
export class SigningBegun extends Error {
  /** The users whose heads are signed (the first few). */
  readonly users: readonly string[];
  /** `users`: some of the users whose heads are signed, named in the message. */
  constructor(users: readonly string[]) {
    super(
      `signing has begun in this store (the heads of ${users.slice(0, 3).map((user) => JSON.stringify(user)).join(", ")}${users.length > 3 ? " and more" : ""} are signed): ` +
        "an unsigned head now may be one written without the key over a signed trail, and signing it would vouch for that. " +
        "Verify the trails named 'signature missing' first; --force (force: true) signs them anyway",
    );
    this.name = "SigningBegun";
    this.users = users;
  }
}

/** The users of `users` whose stored heads carry a signature (at most a few: the first found say enough). */
async function signedHeads(store: BlobStore, users: readonly string[]): Promise<string[]> {
  const signed: string[] = [];
  for (const userId of users) {
    let bytes: Uint8Array | null;
    try {
      bytes = await storedHeadBytes(store, userId);
    } catch (err) {
      if (err instanceof ServiceError && err.kind === "invalid") continue;
      throw err;
    }
    const head = bytes === null ? undefined : readHead(bytes);
    if (head?.kind === "head" && head.head.signature !== undefined) signed.push(userId);
    if (signed.length >= 4) break;
  }
  return signed;
}

/**
 * Signs the unsigned heads of every intact trail in `store` (or of `users`), one user at a time,
 * as `forensic-annotation audit sign-heads` does; `onUser` is told each outcome as it comes. A
 * user id the store cannot hold, or a trail too long to verify at once, is `unverifiable`, with
 * `error`, and left as it is.
 */
export async function signAuditHeads(
  store: BlobStore,
  keys: { signer: HeadSigner; publicKeys: readonly AuditJwk[] },
  today: Date,
  options: { users?: readonly string[]; force?: boolean; onUser?: (outcome: HeadSigningOutcome) => void } = {},
): Promise<HeadSigningOutcome[]> {
  const everyone = await usersWithHeads(store);
  if (options.force !== true) {
    const signed = await signedHeads(store, everyone);
    if (signed.length > 0) throw new SigningBegun(signed);
  }
  const outcomes: HeadSigningOutcome[] = [];
  for (const userId of options.users ?? everyone) {
    let outcome: HeadSigningOutcome;
    try {
      outcome = await signAuditHead(store, userId, keys, today);
    } catch (err) {
      // A bad user id or a trail past the days one verification reads: named, the others go on.
      if (!(err instanceof ServiceError) || (err.kind !== "invalid" && err.kind !== "integrity-failed")) throw err;
      outcome = { userId, outcome: "unverifiable", error: err.message };
    }
    outcomes.push(outcome);
    options.onUser?.(outcome);
  }
  return outcomes;
}
