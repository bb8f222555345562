/**
 * @module
 * The drawing pieces of the report: blocks of text aligned in a column, pills (rounded
 * labels), case/item labels on a translucent ground, the blank confirmation form, and rules.
 * Each measures itself first so the page can be laid out before anything is drawn.
 */
import type { PDFFont, PDFPage, RGB } from "pdf-lib";
import { rgb } from "pdf-lib";
import { fitText } from "./text-layout.ts";

/** Line height as a multiple of the font size. */
const LEADING = 1.2;
/** Baseline below the top of its line, as a multiple of the font size. */
export const ASCENT = 0.93;

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
  return { lines: fitted.lines, size: fitted.size, font, width, height: fitted.lines.length * fitted.size * LEADING };
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
    const y = at.top - i * block.size * LEADING - block.size * ASCENT;
    page.drawText(line, { x, y, size: block.size, font: block.font, color: at.color });
  });
}

/** Colours of a pill. */
export interface PillColours {
  /** Text colour. */
  text: RGB;
  /** Fill colour. */
  fill: RGB;
  /** Outline colour, if any. */
  border?: RGB;
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

const PILL_PAD_X = 8;
const PILL_PAD_Y = 3;

/** Measures a pill of `text`, no wider than `maxWidth`. */
export function pill(text: string, font: PDFFont, maxWidth: number, colours: PillColours): Pill {
  const block = textBlock(text, font, 9, 6, maxWidth - 2 * PILL_PAD_X);
  return { block, colours, width: block.width + 2 * PILL_PAD_X, height: block.height + 2 * PILL_PAD_Y };
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
  page.drawSvgPath(roundedRect(shape.width, shape.height, 8), {
    x: left,
    y: top,
    color: shape.colours.fill,
    ...(shape.colours.border ? { borderColor: shape.colours.border, borderWidth: 0.75 } : {}),
  });
  drawBlock(page, shape.block, { x: left + shape.width / 2, top: top - PILL_PAD_Y, align: "center", color: shape.colours.text });
}

const LABEL_PAD = 3;

/** Draws a case/item label: `block` on a translucent ground, its outer top-left at (`left`, `top`). */
export function drawLabel(page: PDFPage, block: TextBlock, left: number, top: number, text: RGB, ground: RGB): void {
  page.drawRectangle({
    x: left,
    y: top - block.height - 2 * LABEL_PAD,
    width: labelWidth(block),
    height: block.height + 2 * LABEL_PAD,
    color: ground,
    opacity: 0.65,
  });
  drawBlock(page, block, { x: left + LABEL_PAD, top: top - LABEL_PAD, align: "left", color: text });
}

/** Outer width of a label of `block`. */
export function labelWidth(block: TextBlock): number {
  return block.width + 2 * LABEL_PAD;
}

/** Height of the blank confirmation form. */
export const CONFIRMATION_HEIGHT = 74;

/**
 * Draws the blank confirmation form (REPORT.md 7): "Confirmation by:" with a signature line
 * and "Date:" with a line, in a box whose top-left corner is at (`left`, `top`).
 */
export function drawConfirmationForm(page: PDFPage, font: PDFFont, left: number, top: number, width: number): void {
  const ink = rgb(0.15, 0.15, 0.15);
  page.drawRectangle({ x: left, y: top - CONFIRMATION_HEIGHT, width, height: CONFIRMATION_HEIGHT, borderColor: ink, borderWidth: 0.75 });
  const date = "Date:";
  page.drawText("Confirmation by:", { x: left + 8, y: top - 18, size: 9, font, color: ink });
  page.drawLine({ start: { x: left + 8, y: top - 40 }, end: { x: left + width - 8, y: top - 40 }, thickness: 0.5, color: ink });
  page.drawText(date, { x: left + 8, y: top - 62, size: 9, font, color: ink });
  const dateX = left + 12 + font.widthOfTextAtSize(date, 9);
  page.drawLine({ start: { x: dateX, y: top - 63 }, end: { x: left + width - 8, y: top - 63 }, thickness: 0.5, color: ink });
}

/** Draws a horizontal rule from `left` to `right` at `y`. */
export function drawRule(page: PDFPage, left: number, right: number, y: number, thickness = 0.75): void {
  page.drawLine({ start: { x: left, y }, end: { x: right, y }, thickness, color: rgb(0.55, 0.55, 0.55) });
}
