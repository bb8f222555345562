/**
 * @module
 * The printable audit-trail report (docs/storage.md#audit-export): every entry with its seq,
 * receipt time, action, result and hash, and on every page the verification result, the
 * head's hash and the state of its signature, so any page shown alone says what it belongs to.
 * pdf-lib with the report's fonts (DejaVu Sans), as the case report.
 */
import { type PDFFont, type PDFPage, rgb } from "pdf-lib";
import { createNativeFlateDocument, saveWithNativeFlate } from "./native-flate.ts";
import type { AuditTrailInput, AuditVerification } from "../audit/verify.ts";
import { embedReportFonts } from "./layout/fonts.ts";

/** Options of {@link renderAuditReport}. */
export interface AuditReportOptions {
  /** The time printed as the report's date. */
  generatedAt: Date;
}

const PAGE = { width: 595.28, height: 841.89 }; // A4
const MARGIN = 40;
const LINE = 10;
const HEADER_HEIGHT = 74;
const FOOTER_HEIGHT = 20;
const BLACK = rgb(0, 0, 0);
const GREY = rgb(0.35, 0.35, 0.35);
const RED = rgb(0.7, 0, 0);
const GREEN = rgb(0, 0.45, 0.1);

// Entries are what clients sent: anything outside printable Latin-1 is shown as "?" rather than failing the report.
const printable = (value: unknown): string => {
  const text = value === undefined || value === null ? "" : typeof value === "string" ? value : JSON.stringify(value);
  return text.replace(/[^\u0020-\u007e\u00a0-\u00ff]/g, "?");
};

function fit(text: string, font: PDFFont, size: number, width: number): string {
  if (font.widthOfTextAtSize(text, size) <= width) return text;
  let cut = text;
  while (cut.length > 1 && font.widthOfTextAtSize(`${cut}...`, size) > width) cut = cut.slice(0, -1);
  return `${cut}...`;
}

/** The report as PDF bytes. */
export async function renderAuditReport(input: AuditTrailInput, result: AuditVerification, options: AuditReportOptions): Promise<Uint8Array> {
  const doc = await createNativeFlateDocument();
  doc.setTitle(`Audit trail of ${printable(input.userId)}`);
  doc.setCreationDate(options.generatedAt);
  const fonts = await embedReportFonts(doc, []);
  const verdict = result.valid
    ? "Verification: INTACT - every entry's hash and link checked"
    : `Verification: TAMPERED - first bad entry seq ${result.firstBad?.seq ?? "?"} on ${result.firstBad?.date ?? "?"}: ${result.firstBad?.reason ?? ""}`;
  const headLine = result.head === null ? "Head: none" : `Head: seq ${result.head.seq}, hash ${result.head.hash}`;
  const signatureLine = result.head === null
    ? "Head signature: no head"
    : `Head signature: ${result.head.signature}${result.head.unsignedUntil === undefined ? "" : ` (entries up to seq ${result.head.unsignedUntil} appended unsigned)`}` +
      `${result.head.pending ? " (newest entry still in the head)" : ""} - head written ${result.head.updatedAt}`;
  const columns = [
    { title: "seq", x: 0, width: 38 },
    { title: "date / position", x: 40, width: 72 },
    { title: "received (UTC)", x: 114, width: 118 },
    { title: "action", x: 234, width: 110 },
    { title: "result", x: 346, width: 50 },
    { title: "email", x: 398, width: 117 },
  ];
  const pages: PDFPage[] = [];
  let page: PDFPage | undefined;
  let y = 0;
  const newPage = () => {
    page = doc.addPage([PAGE.width, PAGE.height]);
    pages.push(page);
    const top = PAGE.height - MARGIN;
    page.drawText(fit(`Audit trail of ${printable(input.userId)} - ${result.from ?? "-"} to ${result.to ?? "-"}`, fonts.bold, 11, PAGE.width - 2 * MARGIN), { x: MARGIN, y: top - 11, size: 11, font: fonts.bold, color: BLACK });
    page.drawText(fit(verdict, fonts.bold, 8.5, PAGE.width - 2 * MARGIN), { x: MARGIN, y: top - 25, size: 8.5, font: fonts.bold, color: result.valid ? GREEN : RED });
    page.drawText(headLine, { x: MARGIN, y: top - 37, size: 7, font: fonts.regular, color: BLACK });
    page.drawText(fit(signatureLine, fonts.regular, 7, PAGE.width - 2 * MARGIN), { x: MARGIN, y: top - 47, size: 7, font: fonts.regular, color: BLACK });
    for (const column of columns) page.drawText(column.title, { x: MARGIN + column.x, y: top - 62, size: 7, font: fonts.bold, color: GREY });
    page.drawLine({ start: { x: MARGIN, y: top - 66 }, end: { x: PAGE.width - MARGIN, y: top - 66 }, thickness: 0.5, color: GREY });
    y = top - HEADER_HEIGHT - LINE;
  };
  newPage();
  const badSeq = new Map(result.days.filter((day) => !day.valid).map((day) => [day.date, day.firstBadSeq]));
  for (const day of input.days) {
    day.entries.forEach((item, index) => {
      if (y < MARGIN + FOOTER_HEIGHT + 2 * LINE) newPage();
      const entry = item !== null && typeof item === "object" ? item as Record<string, unknown> : {};
      const bad = badSeq.get(day.date) !== undefined && entry.seq === badSeq.get(day.date);
      const colour = bad ? RED : BLACK;
      const cells = [
        entry.seq === undefined ? "unchained" : printable(entry.seq),
        `${day.date} #${index}`,
        printable(entry.receivedAt ?? entry.timestamp),
        printable(entry.action),
        printable(entry.result),
        printable(entry.userEmail),
      ];
      cells.forEach((text, i) => {
        const column = columns[i]!;
        page!.drawText(fit(text, fonts.regular, 7, column.width), { x: MARGIN + column.x, y, size: 7, font: fonts.regular, color: colour });
      });
      y -= LINE - 1;
      if (typeof entry.hash === "string") {
        page!.drawText(fit(`hash ${printable(entry.hash)}  prev ${printable(entry.prevHash).slice(0, 16)}...`, fonts.regular, 6, PAGE.width - 2 * MARGIN - 40), { x: MARGIN + 40, y, size: 6, font: fonts.regular, color: GREY });
      }
      y -= LINE + 1;
    });
  }
  const generated = `Generated ${options.generatedAt.toISOString()} - ${result.entries} entries, ${result.unchained} unchained`;
  pages.forEach((each, i) => {
    each.drawText(`${generated} - page ${i + 1} of ${pages.length}`, { x: MARGIN, y: MARGIN - 10, size: 7, font: fonts.regular, color: GREY });
  });
  return await saveWithNativeFlate(doc);
}
