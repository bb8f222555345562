/**
 * Issue 42 item 3: a case CSV whose notes, class notes, custom classes or box labels begin as a
 * formula must not run as one in a spreadsheet (LibreOffice Calc reads it here), also after
 * another lab imports the case, and its own hash must still verify.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import ExcelJS from "exceljs";
import { exportCase, exportCaseZip, importCase, verifyCaseCsv } from "../../src/core/exchange/mod.ts";
import { readCaseCsv } from "../../src/core/exchange/formats/csv.ts";
import { stripWarningBlock } from "../../src/core/exchange/formats/warning-block.ts";
import { storageKeys } from "../../src/core/storage/keys.ts";
import { ANALYST, CASE, putJson, readJson, REVIEWER, seedCase, streamBytes, text } from "./exchange-fixtures.ts";
import { missingTool } from "../helpers/system-tools.ts";

/** What a user typed, each one a formula to a spreadsheet, and the field it went into. */
const HOSTILE = {
  additionalNotes: "=1+1",
  classNote: "@SUM(1)",
  customClass: "+cmd",
  leftItem: "\t=1+1",
  rightItem: "\r=2+2",
  boxLabel: "-2+3",
};

async function seedHostileCase() {
  const seeded = await seedCase();
  const key = storageKeys.annotations(ANALYST, CASE, seeded.files[0]!.id);
  const annotations = await readJson(seeded.ports, key);
  await putJson(seeded.ports, key, {
    ...annotations,
    additionalNotes: HOSTILE.additionalNotes,
    classNote: HOSTILE.classNote,
    customClass: HOSTILE.customClass,
    leftItem: HOSTILE.leftItem,
    rightItem: HOSTILE.rightItem,
    boxAnnotations: [{ ...annotations.boxAnnotations[0], label: HOSTILE.boxLabel }],
  });
  return seeded;
}

/** The raw fields of the CSV's data block (every field is quoted; quotes doubled). */
function rawFields(csv: string): string[] {
  const unwarned = stripWarningBlock(csv);
  const block = unwarned.slice(unwarned.indexOf("\n\n") + 2);
  return [...block.matchAll(/"((?:[^"]|"")*)"/g)].map((match) => match[1]!.replaceAll('""', '"'));
}

const soffice = ["soffice", "libreoffice"].find((name) => spawnSync(name, ["--version"], { encoding: "utf8" }).status === 0);

/** The CSV opened by LibreOffice Calc (its default CSV import, formulas evaluated) and saved as a workbook, read back. */
async function openInCalc(csv: string): Promise<ExcelJS.Worksheet> {
  if (soffice === undefined) throw missingTool("soffice", "libreoffice-calc-nogui");
  const dir = await mkdtemp(join(tmpdir(), "fa-csv-formula-"));
  try {
    await writeFile(join(dir, "case.csv"), csv);
    const converted = spawnSync(soffice, ["--headless", `-env:UserInstallation=file://${dir}/profile`, "--convert-to", "xlsx", "--outdir", dir, join(dir, "case.csv")], { encoding: "utf8", timeout: 120_000 });
    expect(converted.status, converted.stderr).toBe(0);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(join(dir, "case.xlsx"));
    return workbook.worksheets[0]!;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every cell of a sheet: its value as exceljs reads it (a formula cell is `{formula, result}`). */
function cellsOf(sheet: ExcelJS.Worksheet): unknown[] {
  const cells: unknown[] = [];
  sheet.eachRow((row) => row.eachCell((cell) => void cells.push(cell.value)));
  return cells;
}

/** Asserts what a user sees: every hostile field written with a leading `'`, none a formula in Calc, the hash verifying. */
async function expectNeutralised(csv: string): Promise<void> {
  const fields = rawFields(csv);
  for (const value of Object.values(HOSTILE)) {
    expect(fields).toContain(`'${value}`);
    expect(fields).not.toContain(value);
  }
  expect(await verifyCaseCsv(csv)).toMatchObject({ valid: true });

  const cells = cellsOf(await openInCalc(csv));
  const formulas = cells.filter((value) => value !== null && typeof value === "object" && ("formula" in value || "sharedFormula" in value));
  expect(formulas).toEqual([]);
  for (const value of [HOSTILE.additionalNotes, HOSTILE.classNote, HOSTILE.customClass, HOSTILE.boxLabel]) expect(cells).toContain(`'${value}`);
  // Tab and carriage return come back as text that starts with the mark, whatever Calc makes of the control character.
  for (const value of [HOSTILE.leftItem, HOSTILE.rightItem]) {
    expect(cells.some((cell) => typeof cell === "string" && cell.startsWith("'") && cell.endsWith(value.slice(1)))).toBe(true);
  }
}

describe("the case CSV neutralises formulas (issue 42 item 3)", () => {
  it("notes, class note, custom class, box label and items starting = + - @ tab CR come out as text in LibreOffice; the hash verifies", async () => {
    const { store } = await seedHostileCase();
    const file = await exportCase(store, ANALYST, CASE, "csv");
    const csv = text(file.bytes);
    await expectNeutralised(csv);
  }, 180_000);

  it("a case number starting with - is marked in the CSV, and the CSV reader (the preview of a CSV package) takes the mark off", async () => {
    const { store } = await seedCase({ caseNumber: "-7" });
    const csv = text((await exportCase(store, ANALYST, "-7", "csv")).bytes);
    expect(rawFields(csv)).toContain("'-7");
    expect(await readCaseCsv(csv)).toMatchObject({ caseNumber: "-7", fileCount: 3, verification: { valid: true } });
  });

  it("after another lab imports the case: the package verifies, the data keeps the text as typed, the reviewer's CSV is neutralised", async () => {
    const { store, ports } = await seedHostileCase();
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE));
    const result = await importCase(store, zip, REVIEWER);
    expect(result).toMatchObject({ success: true, filesImported: 3, annotationsImported: 2 });

    const document = await readJson(ports, storageKeys.case(REVIEWER, CASE));
    const firstId = document.files[0].id as string;
    expect(await readJson(ports, storageKeys.annotations(REVIEWER, CASE, firstId))).toMatchObject({
      additionalNotes: HOSTILE.additionalNotes,
      classNote: HOSTILE.classNote,
      customClass: HOSTILE.customClass,
    });

    const file = await exportCase(store, REVIEWER, CASE, "csv");
    await expectNeutralised(text(file.bytes));
  }, 180_000);
});
