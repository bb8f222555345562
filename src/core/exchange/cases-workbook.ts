/**
 * @module
 * The bulk XLSX (EXCHANGE.md "XLSX"): sheet `Summary` (export facts, totals, then one row
 * per case), then one sheet `Case_{caseNumber}` per case holding the same rows as that
 * case's CSV data block.
 */
import { caseTableRows, CASE_TABLE_HEADER, provenanceRows, type TableRow, text } from "./case-table.ts";
import type { AllCasesExportData } from "./shapes.ts";
import { sheetNames, type WorkbookSheet, writeWorkbook } from "./xlsx.ts";

/** The header of the per-case table of the Summary sheet. */
export const SUMMARY_CASE_HEADER: readonly string[] = Object.freeze([
  "Case Number",
  "Sheet",
  "Case Created Date",
  "Export Status",
  "Export Date",
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

/** The sheets of the workbook: Summary first, then one per case. */
export function casesWorkbookSheets(data: AllCasesExportData): WorkbookSheet[] {
  const names = sheetNames(["Summary", ...data.cases.map((caseData) => `Case_${caseData.metadata.caseNumber}`)]);
  const meta = data.metadata;
  const summary = data.summary;
  const facts: TableRow[] = [
    ["All Cases Export"],
    [""],
    ...provenanceRows(meta),
    ["Total Cases", meta.totalCases],
    ["Successful Exports", data.cases.filter((caseData) => caseData.summary?.exportError === undefined).length],
    ["Failed Exports", data.cases.filter((caseData) => caseData.summary?.exportError !== undefined).length],
    ["Total Files", meta.totalFiles],
    ["Total Annotations", meta.totalAnnotations],
    ["Total Confirmations", meta.totalConfirmations ?? 0],
    ["Total Confirmations Requested", meta.totalConfirmationsRequested ?? 0],
    ...(summary === undefined ? [] : [
      ["Cases with Files", summary.casesWithFiles],
      ["Cases with Annotations", summary.casesWithAnnotations],
      ["Cases without Files", summary.casesWithoutFiles],
      ["Last Modified", text(summary.lastModified)],
      ["Earliest Annotation Date", text(summary.earliestAnnotationDate)],
      ["Latest Annotation Date", text(summary.latestAnnotationDate)],
    ] satisfies TableRow[]),
    [""],
    ["Case Details"],
  ];
  const tableStart = facts.length;
  const caseRows: TableRow[] = data.cases.map((caseData, i) => {
    const s = caseData.summary;
    return [
      text(caseData.metadata.caseNumber),
      names[i + 1]!,
      text(caseData.metadata.caseCreatedDate),
      s?.exportError === undefined ? "Success" : "Failed",
      text(caseData.metadata.exportDate),
      caseData.metadata.totalFiles,
      s?.filesWithAnnotations ?? "",
      s?.filesWithoutAnnotations ?? "",
      s?.totalBoxAnnotations ?? "",
      s?.filesWithConfirmations ?? "",
      s?.filesWithConfirmationsRequested ?? "",
      text(s?.lastModified),
      text(s?.earliestAnnotationDate),
      text(s?.latestAnnotationDate),
      text(s?.exportError),
    ];
  });
  const sheets: WorkbookSheet[] = [{
    name: names[0]!,
    rows: [...facts, [...SUMMARY_CASE_HEADER], ...caseRows],
    boldRows: [0, tableStart - 1, tableStart],
  }];
  data.cases.forEach((caseData, i) => {
    const rows = caseTableRows(caseData);
    sheets.push({ name: names[i + 1]!, rows, boldRows: [rows.findIndex((row) => row[0] === CASE_TABLE_HEADER[0])] });
  });
  return sheets;
}

/** The `.xlsx` bytes of a bulk export. */
export function formatAllCasesXlsx(data: AllCasesExportData): Uint8Array<ArrayBuffer> {
  const created = new Date(data.metadata.exportDate);
  return writeWorkbook(casesWorkbookSheets(data), {
    title: "All Cases Export",
    creator: text(data.metadata.exportedBy ?? data.metadata.exportedByUid),
    created: Number.isNaN(created.getTime()) ? new Date() : created,
  });
}
