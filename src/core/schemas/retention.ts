/**
 * @module
 * The answer of `POST /data/history/prune` (docs/operations.md#history-retention).
 */
import * as z from "zod";

/** What a prune did. */
export const PruneResultSchema = z.object({
  retentionDays: z.number().int().describe("`HISTORY_RETENTION_DAYS`"),
  cutoff: z.string().describe("Versions written before this time (ISO 8601) were pruned, a key's newest version never"),
  histories: z.number().int().describe("Histories examined"),
  pruned: z.array(z.object({ key: z.string(), versions: z.array(z.number().int()) })).describe("Each key pruned now, with the versions whose bytes were removed"),
  held: z.array(z.string()).describe("Keys left whole because their case is on legal hold"),
}).meta({ id: "HistoryPruneResult" });
