/**
 * @module
 * The drawing pieces of the report: blocks of text aligned in a column, pills (rounded
 * labels), case/item labels on a translucent ground, the blank confirmation form, and rules.
 * Each measures itself first so the page can be laid out before anything is drawn.
 */
import type { PDFFont, PDFPage, RGB } from "pdf-lib";
import { CASE_LABEL, CONFIRMATION_FORM, INK, PILL, type PillColours, RULE_THICKNESS, TEXT } from "./report-style.ts";
import { fitText } from "./text-layout.ts";

/** Text set into a width, measured. */
export interface TextBlock {
  /** The lines. */
  lines: string[];
  /** Font size. */
  size: number;
  /** Font. */
  font: PDFFont;
  /** The widest line's width. */
  width: number;
  /** Height of all lines. */
  height: number;
}

/** Sets `text` into `maxWidth` at `size` (shrinking to `minSize`, then wrapping). */
export function textBlock(text: string, font: PDFFont, size: number, minSize: number, maxWidth: number): TextBlock {
  const fitted = fitText(text, font, size, minSize, maxWidth);
  const width = Math.max(0, ...fitted.lines.map((line) => font.widthOfTextAtSize(line, fitted.size)));
  return { lines: fitted.lines, size: fitted.size, font, width, height: fitted.lines.length * fitted.size * TEXT.leading };
}

/** Where a block goes: `x` is its left edge, centre or right edge per `align`; `top` its top. */
export interface Placement {
  /** Left edge, centre or right edge, per `align`. */
  x: number;
  /** Top of the first line. */
  top: number;
  /** How lines align on `x`. */
  align: "left" | "center" | "right";
  /** Text colour. */
  color: RGB;
}

/** Draws the lines of a block. */
export function drawBlock(page: PDFPage, block: TextBlock, at: Placement): void {
  block.lines.forEach((line, i) => {
    const lineWidth = block.font.widthOfTextAtSize(line, block.size);
    const x = at.align === "left" ? at.x : at.align === "center" ? at.x - lineWidth / 2 : at.x - lineWidth;
    const y = at.top - i * block.size * TEXT.leading - block.size * TEXT.ascent;
    page.drawText(line, { x, y, size: block.size, font: block.font, color: at.color });
  });
}

/** A pill: a text block on a rounded ground, measured. */
export interface Pill {
  /** The text. */
  block: TextBlock;
  /** Its colours. */
  colours: PillColours;
  /** Outer width. */
  width: number;
  /** Outer height. */
  height: number;
}

/** Measures a pill of `text`, no wider than `maxWidth`. */
export function pill(text: string, font: PDFFont, maxWidth: number, colours: PillColours): Pill {
  const block = textBlock(text, font, PILL.size, PILL.minSize, maxWidth - 2 * PILL.padX);
  return { block, colours, width: block.width + 2 * PILL.padX, height: block.height + 2 * PILL.padY };
}

/** An SVG path of a rounded rectangle with its top-left corner at the origin (SVG y points down). */
function roundedRect(width: number, height: number, radius: number): string {
  const r = Math.min(radius, width / 2, height / 2);
  return [
    `M ${r} 0 H ${width - r} A ${r} ${r} 0 0 1 ${width} ${r} V ${height - r}`,
    `A ${r} ${r} 0 0 1 ${width - r} ${height} H ${r} A ${r} ${r} 0 0 1 0 ${height - r} V ${r} A ${r} ${r} 0 0 1 ${r} 0 Z`,
  ].join(" ");
}

/** Draws a pill with its top-left corner at (`left`, `top`). */
export function drawPill(page: PDFPage, shape: Pill, left: number, top: number): void {
  page.drawSvgPath(roundedRect(shape.width, shape.height, PILL.cornerRadius), {
    x: left,
    y: top,
    color: shape.colours.fill,
    ...(shape.colours.border ? { borderColor: shape.colours.border, borderWidth: PILL.borderWidth } : {}),
  });
  drawBlock(page, shape.block, { x: left + shape.width / 2, top: top - PILL.padY, align: "center", color: shape.colours.text });
}

/** Draws a case/item label: `block` on a translucent ground, its outer top-left at (`left`, `top`). */
export function drawLabel(page: PDFPage, block: TextBlock, left: number, top: number, text: RGB, ground: RGB): void {
  page.drawRectangle({
    x: left,
    y: top - block.height - 2 * CASE_LABEL.padding,
    width: labelWidth(block),
    height: block.height + 2 * CASE_LABEL.padding,
    color: ground,
    opacity: CASE_LABEL.groundOpacity,
  });
  drawBlock(page, block, { x: left + CASE_LABEL.padding, top: top - CASE_LABEL.padding, align: "left", color: text });
}

/** Outer width of a label of `block`. */
export function labelWidth(block: TextBlock): number {
  return block.width + 2 * CASE_LABEL.padding;
}

/**
 * Draws the blank confirmation form (docs/report.md "Page layout"): "Confirmation by:" with a signature line
 * and "Date:" with a line, in a box whose top-left corner is at (`left`, `top`).
 */
export function drawConfirmationForm(
  page: PDFPage,
  font: PDFFont,
  left: number,
  top: number,
  width: number,
  signed?: { name: string; meaning: string; date: string },
): void {
  const form = CONFIRMATION_FORM;
  const ink = INK.form;
  page.drawRectangle({ x: left, y: top - form.height, width, height: form.height, borderColor: ink, borderWidth: form.borderWidth });
  const date = "Date:";
  const textLeft = left + form.padding;
  const lineRight = left + width - form.padding;
  page.drawText("Confirmation by:", { x: textLeft, y: top - form.signatureLabelDrop, size: form.size, font, color: ink });
  const signatureY = top - form.signatureLineDrop;
  page.drawLine({ start: { x: textLeft, y: signatureY }, end: { x: lineRight, y: signatureY }, thickness: form.lineThickness, color: ink });
  page.drawText(date, { x: textLeft, y: top - form.dateLabelDrop, size: form.size, font, color: ink });
  const dateX = left + form.dateLineIndent + font.widthOfTextAtSize(date, form.size);
  const dateY = top - form.dateLineDrop;
  page.drawLine({ start: { x: dateX, y: dateY }, end: { x: lineRight, y: dateY }, thickness: form.lineThickness, color: ink });
  if (signed === undefined) return;
  // A verified review signature (docs/review.md): the name on the line, its meaning under it, the time on the date line.
  const room = lineRight - textLeft;
  const fitted = (text: string, size: number) => fitLine(text, font, size, room);
  const nameSize = 10;
  page.drawText(fitted(signed.name, nameSize), { x: textLeft, y: signatureY + 3, size: nameSize, font, color: ink });
  page.drawText(fitted(signed.meaning, 7), { x: textLeft, y: signatureY - 9, size: 7, font, color: ink });
  page.drawText(fitLine(signed.date, font, form.size, lineRight - dateX), { x: dateX + 2, y: dateY + 3, size: form.size, font, color: ink });
}

/** `text` cut with "…" to fit `width` at `size`. */
function fitLine(text: string, font: PDFFont, size: number, width: number): string {
  if (font.widthOfTextAtSize(text, size) <= width) return text;
  let cut = text;
  while (cut.length > 0 && font.widthOfTextAtSize(`${cut}…`, size) > width) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** Draws a horizontal rule from `left` to `right` at `y`. */
export function drawRule(page: PDFPage, left: number, right: number, y: number, thickness: number = RULE_THICKNESS): void {
  page.drawLine({ start: { x: left, y }, end: { x: right, y }, thickness, color: INK.rule });
}
