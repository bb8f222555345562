/**
 * @module
 * A minimal SpreadsheetML (OOXML) workbook written by hand and zipped with fflate: content
 * types, package and workbook relationships, core and app properties, a stylesheet with a
 * bold font, and one worksheet per sheet with inline strings. That is the part set Excel and
 * LibreOffice both open without repair. Numbers are numeric cells, text is inline text
 * (never a formula), empty cells are left out.
 */
import { zipSync } from "fflate";
import type { TableCell } from "./columns.ts";

/** One worksheet: its name and rows; `boldRows` are row indexes (0-based) shown bold. */
export interface WorkbookSheet {
  /** The sheet name (made valid and unique by {@link sheetNames}). */
  name: string;
  /** The rows. */
  rows: readonly (readonly TableCell[])[];
  /** Rows shown bold (headers), 0-based. */
  boldRows?: readonly number[] | undefined;
  /** Lock the sheet for editing under a random password nobody is told (the client's protected export). */
  protect?: boolean | undefined;
}

/** Workbook properties. */
export interface WorkbookProperties {
  /** `dc:title`. */
  title: string;
  /** `dc:creator`. */
  creator: string;
  /** Created and modified time. */
  created: Date;
}

/** Excel's limit on the characters of one cell. */
const MAX_CELL_CHARS = 32_767;
const MAX_SHEET_NAME = 31;

const encoder = new TextEncoder();

function isXmlChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) ||
    code >= 0x10000;
}

/**
 * Text as XML character data. Characters XML 1.0 cannot hold become OOXML `_xHHHH_` escapes
 * (and a literal `_xHHHH_` is protected as `_x005F_xHHHH_`), which is how Excel stores them.
 */
export function xmlText(value: string): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const code = value.codePointAt(i)!;
    if (code > 0xffff) {
      out += String.fromCodePoint(code);
      i++;
      continue;
    }
    const char = value[i]!;
    if (char === "&") out += "&amp;";
    else if (char === "<") out += "&lt;";
    else if (char === ">") out += "&gt;";
    else if (char === '"') out += "&quot;";
    else if (char === "_" && /^_x[0-9A-Fa-f]{4}_/.test(value.slice(i, i + 7))) out += "_x005F_";
    else if (!isXmlChar(code)) out += `_x${code.toString(16).toUpperCase().padStart(4, "0")}_`;
    else out += char;
  }
  return out;
}

/** The column letters of a 0-based column index (0 → A, 26 → AA). */
function columnName(index: number): string {
  let name = "";
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/**
 * Valid, unique sheet names: `\ / ? * [ ] :` become `_`, at most 31 characters, no
 * leading or trailing apostrophe, unique without regard to case (Excel's rule).
 */
export function sheetNames(wanted: readonly string[]): string[] {
  const used = new Set<string>();
  return wanted.map((name) => {
    let clean = name.replace(/[\\/?*[\]:]/g, "_").replace(/^'|'$/g, "_");
    if (clean === "") clean = "Sheet";
    clean = clean.slice(0, MAX_SHEET_NAME);
    let candidate = clean;
    for (let n = 2; used.has(candidate.toLowerCase()); n++) {
      const suffix = `~${n}`;
      candidate = clean.slice(0, MAX_SHEET_NAME - suffix.length) + suffix;
    }
    used.add(candidate.toLowerCase());
    return candidate;
  });
}

function cellXml(value: TableCell, ref: string, bold: boolean): string {
  const style = bold ? ' s="1"' : "";
  if (typeof value === "number") {
    return Number.isFinite(value) ? `<c r="${ref}"${style}><v>${value}</v></c>` : `<c r="${ref}"${style} t="inlineStr"><is><t>${value}</t></is></c>`;
  }
  if (value === "") return "";
  const clipped = value.length > MAX_CELL_CHARS ? value.slice(0, MAX_CELL_CHARS) : value;
  return `<c r="${ref}"${style} t="inlineStr"><is><t xml:space="preserve">${xmlText(clipped)}</t></is></c>`;
}

/**
 * The legacy 16-bit password verifier of sheet protection (ECMA-376 Part 4, the `password`
 * attribute of `sheetProtection`): what Excel and LibreOffice compare a typed password with.
 */
export function sheetPasswordVerifier(password: string): string {
  let hash = 0;
  for (let i = 0; i < password.length; i++) {
    const value = password.charCodeAt(i) << (i + 1);
    hash ^= (value & 0x7fff) | (value >> 15);
  }
  hash ^= password.length ^ 0xce4b;
  return hash.toString(16).toUpperCase().padStart(4, "0");
}

/** A random password nobody is told: protection that only a new export undoes, as the client's. */
function randomPassword(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => String.fromCharCode(33 + (byte % 94))).join("");
}

function worksheetXml(sheet: WorkbookSheet): string {
  const bold = new Set(sheet.boldRows ?? []);
  const widths: number[] = [];
  const rows: string[] = [];
  sheet.rows.forEach((row, r) => {
    const cells = row.map((value, c) => {
      const length = Math.min(String(value).length, 60);
      widths[c] = Math.max(widths[c] ?? 8, length + 2);
      return cellXml(value, `${columnName(c)}${r + 1}`, bold.has(r));
    }).join("");
    if (cells !== "") rows.push(`<row r="${r + 1}">${cells}</row>`);
  });
  const protection = sheet.protect === true
    ? `<sheetProtection password="${sheetPasswordVerifier(randomPassword())}" sheet="1" objects="1" scenarios="1"/>`
    : "";
  const cols = widths.length === 0
    ? ""
    : `<cols>${widths.map((width, c) => `<col min="${c + 1}" max="${c + 1}" width="${width}" customWidth="1"/>`).join("")}</cols>`;
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n` +
    `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
    `xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
    `${cols}<sheetData>${rows.join("")}</sheetData>${protection}</worksheet>`;
}

const STYLES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n` +
  `<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` +
  `<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font>` +
  `<font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>` +
  `<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>` +
  `<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>` +
  `<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>` +
  `<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>` +
  `<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs>` +
  `<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>` +
  `</styleSheet>`;

const w3cdtf = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, "Z");

/** Builds the `.xlsx` bytes of the sheets (names are made valid and unique). */
export function writeWorkbook(sheets: readonly WorkbookSheet[], properties: WorkbookProperties): Uint8Array<ArrayBuffer> {
  const names = sheetNames(sheets.map((sheet) => sheet.name));
  const head = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n`;
  const files: Record<string, Uint8Array> = {};
  const put = (path: string, xml: string) => {
    files[path] = encoder.encode(xml);
  };
  put(
    "[Content_Types].xml",
    `${head}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
      `<Default Extension="xml" ContentType="application/xml"/>` +
      `<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
      names.map((_, i) =>
        `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`
      ).join("") +
      `<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>` +
      `<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>` +
      `<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/>` +
      `</Types>`,
  );
  put(
    "_rels/.rels",
    `${head}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
      `<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>` +
      `<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>` +
      `<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/>` +
      `</Relationships>`,
  );
  put(
    "docProps/core.xml",
    `${head}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
      `xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" ` +
      `xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
      `<dc:title>${xmlText(properties.title)}</dc:title><dc:creator>${xmlText(properties.creator)}</dc:creator>` +
      `<dcterms:created xsi:type="dcterms:W3CDTF">${w3cdtf(properties.created)}</dcterms:created>` +
      `<dcterms:modified xsi:type="dcterms:W3CDTF">${w3cdtf(properties.created)}</dcterms:modified>` +
      `</cp:coreProperties>`,
  );
  put(
    "docProps/app.xml",
    `${head}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" ` +
      `xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>forensic-annotation</Application></Properties>`,
  );
  put(
    "xl/workbook.xml",
    `${head}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
      `xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
      `<bookViews><workbookView activeTab="0"/></bookViews><sheets>` +
      names.map((name, i) => `<sheet name="${xmlText(name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join("") +
      `</sheets></workbook>`,
  );
  put(
    "xl/_rels/workbook.xml.rels",
    `${head}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
      names.map((_, i) =>
        `<Relationship Id="rId${i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet${
          i + 1
        }.xml"/>`
      ).join("") +
      `<Relationship Id="rId${names.length + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>` +
      `</Relationships>`,
  );
  put("xl/styles.xml", STYLES);
  sheets.forEach((sheet, i) => put(`xl/worksheets/sheet${i + 1}.xml`, worksheetXml(sheet)));
  const zipped = zipSync(files, { level: 6, mtime: properties.created });
  return zipped.buffer instanceof ArrayBuffer ? (zipped as Uint8Array<ArrayBuffer>) : new Uint8Array(zipped);
}
