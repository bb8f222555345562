import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import ExcelJS from "exceljs";
import { unzipSync } from "fflate";
import { exportAllCases, exportCase, verifyCaseCsv } from "../../src/core/exchange/mod.ts";
import { CASE_TABLE_HEADER, caseTableRows } from "../../src/core/exchange/formats/case-table.ts";
import { caseSheetRows, formatAllCasesXlsx } from "../../src/core/exchange/formats/cases-workbook.ts";
import { CSV_WARNING_LINE, stripWarningBlock } from "../../src/core/exchange/formats/warning-block.ts";
import { collectAllCasesExport, collectCaseExport } from "../../src/core/exchange/case-export.ts";
import { formatCaseCsv } from "../../src/core/exchange/formats/csv.ts";
import { sheetNames, xmlText } from "../../src/core/exchange/formats/xlsx.ts";
import { storageKeys } from "../../src/core/storage/keys.ts";
import { ANALYST, auditEntries, CASE, putJson, putUser, seedCase, text } from "./exchange-fixtures.ts";
import { missingTool } from "../helpers/system-tools.ts";

/** RFC 4180 reading: quoted fields, doubled quotes, newlines inside quotes. */
function parseCsv(block: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  while (i < block.length) {
    expect(block[i]).toBe('"');
    let field = "";
    i++;
    for (;;) {
      const next = block.indexOf('"', i);
      field += block.slice(i, next);
      i = next + 1;
      if (block[i] === '"') {
        field += '"';
        i++;
      } else break;
    }
    row.push(field);
    if (block[i] === ",") i++;
    else {
      rows.push(row);
      row = [];
      if (block[i] === "\n") i++;
    }
  }
  return rows;
}

/** The data block of a CSV export: after the warning line, the text after the first blank line. */
function dataBlock(csv: string): string {
  const unwarned = stripWarningBlock(csv);
  return unwarned.slice(unwarned.indexOf("\n\n") + 2);
}

const WARNING =
  '"CASE DATA WARNING: This file contains evidence data for forensic examination. Any modification may compromise the integrity of the evidence. Handle according to your organization\'s chain of custody procedures."';

const EXPECTED_HEADER = [
  "File ID", "Original Filename", "Upload Date", "Has Annotations", "Left Case", "Right Case", "Left Item", "Right Item",
  "Case Font Color", "Class Type", "Custom Class", "Class Note", "Index Type", "Index Number", "Index Color", "Support Level",
  "Has Subclass", "Include Confirmation", "Confirmation Status", "Confirming Examiner Name", "Confirming Examiner Badge ID",
  "Confirming Examiner Email", "Confirming Examiner Company", "Confirmation ID", "Confirmation Timestamp",
  "Confirmation Date (ISO)", "Total Box Annotations", "Box ID", "Box X", "Box Y", "Box Width", "Box Height", "Box Color",
  "Box Label", "Box Timestamp", "Additional Notes", "Last Updated",
];

describe("CSV (EXCHANGE.md CSV)", () => {
  it("has the warning line, the comment lines, a blank line and the data block whose SHA-256 they state", async () => {
    const { store, files } = await seedCase();
    const data = await collectCaseExport(store, ANALYST, CASE);
    const csv = await formatCaseCsv(data);
    const lines = csv.split("\n");
    expect(CSV_WARNING_LINE).toBe(WARNING);
    expect(lines.slice(0, 8)).toEqual([
      WARNING,
      "",
      "# Forensic Annotation Case Export - Generated: 2026-11-22T12:00:00.000Z",
      `# Case: ${CASE}`,
      "# Total Files: 3",
      expect.stringMatching(/^# SHA-256 Hash: [0-9A-F]{64}$/),
      "# Verification: Recalculate SHA-256 of data rows only (excluding these comment lines)",
      "",
    ]);
    const block = csv.slice(csv.indexOf("\n\n", WARNING.length + 2) + 2);
    expect(block).toBe(dataBlock(csv));
    expect(lines[5]).toBe(`# SHA-256 Hash: ${createHash("sha256").update(block, "utf8").digest("hex").toUpperCase()}`);
    expect(await verifyCaseCsv(csv)).toMatchObject({ valid: true });
    expect((await verifyCaseCsv(csv.replace("land 1", "land 2"))).valid).toBe(false);
    // Unprotected: the same text without the warning line and its blank line.
    const plain = await formatCaseCsv(data, { protect: false });
    expect(plain).toBe(csv.slice(WARNING.length + 2));
    expect(await verifyCaseCsv(plain)).toMatchObject({ valid: true, expected: lines[5]!.slice(16) });
    expect(csv.endsWith("\n")).toBe(false);
    expect(csv).not.toContain("\r");

    // Every field double-quoted: each line of the block is quoted fields only (a newline may sit inside one).
    const rows = parseCsv(block);
    expect(rows.slice(0, 2)).toEqual([["Case Export Report"], [""]]);
    expect(rows.slice(2, 11)).toEqual([
      ["Case Number", CASE],
      ["Case Created Date", "2026-11-01T09:00:00.000Z"],
      ["Export Date", "2026-11-22T12:00:00.000Z"],
      ["Exported By (Email)", `${ANALYST}@lab.example`],
      ["Exported By (UID)", ANALYST],
      ["Exported By (Name)", "analyst Examiner"],
      ["Exported By (Company)", "State Lab"],
      ["Striae Export Schema Version", "1.0"],
      ["Total Files", "3"],
    ]);
    expect(rows[11]).toEqual([""]);
    expect(rows[12]).toEqual(["Summary"]);
    expect(rows.slice(13, 21)).toEqual([
      ["Files with Annotations", "2"],
      ["Files without Annotations", "1"],
      ["Total Box Annotations", "3"],
      ["Files with Confirmations", "0"],
      ["Files with Confirmations Requested", "1"],
      ["Last Modified", "2026-11-12T08:00:00.000Z"],
      ["Earliest Annotation Date", "2026-11-10T08:00:00.000Z"],
      ["Latest Annotation Date", "2026-11-12T08:00:00.000Z"],
    ]);
    expect(rows[21]).toEqual([""]);
    expect(rows[22]).toEqual(["File Details"]);
    expect(rows[23]).toEqual(EXPECTED_HEADER);
    expect([...CASE_TABLE_HEADER]).toEqual(EXPECTED_HEADER);

    const fileRows = rows.slice(24);
    expect(fileRows).toHaveLength(4); // 2 boxes + 1 box + 1 file without boxes
    for (const row of fileRows) expect(row).toHaveLength(37);
    const col = (name: string) => EXPECTED_HEADER.indexOf(name);
    const [first, second, third, fourth] = fileRows as [string[], string[], string[], string[]];
    expect(first.slice(0, 4)).toEqual([files[0]!.id, "bullet 1.png", "2026-11-02T10:00:00.000Z", "Yes"]);
    expect(first[col("Class Type")]).toBe("Bullet");
    expect(first[col("Has Subclass")]).toBe("No");
    expect(first[col("Confirmation Status")]).toBe("Not Requested");
    expect(first[col("Total Box Annotations")]).toBe("2");
    expect(first.slice(col("Box ID"), col("Box Timestamp") + 1)).toEqual(["box-1", "10.5", "20", "30.25", "15", "#00ff00", "land 1", "2026-11-03T11:00:00.000Z"]);
    expect(first[col("Additional Notes")]).toBe('Land impressions agree; "6 right" twist.\nSecond line, with, commas.');
    expect(first[col("Last Updated")]).toBe("2026-11-10T08:00:00.000Z");
    // The second box of a file: file columns and the last two empty.
    expect(second.slice(0, 27).every((field) => field === "")).toBe(true);
    expect(second.slice(col("Box ID"), col("Box Timestamp") + 1)).toEqual(["box-2", "55", "40.125", "12", "8.5", "#0000ff", "", "2026-11-03T11:05:00.000Z"]);
    expect(second.slice(35)).toEqual(["", ""]);
    expect(third[col("Confirmation Status")]).toBe("Requested");
    expect(third[col("Has Subclass")]).toBe("Yes");
    // A file without annotations: one row, empty box columns.
    expect(fourth.slice(0, 4)).toEqual([files[2]!.id, "overview.gif", "2026-11-04T10:00:00.000Z", "No"]);
    expect(fourth[col("Total Box Annotations")]).toBe("0");
    expect(fourth.slice(col("Box ID"), col("Box Timestamp") + 1).every((field) => field === "")).toBe(true);
  });

  it("holds the same data as the JSON export", async () => {
    const { store } = await seedCase();
    const csvFile = await exportCase(store, ANALYST, CASE, "csv");
    const jsonFile = await exportCase(store, ANALYST, CASE, "json");
    const data = JSON.parse(text(jsonFile.bytes));
    const csv = text(csvFile.bytes);
    const rows = parseCsv(dataBlock(csv));
    const fileRows = rows.slice(rows.findIndex((row) => row[0] === "File ID") + 1);
    const boxes = data.files.flatMap((file: any) => (file.annotations?.boxAnnotations ?? []).map((box: any) => [box.id, String(box.x), String(box.y), String(box.width), String(box.height), box.color, box.label ?? "", box.timestamp]));
    expect(fileRows.filter((row) => row[27] !== "").map((row) => row.slice(27, 35))).toEqual(boxes);
    expect(fileRows.filter((row) => row[0] !== "").map((row) => [row[0], row[1], row[2], row[3], row[4], row[36]])).toEqual(
      data.files.map((file: any) => [file.fileData.id, file.fileData.originalFilename, file.fileData.uploadedAt, file.hasAnnotations ? "Yes" : "No", file.annotations?.leftCase ?? "", file.annotations?.updatedAt ?? ""]),
    );
    expect(csvFile.fileName).toBe(`${CASE}-export-20261122.csv`);
  });

  it("without includeMetadata there are no summary rows; without includeAnnotations the annotation columns are empty", async () => {
    const { store } = await seedCase();
    const data = await collectCaseExport(store, ANALYST, CASE, { includeMetadata: false, includeAnnotations: false });
    expect(data.summary).toBeUndefined();
    expect(data.files.every((file) => file.annotations === undefined)).toBe(true);
    expect(data.files.map((file) => file.hasAnnotations)).toEqual([true, true, false]);
    const rows = caseTableRows(data);
    expect(rows[10]).toEqual(["Total Files", 3]);
    expect(rows[11]).toEqual([""]);
    expect(rows[12]).toEqual(["File Details"]);
    expect(rows.slice(14)).toHaveLength(3);
  });
});

/** CSV as LibreOffice writes it: fields quoted only when needed. */
function parseLooseCsv(csv: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < csv.length; i++) {
    const char = csv[i]!;
    if (quoted) {
      if (char === '"' && csv[i + 1] === '"') (field += '"'), i++;
      else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ",") row.push(field), (field = "");
    else if (char === "\n") row.push(field), rows.push(row), (row = []), (field = "");
    else if (char !== "\r") field += char;
  }
  if (field !== "" || row.length > 0) row.push(field), rows.push(row);
  return rows;
}

const soffice = ["soffice", "libreoffice"].find((name) => spawnSync(name, ["--version"], { encoding: "utf8" }).status === 0);

/** A sheet's cells as the CSV would write them (empty cells "", trailing empties dropped). */
function sheetRows(sheet: ExcelJS.Worksheet, count: number): string[][] {
  const rows: string[][] = [];
  for (let r = 1; r <= count; r++) {
    const row = sheet.getRow(r);
    const cells: string[] = [];
    for (let c = 1; c <= Math.max(row.cellCount, 1); c++) {
      const value = row.getCell(c).value;
      cells.push(value === null || value === undefined ? "" : String(value));
    }
    while (cells.length > 1 && cells.at(-1) === "") cells.pop();
    rows.push(cells);
  }
  return rows;
}

const trimmed = (rows: (string | number)[][]): string[][] =>
  rows.map((row) => {
    const cells = row.map(String);
    while (cells.length > 1 && cells.at(-1) === "") cells.pop();
    return cells;
  });

describe("XLSX workbook (EXCHANGE.md XLSX)", () => {
  it("reads back with exceljs: Summary first, then one sheet per case with the CSV's cells", async () => {
    const { store, ports } = await seedCase();
    // A second case with a name that needs cleaning, and a third whose document is missing.
    await putUser(ports, ANALYST, [CASE, "B/2:x*?[y]", "MISSING-1"]);
    await putJson(ports, `${ANALYST}/B_2_x___y_/data.json`, { caseNumber: "B/2:x*?[y]", files: [], createdAt: "2026-11-05T00:00:00.000Z" });
    const file = await exportAllCases({ ...store, getCase: (uid, caseNumber) => store.getCase(uid, caseNumber === "B/2:x*?[y]" ? "B_2_x___y_" : caseNumber) }, ANALYST, "xlsx");
    expect(file.fileName).toBe("all-cases-export-20261122.xlsx");

    const parts = Object.keys(unzipSync(file.bytes));
    expect(parts[0]).toBe("[Content_Types].xml");
    for (const part of ["_rels/.rels", "xl/workbook.xml", "xl/_rels/workbook.xml.rels", "xl/styles.xml", "docProps/core.xml", "xl/worksheets/sheet4.xml"]) {
      expect(parts).toContain(part);
    }

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(file.bytes as unknown as ArrayBuffer);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(["Summary", `Case_${CASE}`, "Case_B_2_x___y_", "Case_MISSING-1_Error"]);

    const data = file.data;
    for (const [i, caseData] of data.cases.entries()) {
      const expected = trimmed(caseSheetRows(caseData, true));
      expect(sheetRows(workbook.worksheets[i + 1]!, expected.length)).toEqual(expected);
    }
    // A case sheet is the CSV's data block under its own title and warning rows, with a second blank row before File Details.
    const csvRows = trimmed(parseCsv(dataBlock(await formatCaseCsv(data.cases[0]!))));
    const details = csvRows.findIndex((row) => row[0] === "File Details");
    expect(sheetRows(workbook.worksheets[1]!, csvRows.length + 2)).toEqual([
      [`CASE DATA - ${CASE} - PROTECTED`],
      ["WARNING: This worksheet is protected to maintain data integrity."],
      [""],
      ...csvRows.slice(2, details),
      [""],
      ...csvRows.slice(details),
    ]);
    expect(sheetRows(workbook.worksheets[2]!, 27).slice(23)).toEqual([[""], ["File Details"], EXPECTED_HEADER, ["No detailed file data available for this case"]]);
    expect(sheetRows(workbook.worksheets[3]!, 5)).toEqual([
      ["Case MISSING-1 - Export Failed"],
      [""],
      ["Error:", expect.stringMatching(/not found/)],
      ["Case Number:", "MISSING-1"],
      ["Total Files:", "0"],
    ]);
    // Protected: every sheet is locked for editing.
    for (let n = 1; n <= 4; n++) expect(text(unzipSync(file.bytes)[`xl/worksheets/sheet${n}.xml`])).toMatch(/<sheetProtection password="[0-9A-F]{4}" sheet="1"/);
    // Numbers are numeric cells.
    const caseSheet = workbook.worksheets[1]!;
    const headerRow = caseSheetRows(data.cases[0]!, true).findIndex((row) => row[0] === "File ID") + 1;
    expect(caseSheet.getRow(headerRow).font?.bold ?? caseSheet.getRow(headerRow).getCell(1).font?.bold).toBe(true);
    expect(caseSheet.getRow(headerRow + 1).getCell(29).value).toBe(10.5);

    const summary = sheetRows(workbook.worksheets[0]!, 40);
    expect(summary.slice(0, 3)).toEqual([["CASE DATA - PROTECTED EXPORT"], ["WARNING: This workbook contains evidence data and is protected from editing."], [""]]);
    expect(summary).toContainEqual(["Striae Export Schema Version", "1.0"]);
    expect(summary).toContainEqual(["Total Cases", "3"]);
    expect(summary).toContainEqual(["Failed Exports", "1"]);
    expect(summary).toContainEqual(["Total Files (All Cases)", "3"]);
    expect(summary).toContainEqual([CASE, "2026-11-01T09:00:00.000Z", "Success", "2026-11-22T12:00:00.000Z", `${ANALYST}@lab.example`, ANALYST, "analyst Examiner",
      "State Lab", "1.0", "3", "2", "1", "3", "0", "1", "2026-11-12T08:00:00.000Z", "2026-11-10T08:00:00.000Z", "2026-11-12T08:00:00.000Z"]);
    const failed = summary.find((row) => row[0] === "MISSING-1")!;
    expect(failed[2]).toBe("Failed");
    expect(failed.at(-1)).toMatch(/not found/);
    expect((await auditEntries(ports, ANALYST)).at(-1)).toMatchObject({ action: "case-export", result: "success", details: { caseNumber: "all-cases", fileType: "xlsx" } });
  });

  it("opens in LibreOffice: every sheet converts back to the same cells", async () => {
    if (soffice === undefined) throw missingTool("soffice", "libreoffice-calc-nogui");
    const { store, ports } = await seedCase();
    await putUser(ports, ANALYST, [CASE, "GONE-1"]);
    const file = await exportAllCases(store, ANALYST, "xlsx");
    const dir = await mkdtemp(join(tmpdir(), "fa-xlsx-"));
    try {
      await writeFile(join(dir, "all.xlsx"), file.bytes);
      const converted = spawnSync(soffice!, [
        "--headless",
        `-env:UserInstallation=file://${dir}/profile`,
        "--convert-to",
        "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1",
        "--outdir",
        dir,
        join(dir, "all.xlsx"),
      ], { encoding: "utf8", timeout: 120_000 });
      expect(converted.status, converted.stderr).toBe(0);
      for (const [i, caseData] of file.data.cases.entries()) {
        const name = i === 0 ? `Case_${CASE}` : "Case_GONE-1_Error";
        const rows = parseLooseCsv(await readFile(join(dir, `all-${name}.csv`), "utf8"));
        expect(trimmed(rows)).toEqual(trimmed(caseSheetRows(caseData, true)));
      }
      const summary = trimmed(parseLooseCsv(await readFile(join(dir, "all-Summary.csv"), "utf8")));
      expect(summary).toContainEqual(["Total Cases", "2"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the bulk JSON keeps a failed case with files: [] and summary.exportError", async () => {
    const { store, ports } = await seedCase();
    await putUser(ports, ANALYST, [CASE, "GONE-1"]);
    const data = await collectAllCasesExport(store, ANALYST);
    expect(data.metadata).toMatchObject({ exportSchemaVersion: "1.0", totalCases: 2, totalFiles: 3, totalAnnotations: 2, totalConfirmations: 0, totalConfirmationsRequested: 1 });
    expect(data.summary).toEqual({
      casesWithFiles: 1,
      casesWithAnnotations: 1,
      casesWithoutFiles: 1,
      lastModified: "2026-11-12T08:00:00.000Z",
      earliestAnnotationDate: "2026-11-10T08:00:00.000Z",
      latestAnnotationDate: "2026-11-12T08:00:00.000Z",
    });
    expect(data.cases[1]).toMatchObject({ metadata: { caseNumber: "GONE-1", totalFiles: 0 }, files: [], summary: { exportError: expect.stringMatching(/not found/) } });
    expect(data.cases[0]).toEqual(await collectCaseExport(store, ANALYST, CASE));
    void storageKeys;
  });

  it("sheet names are at most 31 characters, without \\ / ? * [ ] :, unique regardless of case; text is escaped", () => {
    expect(sheetNames(["Summary", "Case_A/B", "Case_a/b", `Case_${"X".repeat(40)}`, `Case_${"x".repeat(40)}`])).toEqual([
      "Summary", "Case_A_B", "Case_a_b~2", `Case_${"X".repeat(26)}`, `Case_${"x".repeat(24)}~2`,
    ]);
    expect(xmlText('a<b>&"c"\u0001_x0041_')).toBe("a&lt;b&gt;&amp;&quot;c&quot;_x0001__x005F_x0041_");
    const bytes = formatAllCasesXlsx({
      metadata: { exportDate: "2026-11-22T12:00:00.000Z", exportedBy: null, totalCases: 0, totalFiles: 0, totalAnnotations: 0, exportSchemaVersion: "1.0" },
      cases: [],
    });
    expect(unzipSync(bytes)["xl/workbook.xml"]).toBeDefined();
  });
});
