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
 *
 * Where no command reaches the store (R2 behind a Cloudflare worker), {@link signAuditHeads} signs
 * the heads of trails begun before `AUDIT_SIGNING_KEY`, as `forensic-annotation audit sign-heads`:
 *
 * ```ts
 * import { auditKeys, signAuditHeads } from "@forensic-annotation/service/audit";
 * import { createR2BlobStore } from "@forensic-annotation/service/cloudflare";
 * const keys = auditKeys({ auditSigningKey: env.AUDIT_SIGNING_KEY, auditVerifyKeys: env.AUDIT_VERIFY_KEYS });
 * const audit = createR2BlobStore(env.STRIAE_AUDIT, { arrayBlocks: {} });
 * const outcomes = await signAuditHeads(audit, { signer: keys.signer!, publicKeys: await keys.publicKeys() }, new Date());
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
export { type AuditChainOptions, type ChainedEntry, HEAD_FORMAT, type HeadFacts, type HeadSigner, type HeadSigning, type SyncSha256 } from "./chain.ts";
export { type HeadSigningOutcome, signAuditHead, signAuditHeads, SigningBegun, usersWithHeads } from "./sign-heads.ts";
export { type AuditKeyConfig, type AuditKeys, auditKeys, checkAuditKeys } from "./signing-keys.ts";
export type { AuditJwk, HeadSignatureStatus } from "./head-signature.ts";
export { AUDIT_EXPORT_FORMAT, type AuditExport } from "./export.ts";
