/**
 * @module
 * A case export as rows (EXCHANGE.md "CSV (single case) and XLSX workbook"), laid out as the
 * v1.0 client lays them out so the same case hashes the same on either side: the title, the
 * metadata rows, the summary rows, `File Details`, the 37-column header and one row per box.
 * The CSV is these rows; each case sheet of the workbook holds them under its own title.
 * Numbers stay numbers until a format writes them.
 */
import type { CaseExportData, CaseExportFile, ExportProvenance } from "./shapes.ts";

/** One cell: text, a number, or empty. */
export type TableCell = string | number;
/** One row of cells. */
export type TableRow = TableCell[];

/** The header row of the file rows, 37 columns in EXCHANGE.md order. */
export const CASE_TABLE_HEADER: readonly string[] = Object.freeze([
  "File ID",
  "Original Filename",
  "Upload Date",
  "Has Annotations",
  "Left Case",
  "Right Case",
  "Left Item",
  "Right Item",
  "Case Font Color",
  "Class Type",
  "Custom Class",
  "Class Note",
  "Index Type",
  "Index Number",
  "Index Color",
  "Support Level",
  "Has Subclass",
  "Include Confirmation",
  "Confirmation Status",
  "Confirming Examiner Name",
  "Confirming Examiner Badge ID",
  "Confirming Examiner Email",
  "Confirming Examiner Company",
  "Confirmation ID",
  "Confirmation Timestamp",
  "Confirmation Date (ISO)",
  "Total Box Annotations",
  "Box ID",
  "Box X",
  "Box Y",
  "Box Width",
  "Box Height",
  "Box Color",
  "Box Label",
  "Box Timestamp",
  "Additional Notes",
  "Last Updated",
]);

/** Columns before the box columns (written on a file's first row only). */
const FILE_COLUMNS = 27;
/** Box columns. */
const BOX_COLUMNS = 8;

/** A value as cell text: absent is empty. */
export const text = (value: unknown): string => typeof value === "string" ? value : value === undefined || value === null ? "" : String(value);
const cell = (value: unknown): TableCell => typeof value === "number" ? value : text(value);
const yesNo = (value: unknown): string => value === true ? "Yes" : "No";
/** The client writes `N/A` for an empty or absent fact. */
export const orNotAvailable = (value: unknown): string => text(value) === "" ? "N/A" : text(value);
/** The client writes 0 for an absent count. */
export const countOf = (value: unknown): number => typeof value === "number" && Number.isFinite(value) ? value : 0;

/** The title row of the data block. */
export const CASE_TABLE_TITLE = "Case Export Report";
/** The label of the schema version row, as the v1.0 client words it. */
export const SCHEMA_VERSION_LABEL = "Striae Export Schema Version";

/** The rows saying who exported, when, and in which schema version (the case table and the workbook's Summary). */
export function provenanceRows(meta: ExportProvenance, schemaVersion: string = text(meta.exportSchemaVersion ?? meta.striaeExportSchemaVersion)): TableRow[] {
  return [
    ["Export Date", text(meta.exportDate)],
    ["Exported By (Email)", orNotAvailable(meta.exportedBy)],
    ["Exported By (UID)", orNotAvailable(meta.exportedByUid)],
    ["Exported By (Name)", orNotAvailable(meta.exportedByName)],
    ["Exported By (Company)", orNotAvailable(meta.exportedByCompany)],
    [SCHEMA_VERSION_LABEL, schemaVersion],
  ];
}

/** The summary rows after their `Summary` title (label, value); none when the export has no summary. */
function summaryRows(data: CaseExportData): TableRow[] {
  const summary = data.summary;
  if (summary === undefined) return [];
  return [
    ["Summary"],
    ["Files with Annotations", countOf(summary.filesWithAnnotations)],
    ["Files without Annotations", countOf(summary.filesWithoutAnnotations)],
    ["Total Box Annotations", countOf(summary.totalBoxAnnotations)],
    ["Files with Confirmations", countOf(summary.filesWithConfirmations)],
    ["Files with Confirmations Requested", countOf(summary.filesWithConfirmationsRequested)],
    ["Last Modified", orNotAvailable(summary.lastModified)],
    ["Earliest Annotation Date", orNotAvailable(summary.earliestAnnotationDate)],
    ["Latest Annotation Date", orNotAvailable(summary.latestAnnotationDate)],
    [""],
  ];
}

/**
 * The case facts between the title and `File Details`: the metadata rows, a blank row, then
 * `Summary`, its rows and a blank row (left out without a summary). The workbook's case
 * sheets hold these under their own title.
 */
export function caseFactsRows(data: CaseExportData): TableRow[] {
  const meta = data.metadata;
  return [
    ["Case Number", text(meta.caseNumber)],
    ["Case Created Date", text(meta.caseCreatedDate)],
    ...provenanceRows(meta),
    ["Total Files", cell(meta.totalFiles)],
    [""],
    ...summaryRows(data),
  ];
}

function confirmationStatus(file: CaseExportFile): string {
  const annotations = file.annotations;
  if (annotations?.confirmationData !== undefined && annotations.confirmationData !== null) return "Confirmed";
  return annotations?.includeConfirmation === true ? "Requested" : "Not Requested";
}

/** The rows of one file: one per box, or one with empty box columns. */
export function fileRows(file: CaseExportFile): TableRow[] {
  const a = file.annotations;
  const confirmation = a?.confirmationData;
  const boxes = Array.isArray(a?.boxAnnotations) ? a.boxAnnotations : [];
  const fileCells: TableRow = [
    text(file.fileData.id),
    text(file.fileData.originalFilename),
    text(file.fileData.uploadedAt),
    yesNo(file.hasAnnotations),
    text(a?.leftCase),
    text(a?.rightCase),
    text(a?.leftItem),
    text(a?.rightItem),
    text(a?.caseFontColor),
    text(a?.classType),
    text(a?.customClass),
    text(a?.classNote),
    text(a?.indexType),
    text(a?.indexNumber),
    text(a?.indexColor),
    text(a?.supportLevel),
    yesNo(a?.hasSubclass),
    yesNo(a?.includeConfirmation),
    confirmationStatus(file),
    text(confirmation?.fullName),
    text(confirmation?.badgeId),
    text(confirmation?.confirmedByEmail),
    text(confirmation?.confirmedByCompany),
    text(confirmation?.confirmationId),
    text(confirmation?.timestamp),
    text(confirmation?.confirmedAt),
    boxes.length,
  ];
  const lastCells: TableRow = [text(a?.additionalNotes), text(a?.updatedAt)];
  if (boxes.length === 0) return [[...fileCells, ...new Array<string>(BOX_COLUMNS).fill(""), ...lastCells]];
  return boxes.map((box, index) => [
    ...(index === 0 ? fileCells : new Array<string>(FILE_COLUMNS).fill("")),
    text(box.id),
    cell(box.x),
    cell(box.y),
    cell(box.width),
    cell(box.height),
    text(box.color),
    text(box.label),
    text(box.timestamp),
    ...(index === 0 ? lastCells : ["", ""]),
  ]);
}

/**
 * The data block, row for row as the v1.0 client writes it: `Case Export Report`, a blank
 * row, the case facts ({@link caseFactsRows}), `File Details`, the header row and the file rows.
 */
export function caseTableRows(data: CaseExportData): TableRow[] {
  return [
    [CASE_TABLE_TITLE],
    [""],
    ...caseFactsRows(data),
    ["File Details"],
    [...CASE_TABLE_HEADER],
    ...data.files.flatMap(fileRows),
  ];
}
