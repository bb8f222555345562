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
}).transform(camelKeys);

/** What {@link HistorySection} parses. */
export type HistoryConfig = z.output<typeof HistorySection>;
