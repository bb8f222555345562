/**
 * @module
 * What the service tells its operator: request logs and metrics (docs/operations.md).
 */
import * as z from "zod";
import { camelKeys, text, variable } from "./variables.ts";

/** The request log and metrics variables. */
export const OperationsSection = z.object({
  LOG_LEVEL: variable(
    z.enum(["debug", "info", "warn", "error", "off"]).default("info"),
    "the least level logged: `info` one line per request, `warn` refusals that wrote a `security-violation` entry, `error` answers of 5xx with their cause; `off` logs nothing ([logs](docs/operations.md#logs))",
    { usedBy: "all" },
  ),
  LOG_FORMAT: variable(
    z.enum(["json", "text"]).optional(),
    "`json` (one object a line) or `text` (a readable line) for the request log",
    { usedBy: "all", defaultText: "`json` when standard output is not a terminal, else `text`" },
  ),
  METRICS_TOKEN: variable(
    text(),
    "turns on `GET /metrics` (Prometheus text), which then needs `Authorization: Bearer` with this token ([metrics](docs/operations.md#metrics)); never returned by the keys worker",
    { usedBy: "service", defaultText: "unset (`/metrics` off)", typeText: "secret" },
  ),
}).transform(camelKeys);

/** What {@link OperationsSection} parses. */
export type OperationsConfig = z.output<typeof OperationsSection>;
