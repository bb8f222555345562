/**
 * @module
 * Record history of data keys (docs/storage.md#record-history).
 */
import * as z from "zod";
import { camelKeys, variable } from "./variables.ts";

/** The record history variables. */
export const HistorySection = z.object({
  DATA_HISTORY: variable(
    z.enum(["on", "off"]).default("on"),
    "`on` keeps every version of every data-worker key (each `PUT` and `DELETE` adds one, in a hash chain: `GET /data/{key}?history`); `off` writes as before, keeping none, and `serve` says so at start; a history already stored stays readable ([record history](docs/storage.md#record-history))",
    { usedBy: "data" },
  ),
  HISTORY_RETENTION_DAYS: variable(
    z.preprocess(
      (value) => (typeof value === "string" && /^\s*[0-9]+\s*$/.test(value) ? Number(value) : value),
      z.number({ error: "must be a whole number of days written in decimal digits" }).int().min(1, "must be at least 1").max(36_500, "must be at most 36500"),
    ).optional(),
    "unset keeps every version for ever; N days lets `forensic-annotation history prune` (or `POST /data/history/prune`) remove the bytes of versions written more than N days ago, never a key's newest version nor any version of a case on legal hold ([retention](docs/operations.md#history-retention))",
    { usedBy: "data" },
  ),
}).transform(camelKeys);

/** What {@link HistorySection} parses. */
export type HistoryConfig = z.output<typeof HistorySection>;
