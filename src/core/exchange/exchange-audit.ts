/**
 * @module
 * Audit entries of exports, imports and confirmations (docs/api.md#entry-shape actions case-export,
 * case-import, confirmation-*). An entry that cannot be written does not undo the work it
 * records: the failure is returned as a warning.
 */
import { messageOf } from "./exchange-error.ts";
import type { ExchangeAuditEntry, ExchangeStore } from "./sources.ts";

/** What one audit entry records. */
export interface ExchangeAuditFacts {
  /** The acting user. */
  userUid: string;
  /** Their email, when known. */
  userEmail?: string | null | undefined;
  /** The action. */
  action: ExchangeAuditEntry["action"];
  /** How it ended. */
  result: ExchangeAuditEntry["result"];
  /** Details beyond the common ones. */
  details: Omit<ExchangeAuditEntry["details"], "validationErrors" | "workflowPhase" | "performanceMetrics"> & {
    validationErrors?: string[] | undefined;
  };
  /** When the work started (for processingTimeMs). */
  startedAt: Date;
  /** Bytes exported or imported. */
  bytes: number;
}

const PHASE: Record<ExchangeAuditEntry["action"], ExchangeAuditEntry["details"]["workflowPhase"]> = {
  "case-export": "case-export",
  "case-import": "case-import",
  "confirmation-create": "confirmation",
  "confirmation-export": "confirmation",
  "confirmation-import": "confirmation",
};

/** Appends the entry; answers a warning when it could not be written, else null. */
export async function recordAudit(store: ExchangeStore, facts: ExchangeAuditFacts): Promise<string | null> {
  const now = store.now();
  const { validationErrors, ...details } = facts.details;
  const entry: ExchangeAuditEntry = {
    timestamp: now.toISOString(),
    userId: facts.userUid,
    userEmail: facts.userEmail ?? "",
    action: facts.action,
    result: facts.result,
    details: {
      ...details,
      validationErrors: (validationErrors ?? []).map((error) => error.slice(0, 10_000)).slice(0, 1000),
      workflowPhase: PHASE[facts.action],
      performanceMetrics: { processingTimeMs: Math.max(0, now.getTime() - facts.startedAt.getTime()), fileSizeBytes: facts.bytes },
    },
  };
  try {
    await store.appendAudit(facts.userUid, entry);
    return null;
  } catch (err) {
    return `The audit entry could not be written: ${messageOf(err)}`;
  }
}

/**
 * Runs `work` and appends its audit entry: `success` with `details` plus what `outcome` reports
 * of the result, or `failure` with `details` and the error's message, which is then rethrown.
 */
export async function audited<T>(
  store: ExchangeStore,
  facts: Omit<ExchangeAuditFacts, "result" | "bytes">,
  work: () => Promise<T>,
  outcome: (value: T) => { details?: ExchangeAuditFacts["details"]; bytes: number },
): Promise<T> {
  try {
    const value = await work();
    const { details, bytes } = outcome(value);
    await recordAudit(store, { ...facts, result: "success", details: { ...facts.details, ...details }, bytes });
    return value;
  } catch (err) {
    await recordAudit(store, { ...facts, result: "failure", details: { ...facts.details, validationErrors: [messageOf(err)] }, bytes: 0 });
    throw err;
  }
}
