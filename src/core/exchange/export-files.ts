/**
 * @module
 * The exports as files, each with its `case-export` audit entry: a case as JSON or CSV, every
 * case as JSON or an XLSX workbook. (The ZIP export, streamed, is in `zip-export.ts`.)
 */
import { collectAllCasesExport, collectCaseExport, type CaseExportOptions, formatExportJson } from "./case-export.ts";
import { formatAllCasesXlsx } from "./formats/cases-workbook.ts";
import { formatCaseCsv } from "./formats/csv.ts";
import { audited } from "./exchange-audit.ts";
import type { AllCasesExportData, CaseExportData } from "./shapes.ts";
import type { ExchangeStore } from "./sources.ts";

/** An export ready to be saved. */
export interface ExportedFile<T> {
  /** A file name for it, e.g. `CASE-1-export.json`. */
  fileName: string;
  /** Its media type. */
  contentType: string;
  /** Its bytes. */
  bytes: Uint8Array<ArrayBuffer>;
  /** The export it was made from. */
  data: T;
}

/** How an export is saved: inside its audited work, so a file that could not be written is recorded as a failure. */
export interface ExportSaving<T> {
  /**
   * Saves the file (a command writes it to disk) before the `case-export` entry is written;
   * answers the name it was saved under, which the entry records. A throw makes the export fail.
   */
  save?: ((file: ExportedFile<T>) => Promise<string>) | undefined;
}

const encoder = new TextEncoder();
const day = (iso: string): string => iso.slice(0, 10).replaceAll("-", "");

/** Makes the file under its `case-export` audit entry. */
async function auditedExport<T>(
  store: ExchangeStore,
  userUid: string,
  caseNumber: string,
  fileType: string,
  save: ExportSaving<T>["save"],
  make: () => Promise<ExportedFile<T>>,
): Promise<ExportedFile<T>> {
  const facts = { userUid, action: "case-export" as const, details: { caseNumber, fileType }, startedAt: store.now() };
  const made = async () => {
    const file = await make();
    return save === undefined ? file : { ...file, fileName: await save(file) };
  };
  return await audited(store, facts, made, (file) => ({ details: { fileName: file.fileName }, bytes: file.bytes.length }));
}

/**
 * A case as a JSON or CSV file (docs/exchange.md#single-case-json, "CSV").
 *
 * @throws {ExchangeError} NOT_FOUND when the case does not exist.
 */
export function exportCase(
  store: ExchangeStore,
  userUid: string,
  caseNumber: string,
  format: "json" | "csv",
  options: CaseExportOptions & ExportSaving<CaseExportData> = {},
): Promise<ExportedFile<CaseExportData>> {
  return auditedExport(store, userUid, caseNumber, format, options.save, async () => {
    const data = await collectCaseExport(store, userUid, caseNumber, options);
    const text = format === "csv" ? await formatCaseCsv(data, { protect: options.protect }) : formatExportJson(data);
    return {
      fileName: `${data.metadata.caseNumber}-export-${day(data.metadata.exportDate)}.${format}`,
      contentType: format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
      bytes: encoder.encode(text),
      data,
    };
  });
}

/**
 * Every case of a user as one JSON file or an XLSX workbook (docs/exchange.md#bulk-json, "XLSX").
 *
 * @throws {ExchangeError} NOT_FOUND when the user does not exist.
 */
export function exportAllCases(
  store: ExchangeStore,
  userUid: string,
  format: "json" | "xlsx",
  options: CaseExportOptions & ExportSaving<AllCasesExportData> & { onCase?: ((done: number, total: number, caseNumber: string) => void) | undefined } = {},
): Promise<ExportedFile<AllCasesExportData>> {
  return auditedExport(store, userUid, "all-cases", format, options.save, async () => {
    const data = await collectAllCasesExport(store, userUid, options);
    return {
      fileName: `all-cases-export-${day(data.metadata.exportDate)}.${format}`,
      contentType: format === "xlsx" ? "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" : "application/json; charset=utf-8",
      bytes: format === "xlsx" ? formatAllCasesXlsx(data, { protect: options.protect }) : encoder.encode(formatExportJson(data)),
      data,
    };
  });
}
