/**
 * @module
 * The bulk XLSX (docs/exchange.md "XLSX"), cell for cell as the v1.0 client lays it out: sheet
 * `Summary` (title and warning rows, export facts, totals, then one row per case), then per
 * case a sheet `Case_{caseNumber}` holding that case's facts, `File Details`, the header and
 * the file rows under its own title and warning rows, or for a case that failed to export a
 * sheet `Case_{caseNumber}_Error`. Protected (the default, as there) sheets are locked for
 * editing; numbers are numeric cells.
 */
import { caseFactsRows, CASE_TABLE_HEADER, fileRows, provenanceRows } from "./case-table.ts";
import { type Column, countOf, headerRow, orNotAvailable, type TableRow, text, valueRow } from "./columns.ts";
import type { AllCasesExportData, CaseExportData } from "../shapes.ts";
import { sheetNames, type WorkbookSheet, writeWorkbook } from "./xlsx.ts";

const failed = (caseData: CaseExportData): boolean => caseData.summary?.exportError !== undefined;
const schemaOf = (caseData: CaseExportData): string => text(caseData.metadata.exportSchemaVersion ?? caseData.metadata.striaeExportSchemaVersion);

/** The columns of the per-case table of the Summary sheet: one row per case. */
const SUMMARY_CASE_COLUMNS: readonly Column<CaseExportData>[] = Object.freeze([
  { header: "Case Number", value: (c) => text(c.metadata.caseNumber) },
  { header: "Case Created Date", value: (c) => text(c.metadata.caseCreatedDate) },
  { header: "Export Status", value: (c) => failed(c) ? "Failed" : "Success" },
  { header: "Export Date", value: (c) => text(c.metadata.exportDate) },
  { header: "Exported By (Email)", value: (c) => orNotAvailable(c.metadata.exportedBy) },
  { header: "Exported By (UID)", value: (c) => orNotAvailable(c.metadata.exportedByUid) },
  { header: "Exported By (Name)", value: (c) => orNotAvailable(c.metadata.exportedByName) },
  { header: "Exported By (Company)", value: (c) => orNotAvailable(c.metadata.exportedByCompany) },
  { header: "Schema Version", value: schemaOf },
  { header: "Total Files", value: (c) => countOf(c.metadata.totalFiles) },
  { header: "Files with Annotations", value: (c) => countOf(c.summary?.filesWithAnnotations) },
  { header: "Files without Annotations", value: (c) => countOf(c.summary?.filesWithoutAnnotations) },
  { header: "Total Box Annotations", value: (c) => countOf(c.summary?.totalBoxAnnotations) },
  { header: "Files with Confirmations", value: (c) => countOf(c.summary?.filesWithConfirmations) },
  { header: "Files with Confirmations Requested", value: (c) => countOf(c.summary?.filesWithConfirmationsRequested) },
  { header: "Last Modified", value: (c) => text(c.summary?.lastModified) },
  { header: "Earliest Annotation Date", value: (c) => text(c.summary?.earliestAnnotationDate) },
  { header: "Latest Annotation Date", value: (c) => text(c.summary?.latestAnnotationDate) },
  { header: "Export Error", value: (c) => text(c.summary?.exportError) },
]);

/** The header of the per-case table of the Summary sheet. */
export const SUMMARY_CASE_HEADER: readonly string[] = Object.freeze(headerRow(SUMMARY_CASE_COLUMNS));

/** How the workbook is written. */
export interface WorkbookOptions {
  /** Protected title and warning rows and sheets locked for editing, as the client's default (default true). */
  protect?: boolean | undefined;
}

function summaryRows(data: AllCasesExportData, protect: boolean): TableRow[] {
  const meta = data.metadata;
  return [
    [protect ? "CASE DATA - PROTECTED EXPORT" : "Forensic Annotation - All Cases Export Summary"],
    [protect ? "WARNING: This workbook contains evidence data and is protected from editing." : ""],
    [""],
    ...provenanceRows(meta, "1.0"),
    ["Total Cases", data.cases.length],
    ["Successful Exports", data.cases.filter((caseData) => !failed(caseData)).length],
    ["Failed Exports", data.cases.filter(failed).length],
    ["Total Files (All Cases)", countOf(meta.totalFiles)],
    ["Total Annotations (All Cases)", countOf(meta.totalAnnotations)],
    ["Total Confirmations (All Cases)", countOf(meta.totalConfirmations)],
    ["Total Confirmations Requested (All Cases)", countOf(meta.totalConfirmationsRequested)],
    [""],
    ["Case Details"],
    [...SUMMARY_CASE_HEADER],
    ...data.cases.map((caseData) => valueRow(SUMMARY_CASE_COLUMNS, caseData)),
  ];
}

/** The rows of a case sheet: title and warning rows, the case facts, `File Details`, the header and the file rows. */
export function caseSheetRows(caseData: CaseExportData, protect: boolean): TableRow[] {
  const caseNumber = text(caseData.metadata.caseNumber);
  if (failed(caseData)) {
    return [
      [`Case ${caseNumber} - Export Failed`],
      [""],
      ["Error:", text(caseData.summary?.exportError)],
      ["Case Number:", caseNumber],
      ["Total Files:", countOf(caseData.metadata.totalFiles)],
    ];
  }
  return [
    [protect ? `CASE DATA - ${caseNumber} - PROTECTED` : `Case ${caseNumber} - Detailed Export`],
    [protect ? "WARNING: This worksheet is protected to maintain data integrity." : ""],
    [""],
    ...caseFactsRows(caseData),
    [""],
    ["File Details"],
    [...CASE_TABLE_HEADER],
    ...(caseData.files.length > 0 ? caseData.files.flatMap(fileRows) : [["No detailed file data available for this case"]]),
  ];
}

/** The sheets of the workbook: Summary first, then one per case. */
export function casesWorkbookSheets(data: AllCasesExportData, options: WorkbookOptions = {}): WorkbookSheet[] {
  const protect = options.protect !== false;
  const names = sheetNames([
    "Summary",
    ...data.cases.map((caseData) => `Case_${text(caseData.metadata.caseNumber)}${failed(caseData) ? "_Error" : ""}`),
  ]);
  const summary = summaryRows(data, protect);
  const sheets: WorkbookSheet[] = [{
    name: names[0]!,
    rows: summary,
    boldRows: [0, summary.length - data.cases.length - 2, summary.length - data.cases.length - 1],
    protect,
  }];
  data.cases.forEach((caseData, i) => {
    const rows = caseSheetRows(caseData, protect);
    sheets.push({ name: names[i + 1]!, rows, boldRows: [0, rows.findIndex((row) => row[0] === CASE_TABLE_HEADER[0])].filter((r) => r >= 0), protect });
  });
  return sheets;
}

/** The `.xlsx` bytes of a bulk export. */
export function formatAllCasesXlsx(data: AllCasesExportData, options: WorkbookOptions = {}): Uint8Array<ArrayBuffer> {
  const created = new Date(data.metadata.exportDate);
  return writeWorkbook(casesWorkbookSheets(data, options), {
    title: "All Cases Export",
    creator: text(data.metadata.exportedBy ?? data.metadata.exportedByUid),
    created: Number.isNaN(created.getTime()) ? new Date() : created,
  });
}
