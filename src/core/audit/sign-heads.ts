/**
 * @module
 * Signing the heads of trails that were unsigned when `AUDIT_SIGNING_KEY` was set
 * (`forensic-annotation audit sign-heads`, docs/storage.md#signing-existing-trails). An append
 * never signs over an unsigned head, since that would vouch for whatever was done to it: the
 * operator signs each such head once, after its whole trail verified.
 */
import type { BlobStore } from "../ports.ts";
import { storageKeys } from "../storage/keys.ts";
import { type HeadSigner, type HeadSigning, signUnsignedHead } from "./chain.ts";
import { auditVerifyDays, readAuditTrail } from "./trail.ts";
import { type AuditVerification, verifyAuditTrail } from "./verify.ts";
import type { AuditJwk } from "./head-signature.ts";

/** What signing one user's head did: signed, already signed, no head, tampered (not signed), or changed by an append meanwhile. */
export interface HeadSigningOutcome {
  userId: string;
  outcome: HeadSigning | "no head" | "tampered";
  /** The trail's verification, when it was read. */
  verification?: AuditVerification;
}

const decoder = new TextDecoder();
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
  const headKey = storageKeys.auditHead(userId);
  let verification: AuditVerification | undefined;
  for (let attempt = 0; attempt < TRIES; attempt++) {
    const before = await store.get(headKey);
    if (before === null) return { userId, outcome: "no head" };
    const input = await readAuditTrail(store, userId, await auditVerifyDays(store, userId, undefined, undefined, today));
    verification = await verifyAuditTrail(input, { publicKeys: keys.publicKeys });
    // What was verified is the head read before the days (else an append moved it: read again).
    if (!sameHead(before, input.head)) continue;
    if (!verification.valid) return { userId, outcome: "tampered", verification };
    if (verification.head?.signature !== "unsigned") return { userId, outcome: "already signed", verification };
    const outcome = await signUnsignedHead(store, userId, keys.signer, before);
    if (outcome !== "changed") return { userId, outcome, verification };
  }
  return { userId, outcome: "changed", ...(verification === undefined ? {} : { verification }) };
}

function sameHead(bytes: Uint8Array, parsed: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(decoder.decode(bytes))) === JSON.stringify(parsed);
  } catch {
    return false;
  }
}
