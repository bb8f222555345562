/**
 * @module
 * The start that generated `AUDIT_SIGNING_KEY` on a store already holding audit trails (a data
 * folder of an earlier version, or one that ran with heads unsigned): an append never signs over
 * an unsigned head, so each of those trails would verify as `signature missing` from then on. Their
 * heads are signed once, as `audit sign-heads` does (docs/storage.md#signing-existing-trails):
 * each trail verified whole first, a tampered one left as it is and named.
 */
import type { BlobStore } from "../../core/ports.ts";
import { type AuditKeyConfig, auditKeys } from "../../core/audit/signing-keys.ts";
import { type HeadSigningOutcome, signAuditHeads, SigningBegun, usersWithHeads } from "../../core/audit/sign-heads.ts";

const NAMED = 5;

/** Signs the unsigned heads of the intact trails in `audit` with the generated key; says what it did in start lines, never fails the start. */
export async function signEarlierTrails(audit: BlobStore, config: AuditKeyConfig, now: Date, log: (line: string) => void): Promise<void> {
  const advice = "run `forensic-annotation audit sign-heads` with serve stopped (audit verify --user UID says why a trail is not signed)";
  try {
    const users = await usersWithHeads(audit);
    if (users.length === 0) return;
    log(`signing  the audit heads of ${users.length} trail${users.length === 1 ? "" : "s"} begun without AUDIT_SIGNING_KEY, each verified first (once, as audit sign-heads does)`);
    const keys = auditKeys(config);
    const outcomes: HeadSigningOutcome[] = await signAuditHeads(audit, { signer: keys.signer!, publicKeys: await keys.publicKeys() }, now);
    const signed = outcomes.filter(({ outcome }) => outcome === "signed" || outcome === "already signed").length;
    const left = outcomes.filter(({ outcome }) => outcome === "tampered" || outcome === "changed" || outcome === "unverifiable");
    const names = left.slice(0, NAMED).map(({ userId, outcome }) => `${userId} (${outcome})`).join(", ") + (left.length > NAMED ? " and more" : "");
    log(`signed   ${signed} audit head${signed === 1 ? "" : "s"}${left.length === 0 ? "" : `; not signed: ${names}: ${advice}`}`);
  } catch (err) {
    // Heads signed by another key (a secrets.json lost, or a restore without it), or a store that failed: the service still starts.
    if (err instanceof SigningBegun) {
      log(`audit heads of earlier trails not signed: the store holds heads signed by another key (${err.users.slice(0, 3).join(", ")}...): a secrets.json lost or not restored? Stop serve and bring back the secrets.json that holds it, or put that key's public half in AUDIT_VERIFY_KEYS; until then audit verify finds those trails not intact`);
      return;
    }
    log(`audit heads of earlier trails not signed: signing failed: ${err instanceof Error ? err.message : String(err)}; ${advice}`);
  }
}
