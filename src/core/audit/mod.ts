/**
 * @module
 * The audit trail's hash chain, for reviewers and tools (docs/storage.md#audit-chain):
 * {@link verifyAuditTrail} checks a trail read from a store or from a JSON export, in any
 * runtime or a browser, and the types of what it reads and answers.
 *
 * ```ts
 * import { verifyAuditTrail } from "@forensic-annotation/service/audit";
 * const exported = await (await fetch("/exports/audit-u1.json")).json(); // an `audit export --format json` file
 * const result = await verifyAuditTrail(exported, { publicKeys: [publicJwk], requireSignature: true });
 * console.log(result.valid, result.firstBad);
 * ```
 */
export {
  type AuditDayVerification,
  type AuditHeadVerification,
  type AuditTamperReason,
  type AuditTrailDay,
  type AuditTrailInput,
  type AuditVerification,
  verifyAuditTrail,
  type VerifyAuditOptions,
} from "./verify.ts";
export type { AuditChainOptions, HeadSigner, SyncSha256 } from "./chain.ts";
export type { AuditJwk, HeadSignatureStatus } from "./head-signature.ts";
export { AUDIT_EXPORT_FORMAT, type AuditExport } from "./export.ts";
