/**
 * @module
 * Audit exports a reviewer checks offline (docs/storage.md#audit-export): JSON holds the days as
 * stored and the signed head, so {@link verifyAuditTrail} re-checks it without the service;
 * CSV is one row per entry with its seq and hash.
 */
import type { AuditTrailInput, AuditVerification } from "./verify.ts";
import { csvCell } from "../encoding/csv-cell.ts";

/** Marks an audit export. */
export const AUDIT_EXPORT_FORMAT = "forensic-annotation/audit-export@1";

/** The JSON export: an {@link AuditTrailInput} (pass it to `verifyAuditTrail` as it is) and the verdict when exported. */
export interface AuditExport extends AuditTrailInput {
  /** {@link AUDIT_EXPORT_FORMAT}. */
  format: typeof AUDIT_EXPORT_FORMAT;
  /** When the export was made (the service's clock). */
  exportedAt: string;
  /** The verdict when it was exported. */
  verification: AuditVerification;
}

/** The JSON export of a trail read for `verification`. */
export function auditExportJson(input: AuditTrailInput, verification: AuditVerification, exportedAt: Date): AuditExport {
  return { format: AUDIT_EXPORT_FORMAT, exportedAt: exportedAt.toISOString(), ...input, verification };
}

const CSV_COLUMNS = ["seq", "date", "index", "timestamp", "receivedAt", "userId", "userEmail", "action", "result", "prevHash", "hash", "details"] as const;

const cell = (value: unknown): string => value === undefined || value === null ? "" : typeof value === "string" ? value : JSON.stringify(value);

/** The CSV export: a header, then one row per stored entry in order (unchained ones with empty seq and hash). */
export function auditExportCsv(input: AuditTrailInput): string {
  const rows = [CSV_COLUMNS.map(csvCell).join(",")];
  for (const day of input.days) {
    day.entries.forEach((item, index) => {
      const entry = item !== null && typeof item === "object" ? item as Record<string, unknown> : { details: item };
      const values: Record<(typeof CSV_COLUMNS)[number], unknown> = {
        seq: entry.seq,
        date: day.date,
        index: String(index),
        timestamp: entry.timestamp,
        receivedAt: entry.receivedAt,
        userId: entry.userId,
        userEmail: entry.userEmail,
        action: entry.action,
        result: entry.result,
        prevHash: entry.prevHash,
        hash: entry.hash,
        details: entry.details,
      };
      rows.push(CSV_COLUMNS.map((column) => csvCell(cell(values[column]))).join(","));
    });
  }
  return `${rows.join("\n")}\n`;
}
