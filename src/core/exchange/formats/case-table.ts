/**
 * @module
 * A case export as rows (docs/exchange.md "Data block" and "File rows"), laid out as the v1.0
 * client lays them out so the same case hashes the same on either side: the title, the
 * metadata rows, the summary rows, `File Details`, the 37-column header and one row per box.
 * The header and the file rows come from one column table. The CSV is these rows; each case
 * sheet of the workbook holds them under its own title. Numbers stay numbers until a format
 * writes them.
 */
import { cell, type Column, countOf, headerRow, orNotAvailable, type TableCell, type TableRow, text, valueRow, yesNo } from "./columns.ts";
import type { CaseExportData, CaseExportFile, ExportProvenance } from "../shapes.ts";

/** One row of the file rows: the file, the box it shows (none for a file without boxes), and whether it is the file's first row. */
interface FileRowSource {
  file: CaseExportFile;
  box: FileBox | undefined;
  first: boolean;
}
type FileBox = NonNullable<NonNullable<CaseExportFile["annotations"]>["boxAnnotations"]>[number];

const boxesOf = (file: CaseExportFile): FileBox[] => Array.isArray(file.annotations?.boxAnnotations) ? file.annotations.boxAnnotations : [];

function confirmationStatus(file: CaseExportFile): string {
  const annotations = file.annotations;
  if (annotations?.confirmationData !== undefined && annotations.confirmationData !== null) return "Confirmed";
  return annotations?.includeConfirmation === true ? "Requested" : "Not Requested";
}

/** A fact of the file, written on its first row only (the client leaves it empty on the rows of further boxes). */
const fileColumn = (header: string, value: (file: CaseExportFile) => TableCell): Column<FileRowSource> => ({
  header,
  value: (row) => row.first ? value(row.file) : "",
});
/** A fact of the row's box, empty on the row of a file without boxes. */
const boxColumn = (header: string, value: (box: FileBox) => TableCell): Column<FileRowSource> => ({
  header,
  value: (row) => row.box === undefined ? "" : value(row.box),
});

/** The 37 columns of the file rows, in docs/exchange.md "File rows" order. */
const FILE_ROW_COLUMNS: readonly Column<FileRowSource>[] = Object.freeze([
  fileColumn("File ID", (file) => text(file.fileData.id)),
  fileColumn("Original Filename", (file) => text(file.fileData.originalFilename)),
  fileColumn("Upload Date", (file) => text(file.fileData.uploadedAt)),
  fileColumn("Has Annotations", (file) => yesNo(file.hasAnnotations)),
  fileColumn("Left Case", (file) => text(file.annotations?.leftCase)),
  fileColumn("Right Case", (file) => text(file.annotations?.rightCase)),
  fileColumn("Left Item", (file) => text(file.annotations?.leftItem)),
  fileColumn("Right Item", (file) => text(file.annotations?.rightItem)),
  fileColumn("Case Font Color", (file) => text(file.annotations?.caseFontColor)),
  fileColumn("Class Type", (file) => text(file.annotations?.classType)),
  fileColumn("Custom Class", (file) => text(file.annotations?.customClass)),
  fileColumn("Class Note", (file) => text(file.annotations?.classNote)),
  fileColumn("Index Type", (file) => text(file.annotations?.indexType)),
  fileColumn("Index Number", (file) => text(file.annotations?.indexNumber)),
  fileColumn("Index Color", (file) => text(file.annotations?.indexColor)),
  fileColumn("Support Level", (file) => text(file.annotations?.supportLevel)),
  fileColumn("Has Subclass", (file) => yesNo(file.annotations?.hasSubclass)),
  fileColumn("Include Confirmation", (file) => yesNo(file.annotations?.includeConfirmation)),
  fileColumn("Confirmation Status", confirmationStatus),
  fileColumn("Confirming Examiner Name", (file) => text(file.annotations?.confirmationData?.fullName)),
  fileColumn("Confirming Examiner Badge ID", (file) => text(file.annotations?.confirmationData?.badgeId)),
  fileColumn("Confirming Examiner Email", (file) => text(file.annotations?.confirmationData?.confirmedByEmail)),
  fileColumn("Confirming Examiner Company", (file) => text(file.annotations?.confirmationData?.confirmedByCompany)),
  fileColumn("Confirmation ID", (file) => text(file.annotations?.confirmationData?.confirmationId)),
  fileColumn("Confirmation Timestamp", (file) => text(file.annotations?.confirmationData?.timestamp)),
  fileColumn("Confirmation Date (ISO)", (file) => text(file.annotations?.confirmationData?.confirmedAt)),
  fileColumn("Total Box Annotations", (file) => boxesOf(file).length),
  boxColumn("Box ID", (box) => text(box.id)),
  boxColumn("Box X", (box) => cell(box.x)),
  boxColumn("Box Y", (box) => cell(box.y)),
  boxColumn("Box Width", (box) => cell(box.width)),
  boxColumn("Box Height", (box) => cell(box.height)),
  boxColumn("Box Color", (box) => text(box.color)),
  boxColumn("Box Label", (box) => text(box.label)),
  boxColumn("Box Timestamp", (box) => text(box.timestamp)),
  fileColumn("Additional Notes", (file) => text(file.annotations?.additionalNotes)),
  fileColumn("Last Updated", (file) => text(file.annotations?.updatedAt)),
]);

/** The header row of the file rows, 37 columns in docs/exchange.md order. */
export const CASE_TABLE_HEADER: readonly string[] = Object.freeze(headerRow(FILE_ROW_COLUMNS));

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

/** The rows of one file: one per box, or one with empty box columns. */
export function fileRows(file: CaseExportFile): TableRow[] {
  const boxes = boxesOf(file);
  if (boxes.length === 0) return [valueRow(FILE_ROW_COLUMNS, { file, box: undefined, first: true })];
  return boxes.map((box, index) => valueRow(FILE_ROW_COLUMNS, { file, box, first: index === 0 }));
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
