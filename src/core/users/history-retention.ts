/**
 * @module
 * `HISTORY_RETENTION_DAYS` applied (docs/operations.md#history-retention): prunes the data
 * keys' histories, leaving whole every key under a case on legal hold, and writes one
 * `history-prune` entry per key pruned in its owner's trail. Used by `POST /data/history/prune`
 * and `forensic-annotation history prune`.
 */
import type { BlobStore, Clock } from "../ports.ts";
import { pruneHistories, type PruneSummary } from "../history/prune-history.ts";
import type { Actor, ServiceAuditLog, ServiceEvent } from "../audit/service-events.ts";
import type { LegalHoldStore } from "./legal-holds.ts";

/** What a retention run needs. */
export interface HistoryRetentionDeps {
  /** The data store (encrypted or not, as the service sees it). */
  data: BlobStore;
  /** The legal holds: a held case is never pruned. */
  holds: LegalHoldStore;
  /** Where the `history-prune` entries go. */
  log: ServiceAuditLog;
  /** The cut-off's clock. */
  clock: Clock;
  /** Who prunes (the admin key, or the operator's command). */
  actor: Actor;
  /** The request that asked for it, when there is one. */
  request?: ServiceEvent["request"];
}

/** Prunes versions older than `retentionDays` days; answers what was done. */
export async function pruneRetainedHistories(deps: HistoryRetentionDeps, retentionDays: number): Promise<PruneSummary> {
  // One read of a user's holds per run.
  const heldCases = new Map<string, Promise<Set<string>>>();
  const heldOf = (uid: string) => {
    let held = heldCases.get(uid);
    if (held === undefined) {
      held = deps.holds.list(uid).then((holds) => new Set(holds.map((hold) => hold.caseNumber)));
      heldCases.set(uid, held);
    }
    return held;
  };
  return await pruneHistories(deps.data, {
    clock: deps.clock,
    retentionDays,
    isHeld: async (key) => {
      const [uid, caseNumber, ...rest] = key.split("/");
      // Only keys in a case folder (`{uid}/{case}/...`) can be held.
      return rest.length > 0 && (await heldOf(uid!)).has(caseNumber!);
    },
    onPruned: async ({ key, versions }, cutoff) => {
      const [uid, caseNumber, ...rest] = key.split("/");
      await deps.log({
        userId: uid!,
        action: "history-prune",
        result: "success",
        actor: deps.actor,
        details: {
          fileName: key,
          ...(rest.length > 0 ? { caseNumber: caseNumber! } : {}),
          securityDetails: { prunedVersions: versions, retentionDays, cutoff },
        },
        ...(deps.request === undefined ? {} : { request: deps.request }),
      });
    },
  });
}
