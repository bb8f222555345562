/**
 * @module
 * The two text files of a ZIP export (docs/exchange.md#zip-package): README.txt (case facts, exporter,
 * schema version, summary counts, the list of contents and the evidence notice) and
 * READ_ONLY_INSTRUCTIONS.txt (how to handle the archive).
 */
import { dataEntryName, IMAGES_FOLDER, MANIFEST_ENTRY } from "./manifest.ts";
import type { CaseExportData } from "../shapes.ts";

const shown = (value: unknown): string => typeof value === "string" && value !== "" ? value : typeof value === "number" ? String(value) : "N/A";

/** README.txt of a case archive. */
export function readmeText(data: CaseExportData, signed: boolean): string {
  const meta = data.metadata;
  const summary = data.summary;
  const lines = [
    "Forensic Annotation Case Export",
    "===============================",
    "",
    `Case Number: ${shown(meta.caseNumber)}`,
    `Case Created Date: ${shown(meta.caseCreatedDate)}`,
    `Export Date: ${shown(meta.exportDate)}`,
    `Exported By (Email): ${shown(meta.exportedBy)}`,
    `Exported By (UID): ${shown(meta.exportedByUid)}`,
    `Exported By (Name): ${shown(meta.exportedByName)}`,
    `Exported By (Company): ${shown(meta.exportedByCompany)}`,
    `Export Schema Version: ${shown(meta.exportSchemaVersion ?? meta.striaeExportSchemaVersion)}`,
    "",
    "Summary:",
    `- Total Files: ${meta.totalFiles}`,
    ...(summary === undefined ? [] : [
      `- Files with Annotations: ${summary.filesWithAnnotations}`,
      `- Files without Annotations: ${summary.filesWithoutAnnotations}`,
      `- Total Box Annotations: ${summary.totalBoxAnnotations}`,
      `- Files with Confirmations: ${summary.filesWithConfirmations ?? 0}`,
      `- Files with Confirmations Requested: ${summary.filesWithConfirmationsRequested ?? 0}`,
      `- Earliest Annotation Date: ${shown(summary.earliestAnnotationDate)}`,
      `- Latest Annotation Date: ${shown(summary.latestAnnotationDate)}`,
    ]),
    "",
    "Contents:",
    `- ${dataEntryName(meta.caseNumber)}: case data and annotations (JSON, export schema ${shown(meta.exportSchemaVersion)})`,
    `- ${IMAGES_FOLDER}: the original images as uploaded, named {name}-{file id}{extension}`,
    `- ${MANIFEST_ENTRY}: SHA-256 of the data file and of every image, and of the manifest itself${
      signed ? "; signed by the exporting service" : ""
    }`,
    "- READ_ONLY_INSTRUCTIONS.txt: how to handle this archive",
    "- README.txt: this file",
    "",
    "EVIDENCE NOTICE",
    "===============",
    "This archive contains evidence data. Changing, adding, renaming or removing any file",
    "in it breaks its integrity: an import recomputes every hash in the manifest and refuses",
    "an archive that does not match. Handle it according to your organisation's chain of",
    "custody procedures.",
    "",
  ];
  return lines.join("\n");
}

/** READ_ONLY_INSTRUCTIONS.txt of a case archive. */
export function readOnlyInstructionsText(data: CaseExportData): string {
  const meta = data.metadata;
  return [
    "EVIDENCE ARCHIVE - READ ONLY",
    "",
    "This ZIP archive contains evidence data exported for review.",
    "",
    "IMPORTANT:",
    "- Open it for reading only; do not modify, rename, add or delete any file in it.",
    `- Any change is detected on import through ${MANIFEST_ENTRY} and the archive is refused.`,
    "- The reviewer imports it as a read-only case; the original analyst cannot import it.",
    "- Keep the archive under your chain of custody procedures.",
    "",
    "Case Information:",
    `- Case Number: ${shown(meta.caseNumber)}`,
    `- Export Date: ${shown(meta.exportDate)}`,
    `- Exported By: ${shown(meta.exportedBy)}`,
    `- Total Files: ${meta.totalFiles}`,
    "",
  ].join("\n");
}
