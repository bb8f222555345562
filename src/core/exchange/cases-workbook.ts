/**
 * @module
 * The bulk XLSX (EXCHANGE.md "XLSX"), cell for cell as the v1.0 client lays it out: sheet
 * `Summary` (title and warning rows, export facts, totals, then one row per case), then per
 * case a sheet `Case_{caseNumber}` holding that case's facts, `File Details`, the header and
 * the file rows under its own title and warning rows, or for a case that failed to export a
 * sheet `Case_{caseNumber}_Error`. Protected (the default, as there) sheets are locked for
 * editing; numbers are numeric cells.
 */
import { caseFactsRows, CASE_TABLE_HEADER, countOf, fileRows, orNotAvailable, provenanceRows, type TableRow, text } from "./case-table.ts";
import type { AllCasesExportData, CaseExportData } from "./shapes.ts";
import { sheetNames, type WorkbookSheet, writeWorkbook } from "./xlsx.ts";

/** The header of the per-case table of the Summary sheet. */
export const SUMMARY_CASE_HEADER: readonly string[] = Object.freeze([
  "Case Number",
  "Case Created Date",
  "Export Status",
  "Export Date",
  "Exported By (Email)",
  "Exported By (UID)",
  "Exported By (Name)",
  "Exported By (Company)",
  "Schema Version",
  "Total Files",
  "Files with Annotations",
  "Files without Annotations",
  "Total Box Annotations",
  "Files with Confirmations",
  "Files with Confirmations Requested",
  "Last Modified",
  "Earliest Annotation Date",
  "Latest Annotation Date",
  "Export Error",
]);

/** How the workbook is written. */
export interface WorkbookOptions {
  /** Protected title and warning rows and sheets locked for editing, as the client's default (default true). */
  protect?: boolean | undefined;
}

const failed = (caseData: CaseExportData): boolean => caseData.summary?.exportError !== undefined;
const schemaOf = (caseData: CaseExportData): string => text(caseData.metadata.exportSchemaVersion ?? caseData.metadata.striaeExportSchemaVersion);

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
    ...data.cases.map((caseData): TableRow => {
      const m = caseData.metadata;
      const s = caseData.summary;
      return [
        text(m.caseNumber),
        text(m.caseCreatedDate),
        failed(caseData) ? "Failed" : "Success",
        text(m.exportDate),
        orNotAvailable(m.exportedBy),
        orNotAvailable(m.exportedByUid),
        orNotAvailable(m.exportedByName),
        orNotAvailable(m.exportedByCompany),
        schemaOf(caseData),
        countOf(m.totalFiles),
        countOf(s?.filesWithAnnotations),
        countOf(s?.filesWithoutAnnotations),
        countOf(s?.totalBoxAnnotations),
        countOf(s?.filesWithConfirmations),
        countOf(s?.filesWithConfirmationsRequested),
        text(s?.lastModified),
        text(s?.earliestAnnotationDate),
        text(s?.latestAnnotationDate),
        text(s?.exportError),
      ];
    }),
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
