/**
 * @module
 * The single-case CSV (docs/exchange.md "CSV"), as the v1.0 client writes it: when protected (the
 * default, as there) the `CASE DATA WARNING` line and a blank line; comment lines with the
 * SHA-256 of the data block and a blank line; then the data block of {@link caseTableRows}.
 * Every field is double-quoted with quotes doubled, text a spreadsheet would run as a formula
 * marked with `'` (`encoding/csv-cell.ts`); lines end with `\n`; the file ends with
 * the last row (no newline), so the data block is everything after the first blank line once
 * the warning is taken off.
 */
import { caseTableRows } from "./case-table.ts";
import type { TableRow } from "./columns.ts";
import { sha256Hex } from "../../encoding/digest.ts";
import { csvCell, csvCellText } from "../../encoding/csv-cell.ts";
import type { CaseExportData } from "../shapes.ts";
import { CSV_WARNING_LINE, stripWarningBlock } from "./warning-block.ts";

/** Rows as CSV lines: every field quoted (text a spreadsheet would run as a formula neutralised), `\n` between lines. */
function csvLines(rows: readonly TableRow[]): string {
  return rows.map((row) => row.map(csvCell).join(",")).join("\n");
}

const HASH_PREFIX = "# SHA-256 Hash: ";

/** How a CSV is written. */
export interface CaseCsvOptions {
  /** Start with the evidence warning line and a blank line, as the client does by default (default true). */
  protect?: boolean | undefined;
}

/** The CSV of a single-case export. */
export async function formatCaseCsv(data: CaseExportData, options: CaseCsvOptions = {}): Promise<string> {
  const block = csvLines(caseTableRows(data));
  const hash = (await sha256Hex(block)).toUpperCase();
  const csv = [
    `# Forensic Annotation Case Export - Generated: ${data.metadata.exportDate}`,
    `# Case: ${data.metadata.caseNumber}`,
    `# Total Files: ${data.metadata.totalFiles}`,
    `${HASH_PREFIX}${hash}`,
    "# Verification: Recalculate SHA-256 of data rows only (excluding these comment lines)",
    "",
    block,
  ].join("\n");
  return options.protect === false ? csv : `${CSV_WARNING_LINE}\n\n${csv}`;
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

/**
 * Recomputes the SHA-256 of a CSV export's data block and compares it with its comment line.
 * A protected CSV's warning line is taken off first, as the client does; the data block is
 * what follows the first blank line after that.
 */
export async function verifyCaseCsv(csv: string): Promise<CsvVerification> {
  const unwarned = stripWarningBlock(csv);
  const split = unwarned.indexOf("\n\n");
  const header = split === -1 ? unwarned : unwarned.slice(0, split);
  const block = split === -1 ? "" : unwarned.slice(split + 2);
  const line = header.split("\n").find((candidate) => candidate.startsWith(HASH_PREFIX));
  const expected = line === undefined ? null : line.slice(HASH_PREFIX.length).trim().toUpperCase();
  const actual = (await sha256Hex(block)).toUpperCase();
  return { valid: expected === actual, expected, actual };
}

/** RFC 4180 rows: quoted fields with doubled quotes (newlines inside quotes kept), bare fields as they are. */
function parseCsvRows(block: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < block.length; i++) {
    const char = block[i]!;
    if (quoted) {
      if (char !== '"') field += char;
      else if (block[i + 1] === '"') (field += '"'), i++;
      else quoted = false;
    } else if (char === '"') quoted = true;
    else if (char === ",") row.push(field), (field = "");
    else if (char === "\n") row.push(field), rows.push(row), (row = []), (field = "");
    else if (char !== "\r") field += char;
  }
  if (field !== "" || row.length > 0) row.push(field), rows.push(row);
  return rows;
}

/** What a case CSV says about its case, read from its data block. */
export interface CaseCsvFacts {
  /** The hash check of {@link verifyCaseCsv}. */
  verification: CsvVerification;
  /** `Case Number`, or "" when absent. */
  caseNumber: string;
  /** `Export Date`, or "". */
  exportDate: string;
  /** `Exported By (Email)`, or null when absent or `N/A`. */
  exportedBy: string | null;
  /** The files listed under `File Details`. */
  fileCount: number;
  /** Of those, the ones with `Has Annotations` `Yes`. */
  annotatedCount: number;
}

/** Reads a case CSV (protected or not): its hash check and the facts of its data block. */
export async function readCaseCsv(csv: string): Promise<CaseCsvFacts> {
  const verification = await verifyCaseCsv(csv);
  const unwarned = stripWarningBlock(csv);
  const split = unwarned.indexOf("\n\n");
  const rows = split === -1 ? [] : parseCsvRows(unwarned.slice(split + 2)).map((row) => row.map(csvCellText));
  const value = (label: string): string => rows.find((row) => row[0] === label)?.[1] ?? "";
  const header = rows.findIndex((row) => row[0] === "File ID");
  const fileRows = header === -1 ? [] : rows.slice(header + 1).filter((row) => row[0] !== undefined && row[0] !== "");
  const email = value("Exported By (Email)");
  return {
    verification,
    caseNumber: value("Case Number"),
    exportDate: value("Export Date"),
    exportedBy: email === "" || email === "N/A" ? null : email,
    fileCount: fileRows.length,
    annotatedCount: fileRows.filter((row) => row[3] === "Yes").length,
  };
}
