/**
 * @module
 * The single-case CSV (EXCHANGE.md "CSV"): comment lines with the SHA-256 of the data block,
 * a blank line, then the data block of {@link caseTableRows}. Every field is double-quoted
 * with quotes doubled; lines end with `\n`; the file ends with the last row (no newline), so
 * the data block is everything after the first blank line.
 */
import { caseTableRows, type TableRow } from "./case-table.ts";
import { sha256Hex } from "./digest.ts";
import type { CaseExportData } from "./shapes.ts";

const quote = (field: string | number): string => `"${String(field).replaceAll('"', '""')}"`;

/** Rows as CSV lines: every field quoted, `\n` between lines. */
function csvLines(rows: readonly TableRow[]): string {
  return rows.map((row) => row.map(quote).join(",")).join("\n");
}

const HASH_PREFIX = "# SHA-256 Hash: ";

/** The CSV of a single-case export. */
export async function formatCaseCsv(data: CaseExportData): Promise<string> {
  const block = csvLines(caseTableRows(data));
  const hash = (await sha256Hex(block)).toUpperCase();
  return [
    `# Forensic Annotation Case Export - Generated: ${data.metadata.exportDate}`,
    `# Case: ${data.metadata.caseNumber}`,
    `# Total Files: ${data.metadata.totalFiles}`,
    `${HASH_PREFIX}${hash}`,
    "# Verification: Recalculate SHA-256 of data rows only",
    "",
    block,
  ].join("\n");
}

/** What {@link verifyCaseCsv} found. */
export interface CsvVerification {
  /** Whether the data block hashes to the hash in the comment lines. */
  valid: boolean;
  /** The hash the comment lines state (upper case), or null when there is none. */
  expected: string | null;
  /** The SHA-256 of the data block (upper case). */
  actual: string;
}

/** Recomputes the SHA-256 of a CSV export's data block and compares it with its comment line. */
export async function verifyCaseCsv(csv: string): Promise<CsvVerification> {
  const split = csv.indexOf("\n\n");
  const header = split === -1 ? csv : csv.slice(0, split);
  const block = split === -1 ? "" : csv.slice(split + 2);
  const line = header.split("\n").find((candidate) => candidate.startsWith(HASH_PREFIX));
  const expected = line === undefined ? null : line.slice(HASH_PREFIX.length).trim().toUpperCase();
  const actual = (await sha256Hex(block)).toUpperCase();
  return { valid: expected === actual, expected, actual };
}
