/**
 * @module
 * The largest bodies the data and audit endpoints store.
 */
import * as z from "zod";
import { camelKeys, positiveInt, variable } from "./variables.ts";

/** The body-size variables. */
export const BodyLimitsSection = z.object({
  MAX_JSON_BYTES: variable(positiveInt(10 * 1024 * 1024), "largest stored data document, in bytes (413 beyond)", {
    usedBy: "data",
    defaultText: "`10485760` (10 MiB)",
  }),
  MAX_AUDIT_ENTRY_BYTES: variable(positiveInt(64 * 1024), "largest audit entry, in bytes (413 beyond)", {
    usedBy: "data, audit",
    defaultText: "`65536` (64 KiB)",
  }),
  MAX_AUDIT_DAY_BYTES: variable(
    // At most 256 MiB: a reader must hold a day as one string (V8's longest is about 512 MiB).
    positiveInt(64 * 1024 * 1024, 256 * 1024 * 1024),
    "the most bytes one UTC day of a user's audit trail takes, at most 268435456 (256 MiB); a client's append past it is refused (429 until the next UTC day) and recorded once as a `security-violation`; the service's own entries, which record what was already done, are never refused ([audit days](docs/storage.md#audit-day-size))",
    { usedBy: "data, audit", defaultText: "`67108864` (64 MiB)" },
  ),
}).transform(camelKeys);

/** What {@link BodyLimitsSection} parses. */
export type BodyLimitsConfig = z.output<typeof BodyLimitsSection>;
