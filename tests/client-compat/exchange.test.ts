/**
 * The Striae v1.0 client's case exchange formats, rebuilt here from their layout (its
 * `data-processing.ts`, `download-handlers.ts`, `core-export.ts`, `SHA256.ts`,
 * `confirm-export.ts` as of v1.0, read, not copied): the protected CSV, the XLSX workbook, the
 * protected JSON ZIP and the confirmation export. Each must verify or import with our code, and
 * our export of the same case must give the same CSV data block, hash and workbook cells.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import ExcelJS from "exceljs";
import { unzipSync, zipSync } from "fflate";
import { storageKeys } from "../../src/core/storage/keys.ts";
import {
  createConfirmation,
  exportAllCases,
  exportCase,
  exportConfirmations,
  importCase,
  importConfirmations,
  previewCaseImport,
  verifyCaseCsv,
} from "../../src/core/exchange/mod.ts";
import { ANALYST, CASE, putJson, readJson, REVIEWER, type Seeded, seedCase, text, utf8 } from "../exchange/exchange-fixtures.ts";

const sha256 = (data: Uint8Array | string): string => createHash("sha256").update(data).digest("hex");

/** A user record as the user worker's GET answers it. */
async function userRecord(seeded: Seeded, uid: string): Promise<Record<string, any>> {
  return JSON.parse(String(await seeded.ports.users.get(storageKeys.user(uid))));
}

const CSV_WARNING =
  `"CASE DATA WARNING: This file contains evidence data for forensic examination. Any modification may compromise the integrity of the evidence. Handle according to your organization's chain of custody procedures."`;

/* ---------- The client's export document (core-export.ts) ---------- */

interface ClientFile {
  fileData: { id: string; originalFilename: string; uploadedAt: string };
  annotations?: Record<string, any> | undefined;
  hasAnnotations: boolean;
}
interface ClientExport {
  metadata: Record<string, any>;
  files: ClientFile[];
  summary: Record<string, any>;
}

/** What the client's exportCaseData builds for the analyst's case, from the stored documents. */
async function clientCaseExport(seeded: Seeded, exportDate: string): Promise<ClientExport> {
  const { ports } = seeded;
  const user = await userRecord(seeded, ANALYST);
  const stored = await readJson(ports, storageKeys.case(ANALYST, CASE));
  const files: ClientFile[] = [];
  let annotated = 0;
  let boxes = 0;
  let confirmed = 0;
  let requested = 0;
  let lastModified: string | undefined;
  let earliest: string | undefined;
  let latest: string | undefined;
  for (const file of stored.files) {
    const annotations = (await readJson(ports, storageKeys.annotations(ANALYST, CASE, file.id))) ?? undefined;
    const has = !!(annotations && (annotations.additionalNotes || annotations.classNote || annotations.customClass || annotations.leftCase ||
      annotations.rightCase || annotations.leftItem || annotations.rightItem || annotations.supportLevel || annotations.classType ||
      (annotations.boxAnnotations && annotations.boxAnnotations.length > 0)));
    if (has) {
      annotated++;
      boxes += annotations.boxAnnotations?.length ?? 0;
      if (annotations.confirmationData) confirmed++;
    }
    if (annotations?.includeConfirmation) requested++;
    if (has && annotations.updatedAt) {
      if (!lastModified || annotations.updatedAt > lastModified) lastModified = annotations.updatedAt;
      const first = annotations.earliestAnnotationTimestamp || annotations.updatedAt;
      if (!earliest || first < earliest) earliest = first;
      if (!latest || annotations.updatedAt > latest) latest = annotations.updatedAt;
    }
    files.push({ fileData: file, annotations, hasAnnotations: has });
  }
  return {
    metadata: {
      caseNumber: CASE,
      caseCreatedDate: stored.createdAt,
      exportDate,
      exportedBy: user.email,
      exportedByUid: user.uid,
      exportedByName: `${user.firstName} ${user.lastName}`.trim(),
      exportedByCompany: user.company,
      striaeExportSchemaVersion: "1.0",
      totalFiles: stored.files.length,
    },
    files,
    summary: {
      filesWithAnnotations: annotated,
      filesWithoutAnnotations: stored.files.length - annotated,
      totalBoxAnnotations: boxes,
      filesWithConfirmations: confirmed,
      filesWithConfirmationsRequested: requested,
      lastModified,
      earliestAnnotationDate: earliest,
      latestAnnotationDate: latest,
    },
  };
}

/* ---------- The client's tabular layout (data-processing.ts) ---------- */

const CLIENT_HEADERS = [
  "File ID", "Original Filename", "Upload Date", "Has Annotations", "Left Case", "Right Case", "Left Item", "Right Item", "Case Font Color",
  "Class Type", "Custom Class", "Class Note", "Index Type", "Index Number", "Index Color", "Support Level", "Has Subclass",
  "Include Confirmation", "Confirmation Status", "Confirming Examiner Name", "Confirming Examiner Badge ID", "Confirming Examiner Email",
  "Confirming Examiner Company", "Confirmation ID", "Confirmation Timestamp", "Confirmation Date (ISO)", "Total Box Annotations", "Box ID",
  "Box X", "Box Y", "Box Width", "Box Height", "Box Color", "Box Label", "Box Timestamp", "Additional Notes", "Last Updated",
];

function clientMetadataRows(d: ClientExport): string[][] {
  const m = d.metadata;
  const s = d.summary;
  return [
    ["Case Export Report"],
    [""],
    ["Case Number", m.caseNumber],
    ["Case Created Date", m.caseCreatedDate],
    ["Export Date", m.exportDate],
    ["Exported By (Email)", m.exportedBy || "N/A"],
    ["Exported By (UID)", m.exportedByUid || "N/A"],
    ["Exported By (Name)", m.exportedByName || "N/A"],
    ["Exported By (Company)", m.exportedByCompany || "N/A"],
    ["Striae Export Schema Version", m.striaeExportSchemaVersion],
    ["Total Files", m.totalFiles.toString()],
    [""],
    ["Summary"],
    ["Files with Annotations", (s.filesWithAnnotations || 0).toString()],
    ["Files without Annotations", (s.filesWithoutAnnotations || 0).toString()],
    ["Total Box Annotations", (s.totalBoxAnnotations || 0).toString()],
    ["Files with Confirmations", (s.filesWithConfirmations || 0).toString()],
    ["Files with Confirmations Requested", (s.filesWithConfirmationsRequested || 0).toString()],
    ["Last Modified", s.lastModified || "N/A"],
    ["Earliest Annotation Date", s.earliestAnnotationDate || "N/A"],
    ["Latest Annotation Date", s.latestAnnotationDate || "N/A"],
    [""],
    ["File Details"],
  ];
}

function clientFileRows(entry: ClientFile): string[][] {
  const a = entry.annotations;
  const c = a?.confirmationData;
  const full = [
    entry.fileData.id, entry.fileData.originalFilename, entry.fileData.uploadedAt, entry.hasAnnotations ? "Yes" : "No",
    a?.leftCase || "", a?.rightCase || "", a?.leftItem || "", a?.rightItem || "", a?.caseFontColor || "", a?.classType || "",
    a?.customClass || "", a?.classNote || "", a?.indexType || "", a?.indexNumber || "", a?.indexColor || "", a?.supportLevel || "",
    a?.hasSubclass ? "Yes" : "No", a?.includeConfirmation ? "Yes" : "No",
    c ? "Confirmed" : a?.includeConfirmation ? "Requested" : "Not Requested",
    c?.fullName || "", c?.badgeId || "", c?.confirmedByEmail || "", c?.confirmedByCompany || "", c?.confirmationId || "",
    c?.timestamp || "", c?.confirmedAt || "", (a?.boxAnnotations?.length || 0).toString(),
  ];
  const last = [a?.additionalNotes || "", a?.updatedAt || ""];
  const boxes: any[] = a?.boxAnnotations ?? [];
  if (boxes.length === 0) return [[...full, "", "", "", "", "", "", "", "", ...last]];
  return boxes.map((box, i) => [
    ...(i === 0 ? full : full.map(() => "")),
    box.id, box.x.toString(), box.y.toString(), box.width.toString(), box.height.toString(), box.color || "", box.label || "", box.timestamp || "",
    ...(i === 0 ? last : ["", ""]),
  ]);
}

/** The protected CSV exactly as the client's generateCSVContent writes it. */
function clientCsv(d: ClientExport, generatedAt: string): { csv: string; block: string } {
  const rows = [...clientMetadataRows(d), CLIENT_HEADERS, ...d.files.flatMap(clientFileRows)];
  const block = rows.map((row) => row.map((field) => `"${String(field).replace(/"/g, '""')}"`).join(",")).join("\n");
  const withHash = [
    `# Striae Case Export - Generated: ${generatedAt}`,
    `# Case: ${d.metadata.caseNumber}`,
    `# Total Files: ${d.metadata.totalFiles}`,
    `# SHA-256 Hash: ${sha256(block).toUpperCase()}`,
    "# Verification: Recalculate SHA-256 of data rows only (excluding these comment lines)",
    "",
    block,
  ].join("\n");
  return { csv: `${CSV_WARNING}\n\n${withHash}`, block };
}

/* ---------- The client's protected JSON ZIP (download-handlers.ts, SHA256.ts) ---------- */

const JSON_WARNING = (at: string) => `/* CASE DATA WARNING
 * This file contains evidence data for forensic examination.
 * Any modification may compromise the integrity of the evidence.
 * Handle according to your organization's chain of custody procedures.
 * 
 * File generated: ${at}
 */

`;

function clientManifest(content: string, images: Record<string, Uint8Array>, createdAt: string): string {
  const imageHashes: Record<string, string> = {};
  for (const name of Object.keys(images).sort()) imageHashes[name] = sha256(images[name]!);
  const dataHash = sha256(content);
  const totalFiles = Object.keys(images).length + 1;
  const manifestHash = sha256(JSON.stringify({ dataHash, imageHashes, totalFiles, createdAt }));
  return JSON.stringify({ dataHash, imageHashes, manifestHash, totalFiles, createdAt }, null, 2);
}

/** The ZIP of the client's downloadCaseAsZip, JSON format, forensic protection on (its default). */
function clientJsonZip(d: ClientExport, images: Record<string, Uint8Array>, createdAt: string): Uint8Array {
  const plain = JSON.stringify(d, null, 2);
  const withHash = JSON.stringify({
    ...d,
    metadata: { ...d.metadata, hash: sha256(plain).toUpperCase(), integrityNote: "Verify by recalculating SHA256 of this entire JSON content" },
  }, null, 2);
  const files: Record<string, Uint8Array> = { [`${CASE}_data.json`]: utf8(JSON_WARNING(d.metadata.exportDate) + withHash) };
  for (const [name, bytes] of Object.entries(images)) files[`images/${name}`] = bytes;
  files["FORENSIC_MANIFEST.json"] = utf8(clientManifest(withHash, images, createdAt));
  files["READ_ONLY_INSTRUCTIONS.txt"] = utf8("EVIDENCE ARCHIVE - READ ONLY\n\nThis ZIP archive contains evidence data exported from Striae.\n");
  files["README.txt"] = utf8("Striae Case Export\n==================\n");
  return zipSync(files, { level: 6 });
}

/** The ZIP of downloadCaseAsZip in CSV format: the CSV is generated twice, so its manifest hash covers another "Generated" line. */
function clientCsvZip(d: ClientExport, images: Record<string, Uint8Array>, csv: string): Uint8Array {
  const files: Record<string, Uint8Array> = { [`${CASE}_data.csv`]: utf8(csv) };
  for (const [name, bytes] of Object.entries(images)) files[`images/${name}`] = bytes;
  files["FORENSIC_MANIFEST.json"] = utf8(clientManifest(clientCsv(d, "2026-11-22T12:00:03.000Z").csv.slice(CSV_WARNING.length + 2), images, "2026-11-22T12:00:04.000Z"));
  return zipSync(files, { level: 6 });
}

const imagesOf = (seeded: Seeded): Record<string, Uint8Array> => Object.fromEntries(seeded.files.map((file) => [file.originalFilename, file.bytes]));
const EXPORTED_AT = "2026-11-22T12:00:00.000Z";
const MANIFEST_AT = "2026-11-22T12:00:02.000Z";

/* ---------- The client's workbook (download-handlers.ts downloadAllCasesAsCSV) ---------- */

function clientWorkbook(d: ClientExport): ExcelJS.Workbook {
  const m = d.metadata;
  const s = d.summary;
  const workbook = new ExcelJS.Workbook();
  workbook.addWorksheet("Summary").addRows([
    ["CASE DATA - PROTECTED EXPORT"],
    ["WARNING: This workbook contains evidence data and is protected from editing."],
    [""],
    ["Export Date", m.exportDate],
    ["Exported By (Email)", m.exportedBy || "N/A"],
    ["Exported By (UID)", m.exportedByUid || "N/A"],
    ["Exported By (Name)", m.exportedByName || "N/A"],
    ["Exported By (Company)", m.exportedByCompany || "N/A"],
    ["Striae Export Schema Version", "1.0"],
    ["Total Cases", 1],
    ["Successful Exports", 1],
    ["Failed Exports", 0],
    ["Total Files (All Cases)", m.totalFiles],
    ["Total Annotations (All Cases)", s.filesWithAnnotations],
    ["Total Confirmations (All Cases)", s.filesWithConfirmations || 0],
    ["Total Confirmations Requested (All Cases)", s.filesWithConfirmationsRequested || 0],
    [""],
    ["Case Details"],
    ["Case Number", "Case Created Date", "Export Status", "Export Date", "Exported By (Email)", "Exported By (UID)", "Exported By (Name)",
      "Exported By (Company)", "Schema Version", "Total Files", "Files with Annotations", "Files without Annotations", "Total Box Annotations",
      "Files with Confirmations", "Files with Confirmations Requested", "Last Modified", "Earliest Annotation Date", "Latest Annotation Date",
      "Export Error"],
    [m.caseNumber, m.caseCreatedDate, "Success", m.exportDate, m.exportedBy || "N/A", m.exportedByUid || "N/A", m.exportedByName || "N/A",
      m.exportedByCompany || "N/A", m.striaeExportSchemaVersion, m.totalFiles, s.filesWithAnnotations || 0, s.filesWithoutAnnotations || 0,
      s.totalBoxAnnotations || 0, s.filesWithConfirmations || 0, s.filesWithConfirmationsRequested || 0, s.lastModified || "",
      s.earliestAnnotationDate || "", s.latestAnnotationDate || "", ""],
  ]);
  workbook.addWorksheet(`Case_${m.caseNumber}`).addRows([
    [`CASE DATA - ${m.caseNumber} - PROTECTED`],
    ["WARNING: This worksheet is protected to maintain data integrity."],
    [""],
    ...clientMetadataRows(d).slice(2, -1),
    [""],
    ["File Details"],
    CLIENT_HEADERS,
    ...d.files.flatMap(clientFileRows),
  ]);
  return workbook;
}

/** Every sheet's cells as displayed text, trailing empty cells dropped (an empty string cell and no cell look the same). */
function displayed(workbook: ExcelJS.Workbook): Record<string, string[][]> {
  const sheets: Record<string, string[][]> = {};
  for (const sheet of workbook.worksheets) {
    const rows: string[][] = [];
    for (let r = 1; r <= sheet.rowCount; r++) {
      const row = sheet.getRow(r);
      const cells: string[] = [];
      for (let c = 1; c <= row.cellCount; c++) {
        const value = row.getCell(c).value;
        cells.push(value === null || value === undefined ? "" : String(value));
      }
      while (cells.length > 0 && cells.at(-1) === "") cells.pop();
      rows.push(cells);
    }
    while (rows.length > 0 && rows.at(-1)!.length === 0) rows.pop();
    sheets[sheet.name] = rows;
  }
  return sheets;
}

/** A case whose annotations carry what the client writes (earliestAnnotationTimestamp) and a confirmation. */
async function seedClientCase(): Promise<Seeded> {
  const seeded = await seedCase();
  const key = storageKeys.annotations(ANALYST, CASE, seeded.files[0]!.id);
  await putJson(seeded.ports, key, { ...(await readJson(seeded.ports, key)), earliestAnnotationTimestamp: "2026-11-03T10:59:00.000Z" });
  return seeded;
}

describe("the v1.0 client's protected CSV", () => {
  it("verifies with verifyCaseCsv (warning line and blank line taken off as the client does); a changed data row is refused", async () => {
    const seeded = await seedClientCase();
    const { csv, block } = clientCsv(await clientCaseExport(seeded, EXPORTED_AT), "2026-11-22T12:00:01.000Z");
    expect(csv.startsWith(`${CSV_WARNING}\n\n# Striae Case Export - Generated: `)).toBe(true);
    const verified = await verifyCaseCsv(csv);
    expect(verified).toEqual({ valid: true, expected: sha256(block).toUpperCase(), actual: sha256(block).toUpperCase() });
    // Every kind of change to the data rows is refused: a value, a row dropped, a row added.
    expect((await verifyCaseCsv(csv.replace('"land 1"', '"land 7"'))).valid).toBe(false);
    expect((await verifyCaseCsv(csv.replace(/\n"[^\n]*"box-2"[^\n]*/, ""))).valid).toBe(false);
    expect((await verifyCaseCsv(`${csv}\n"extra"`)).valid).toBe(false);
    // Windows line ends in the warning block are accepted as the client accepts them.
    expect((await verifyCaseCsv(csv.replace(`${CSV_WARNING}\n\n`, `${CSV_WARNING}\r\n\r\n`))).valid).toBe(true);
  });

  it("our CSV export of the same case has the same data block and the same SHA-256", async () => {
    const seeded = await seedClientCase();
    const client = clientCsv(await clientCaseExport(seeded, EXPORTED_AT), "2026-11-22T12:00:01.000Z");
    const ours = text((await exportCase(seeded.store, ANALYST, CASE, "csv")).bytes);
    expect(ours.startsWith(`${CSV_WARNING}\n\n# Forensic Annotation Case Export - Generated: ${EXPORTED_AT}\n`)).toBe(true);
    const ourBlock = ours.slice(ours.indexOf("\n\n", CSV_WARNING.length + 2) + 2);
    expect(ourBlock).toBe(client.block);
    const hashLine = (csv: string) => csv.split("\n").find((line) => line.startsWith("# SHA-256 Hash: "));
    expect(hashLine(ours)).toBe(hashLine(client.csv));
    expect(ours.split("\n").slice(3, 8)).toEqual(client.csv.split("\n").slice(3, 8));
  });

  it("the import preview reads the client's CSV package: its facts, whether its rows match their hash, and that it cannot be imported", async () => {
    const seeded = await seedClientCase();
    const data = await clientCaseExport(seeded, EXPORTED_AT);
    const { csv } = clientCsv(data, "2026-11-22T12:00:01.000Z");
    const preview = await previewCaseImport(clientCsvZip(data, imagesOf(seeded), csv), { store: seeded.store, importerUid: REVIEWER });
    expect(preview).toMatchObject({
      caseNumber: CASE,
      fileCount: 3,
      annotationCount: 2,
      exportDate: EXPORTED_AT,
      exportedBy: `${ANALYST}@lab.example`,
      canImport: false,
      warnings: ["CSV import is not supported", "The CSV data rows match their SHA-256 hash"],
    });
    const changed = await previewCaseImport(clientCsvZip(data, imagesOf(seeded), csv.replace('"land 1"', '"land 7"')));
    expect(changed.warnings).toEqual(["CSV import is not supported", "The CSV data rows do not match their SHA-256 hash: they were changed after the export"]);
  });
});

describe("the v1.0 client's workbook", () => {
  it("ours holds the same sheets and the same cells as the client's for the same case", async () => {
    const seeded = await seedClientCase();
    expect((await userRecord(seeded, ANALYST)).cases).toEqual([{ caseNumber: CASE, createdAt: "2026-11-01T09:00:00.000Z" }]);
    const client = clientWorkbook(await clientCaseExport(seeded, EXPORTED_AT));
    const roundTripped = new ExcelJS.Workbook();
    await roundTripped.xlsx.load(await client.xlsx.writeBuffer());
    const ours = new ExcelJS.Workbook();
    await ours.xlsx.load((await exportAllCases(seeded.store, ANALYST, "xlsx")).bytes as unknown as ArrayBuffer);
    const expected = displayed(roundTripped);
    expect(Object.keys(expected)).toEqual(["Summary", `Case_${CASE}`]);
    expect(displayed(ours)).toEqual(expected);
  });
});

describe("the v1.0 client's protected JSON ZIP", () => {
  it("previews and imports as a read-only case that stores what the client's importer stores, forensicManifestCreatedAt included", async () => {
    const seeded = await seedClientCase();
    const zip = clientJsonZip(await clientCaseExport(seeded, EXPORTED_AT), imagesOf(seeded), MANIFEST_AT);
    expect(Object.keys(unzipSync(zip)).sort()).toEqual([
      `${CASE}_data.json`, "FORENSIC_MANIFEST.json", "README.txt", "READ_ONLY_INSTRUCTIONS.txt", "images/bullet 1.png", "images/casing-2.jpg", "images/overview.gif",
    ]);
    const preview = await previewCaseImport(zip, { store: seeded.store, importerUid: REVIEWER });
    expect(preview).toMatchObject({ caseNumber: CASE, fileCount: 3, annotationCount: 2, canImport: true, warnings: [], exportedBy: `${ANALYST}@lab.example` });

    seeded.clock.set("2026-11-23T09:00:00.000Z");
    const result = await importCase(seeded.store, zip, REVIEWER);
    expect(result).toMatchObject({ success: true, caseNumber: CASE, isReadOnly: true, filesImported: 3, annotationsImported: 2 });
    const document = await readJson(seeded.ports, storageKeys.case(REVIEWER, CASE));
    expect(document).toMatchObject({ caseNumber: CASE, isReadOnly: true, importedAt: "2026-11-23T09:00:00.000Z", forensicManifestCreatedAt: MANIFEST_AT });
    expect(Object.keys(document.originalImageIds).sort()).toEqual(seeded.files.map((file) => file.id).sort());
    expect(document.files.map((file: { id: string }) => file.id).sort()).toEqual(Object.values(document.originalImageIds).sort());
    for (const file of seeded.files) expect(await seeded.store.readImage(document.originalImageIds[file.id])).toEqual(file.bytes);
  });

  it("is refused when a data row is changed behind the warning block", async () => {
    const seeded = await seedClientCase();
    const zip = clientJsonZip(await clientCaseExport(seeded, EXPORTED_AT), imagesOf(seeded), MANIFEST_AT);
    const entries = unzipSync(zip);
    const changed = text(entries[`${CASE}_data.json`]).replace('"label": "land 1"', '"label": "land 7"');
    expect(changed).not.toBe(text(entries[`${CASE}_data.json`]));
    const result = await importCase(seeded.store, zipSync({ ...entries, [`${CASE}_data.json`]: utf8(changed) }), REVIEWER);
    expect(result.success).toBe(false);
    expect(result.errors?.[0]).toContain("the data file does not match its hash");
  });
});

describe("confirmations after our import of a client package", () => {
  /** The reviewer's confirmation export as the client's exportConfirmationData builds it from the stored read-only case. */
  async function clientConfirmationExport(seeded: Seeded): Promise<string> {
    const document = await readJson(seeded.ports, storageKeys.case(REVIEWER, CASE));
    const reviewer = await userRecord(seeded, REVIEWER);
    const originalExportCreatedAt: string | undefined = document.forensicManifestCreatedAt;
    const exportData = {
      metadata: {
        caseNumber: CASE,
        exportDate: "2026-11-23T11:00:00.000Z",
        exportedBy: reviewer.email,
        exportedByUid: reviewer.uid,
        exportedByName: `${reviewer.firstName} ${reviewer.lastName}`.trim(),
        exportedByCompany: reviewer.company,
        totalConfirmations: Object.keys(document.confirmations).length,
        version: "1.0",
        ...(originalExportCreatedAt && { originalExportCreatedAt }),
      },
      confirmations: document.confirmations,
    };
    const hash = sha256(JSON.stringify(exportData, null, 2)).toUpperCase();
    return JSON.stringify({ ...exportData, metadata: { ...exportData.metadata, hash } }, null, 2);
  }

  it("the client's confirmation export of a case we imported carries originalExportCreatedAt and imports into the analyst's case; ours carries it too", async () => {
    const seeded = await seedClientCase();
    const zip = clientJsonZip(await clientCaseExport(seeded, EXPORTED_AT), imagesOf(seeded), MANIFEST_AT);
    seeded.clock.set("2026-11-23T09:00:00.000Z");
    expect((await importCase(seeded.store, zip, REVIEWER)).success).toBe(true);
    const document = await readJson(seeded.ports, storageKeys.case(REVIEWER, CASE));
    seeded.clock.set("2026-11-23T10:00:00.000Z");
    const confirmation = await createConfirmation(seeded.store, REVIEWER, CASE, document.originalImageIds[seeded.files[1]!.id], { fullName: "Rita Reviewer", badgeId: "B-77" });

    const clientFile = await clientConfirmationExport(seeded);
    expect(JSON.parse(clientFile).metadata.originalExportCreatedAt).toBe(MANIFEST_AT);
    const result = await importConfirmations(seeded.store, ANALYST, clientFile);
    expect(result).toEqual({ success: true, caseNumber: CASE, confirmationsImported: 1, imagesUpdated: 1, signatureValid: "unsigned" });
    expect((await readJson(seeded.ports, storageKeys.annotations(ANALYST, CASE, seeded.files[1]!.id))).confirmationData).toEqual(confirmation);

    const ours = await exportConfirmations(seeded.store, REVIEWER, CASE);
    expect(ours.data.metadata.originalExportCreatedAt).toBe(MANIFEST_AT);
  });

  it("without forensicManifestCreatedAt on the read-only case the client's export lacks originalExportCreatedAt and is refused", async () => {
    const seeded = await seedClientCase();
    const zip = clientJsonZip(await clientCaseExport(seeded, EXPORTED_AT), imagesOf(seeded), MANIFEST_AT);
    expect((await importCase(seeded.store, zip, REVIEWER)).success).toBe(true);
    const key = storageKeys.case(REVIEWER, CASE);
    const document = await readJson(seeded.ports, key);
    await createConfirmation(seeded.store, REVIEWER, CASE, document.originalImageIds[seeded.files[1]!.id], { fullName: "Rita Reviewer", badgeId: "B-77" });
    const { forensicManifestCreatedAt: _dropped, ...older } = await readJson(seeded.ports, key);
    await putJson(seeded.ports, key, older);
    const clientFile = await clientConfirmationExport(seeded);
    expect(JSON.parse(clientFile).metadata.originalExportCreatedAt).toBeUndefined();
    const result = await importConfirmations(seeded.store, ANALYST, clientFile);
    expect(result.success).toBe(false);
    expect(result.errors?.[0]).toMatch(/no originalExportCreatedAt/);
  });
});
