/**
 * @module
 * The annotated PDF report (docs/report.md), drawn with pdf-lib: header, index, image with its
 * case/item labels and boxes, the row of pills, the confirmation form and notes, and a footer
 * with page numbers on every page. Usable without HTTP.
 *
 * @example
 * ```ts
 * const pdf = await renderReport(
 *   { imageUrl: "data:image/png;base64,...", caseNumber: "C-1", annotationData: null, activeAnnotations: [] },
 *   { imageHosts: [], timeoutMs: 10_000, maxImageBytes: 25 * 1024 * 1024, serviceName: "Lab PDF service" },
 * );
 * ```
 */
import type { PDFFont, PDFPage } from "pdf-lib";
import { type Bytes, type Clock, systemClock } from "../ports.ts";
import type { PdfAnnotationData, PdfRequest } from "../schemas/pdf.ts";
import { isDark, parseColour, pdfColour, type Rgb } from "./layout/colour.ts";
import { assertPrintable, embedReportFonts, printableText, type ReportFonts } from "./layout/fonts.ts";
import { parseHostList } from "./image/host-policy.ts";
import { createNativeFlateDocument, saveWithNativeFlate } from "./native-flate.ts";
import { loadReportImage } from "./image/image-source.ts";
import { decodeBudget, type EmbeddedImage, embedReportImage, type PlannedReportImage, planReportImage } from "./image/image-embed.ts";
import { boxRect, fitImage, type Rect } from "./layout/page-layout.ts";
import { parseReportRequest, type ReportInput, type ReportRequest } from "./report-request.ts";
import { LineBreaker, singleLine } from "./layout/text-layout.ts";
import {
  drawBlock,
  drawConfirmationForm,
  drawLabel,
  drawPill,
  drawRule,
  labelWidth,
  type Pill,
  pill,
  type TextBlock,
  textBlock,
} from "./layout/elements.ts";
import {
  CASE_LABEL,
  CLASS_PILL,
  CONFIRMATION_FORM,
  CONFIRMATION_WIDTH,
  CONTENT_WIDTH,
  DEFAULT_CASE_FONT_COLOR,
  FOOTER,
  HEADER,
  IMAGE,
  INDEX_LINE,
  INK,
  MAX_IMAGE_HEIGHT,
  NOTES,
  PAGE,
  PILL,
  SUBCLASS_PILL,
  SUPPORT_PILLS,
  TEXT,
} from "./layout/report-style.ts";

export { DEFAULT_CASE_FONT_COLOR } from "./layout/report-style.ts";

/** How a report is rendered: where its image may come from, limits, and the footer's name. */
export interface ReportOptions {
  /** Hosts the image may be fetched from (`PDF_IMAGE_HOSTS` entries: `host`, `host:port` or a URL). */
  imageHosts: readonly string[];
  /** Deadline of the image fetch, redirects and body included, in milliseconds. */
  timeoutMs: number;
  /** The largest image, in bytes (fetched or in a `data:` URL). */
  maxImageBytes: number;
  /** The name in the footer's "Notes formatted by …". */
  serviceName: string;
  /** The fetch to use; default the global `fetch`. */
  fetch?: typeof fetch;
  /** Dates the report when `currentDate` is absent, and the PDF's metadata; default the system clock. */
  clock?: Clock;
  /**
   * A review signature the caller verified (the PDF worker, with the service's keys), printed in
   * the confirmation form: who signed, what it means and when (docs/review.md). Never taken from
   * the request itself, so nothing a client sends is printed as verified.
   */
  signedConfirmation?: SignedConfirmation;
}

/** What the confirmation form prints of a verified review signature. */
export interface SignedConfirmation {
  /** The signer's printed name. */
  printedName: string;
  /** The signer's user id (`sub`). */
  signer: string;
  /** `verified`, `reviewed` or `disagreed`. */
  meaning: string;
  /** When it was signed (ISO 8601, the service's time). */
  signedAt: string;
  /** The file it signed, and the version of its annotations, so a reader can match it to the page. */
  record?: { fileId: string; version: number | null } | undefined;
}

/** MM/DD/YYYY of a date, in UTC, as clients write `currentDate`. */
function displayDate(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${pad(date.getUTCMonth() + 1)}/${pad(date.getUTCDate())}/${date.getUTCFullYear()}`;
}

const present = (text: string | null | undefined): text is string => text !== undefined && text !== null && text.trim() !== "";

/** What a request asks to be printed, after layers are applied; every text checked printable. */
interface ReportContent {
  date: string;
  caseNumber: string;
  index: string | undefined;
  indexColour: Rgb | undefined;
  labels: { left: string | undefined; right: string | undefined };
  caseFontColour: Rgb;
  boxes: NonNullable<PdfAnnotationData["boxAnnotations"]>;
  support: (typeof SUPPORT_PILLS)[keyof typeof SUPPORT_PILLS] | undefined;
  classText: string | undefined;
  subclass: boolean;
  confirmation: boolean;
  signed: { name: string; meaning: string; date: string } | undefined;
  notes: string | undefined;
  footer: { formattedBy: string; company: string | undefined; updated: string | undefined };
}

/** Applies the layers of `activeAnnotations`, normalises every text and checks it against the fonts. */
function contentOf(request: PdfRequest, options: ReportOptions, now: Date): ReportContent {
  const data: PdfAnnotationData = request.annotationData ?? {};
  const layers = new Set(request.activeAnnotations);
  const join = (...parts: (string | undefined)[]) => parts.filter(present).map((p) => printableText(p.trim())).join(" ");
  const text = (value: string | null | undefined) => (present(value) ? printableText(value) : undefined);
  const left = join(data.leftCase, data.leftItem);
  const right = join(data.rightCase, data.rightItem);
  const classLabel = present(data.customClass) ? data.customClass : data.classType;
  const classText = join(classLabel, present(data.classNote) ? `(${data.classNote.trim()})` : undefined);
  const content: ReportContent = {
    date: printableText(present(request.currentDate) ? request.currentDate : displayDate(now)),
    caseNumber: printableText(request.caseNumber),
    index: layers.has("index") && data.indexType === "number" && present(data.indexNumber) ? `Index: ${printableText(data.indexNumber.trim())}` : undefined,
    indexColour: layers.has("index") && data.indexType === "color" && data.indexColor !== undefined
      ? parseColour(data.indexColor, "annotationData.indexColor")
      : undefined,
    labels: layers.has("number") ? { left: left || undefined, right: right || undefined } : { left: undefined, right: undefined },
    caseFontColour: parseColour(data.caseFontColor ?? DEFAULT_CASE_FONT_COLOR, "annotationData.caseFontColor"),
    boxes: layers.has("box") ? data.boxAnnotations ?? [] : [],
    support: layers.has("id") && data.supportLevel !== undefined ? SUPPORT_PILLS[data.supportLevel] : undefined,
    classText: layers.has("class") && classText !== "" ? classText : undefined,
    subclass: layers.has("class") && data.hasSubclass === true,
    confirmation: data.includeConfirmation === true,
    signed: data.includeConfirmation === true && options.signedConfirmation !== undefined
      ? {
        name: printableText(options.signedConfirmation.printedName),
        meaning: printableText(`${options.signedConfirmation.meaning}, electronically signed by ${options.signedConfirmation.signer}${
          options.signedConfirmation.record === undefined
            ? ""
            : ` for file ${options.signedConfirmation.record.fileId}${options.signedConfirmation.record.version === null ? "" : ` v${options.signedConfirmation.record.version}`}`
        }`),
        date: printableText(options.signedConfirmation.signedAt),
      }
      : undefined,
    notes: layers.has("notes") ? text(data.additionalNotes) : undefined,
    footer: {
      formattedBy: printableText(`Notes formatted by ${options.serviceName}`),
      company: text(request.userCompany),
      updated: present(request.notesUpdatedFormatted) ? printableText(`Notes updated ${request.notesUpdatedFormatted}`) : undefined,
    },
  };
  const checks: [string | undefined, "regular" | "bold", string][] = [
    [content.date, "bold", "currentDate"],
    [content.caseNumber, "bold", "caseNumber"],
    [content.index, "bold", "annotationData.indexNumber"],
    [content.labels.left, "bold", "annotationData.leftCase/leftItem"],
    [content.labels.right, "bold", "annotationData.rightCase/rightItem"],
    [content.classText, "bold", "annotationData.customClass/classType/classNote"],
    [content.notes, "regular", "annotationData.additionalNotes"],
    [content.footer.formattedBy, "regular", "the service name"],
    [content.footer.company, "bold", "userCompany"],
    [content.footer.updated, "regular", "notesUpdatedFormatted"],
  ];
  for (const [printed, face, field] of checks) if (printed !== undefined) assertPrintable(printed, face, field);
  return content;
}

/** The footer, measured once and drawn on every page with its page number. */
interface Footer {
  left: TextBlock;
  centre: TextBlock | undefined;
  right: TextBlock | undefined;
  height: number;
}

function measureFooter(content: ReportContent, fonts: ReportFonts): Footer {
  const third = CONTENT_WIDTH / FOOTER.columns - FOOTER.gap;
  const set = (text: string, font: PDFFont) => textBlock(text, font, FOOTER.size, FOOTER.minSize, third);
  const left = set(content.footer.formattedBy, fonts.regular);
  const centre = content.footer.company === undefined ? undefined : set(content.footer.company, fonts.bold);
  const right = content.footer.updated === undefined ? undefined : set(content.footer.updated, fonts.regular);
  const pageLine = FOOTER.size * TEXT.leading;
  const height = Math.max(left.height, centre?.height ?? 0, (right?.height ?? 0) + pageLine);
  return { left, centre, right, height };
}

/** The top of the footer's rule: content stays above it. */
const footerTop = (footer: Footer): number => PAGE.margin + footer.height + FOOTER.ruleGap;

function drawFooter(page: PDFPage, footer: Footer, fonts: ReportFonts, pageNumber: number, pageCount: number): void {
  const top = PAGE.margin + footer.height;
  const right = PAGE.width - PAGE.margin;
  drawRule(page, PAGE.margin, right, footerTop(footer), FOOTER.ruleThickness);
  drawBlock(page, footer.left, { x: PAGE.margin, top, align: "left", color: INK.muted });
  if (footer.centre) drawBlock(page, footer.centre, { x: PAGE.width / 2, top, align: "center", color: INK.text });
  let rightTop = top;
  if (footer.right) {
    drawBlock(page, footer.right, { x: right, top, align: "right", color: INK.muted });
    rightTop -= footer.right.height;
  }
  const number = textBlock(`Page ${pageNumber} of ${pageCount}`, fonts.regular, FOOTER.size, FOOTER.size, CONTENT_WIDTH / FOOTER.columns);
  drawBlock(page, number, { x: right, top: rightTop, align: "right", color: INK.muted });
}

/** Draws the header (date left, case number right, both bold, a rule beneath); returns the y below it. */
function drawHeader(page: PDFPage, content: ReportContent, fonts: ReportFonts): number {
  const top = PAGE.height - PAGE.margin;
  const half = CONTENT_WIDTH / 2 - HEADER.gap;
  const date = textBlock(content.date, fonts.bold, HEADER.size, HEADER.minSize, half);
  const caseNumber = textBlock(content.caseNumber, fonts.bold, HEADER.size, HEADER.minSize, half);
  drawBlock(page, date, { x: PAGE.margin, top, align: "left", color: INK.text });
  drawBlock(page, caseNumber, { x: PAGE.width - PAGE.margin, top, align: "right", color: INK.text });
  const ruleY = top - Math.max(date.height, caseNumber.height) - HEADER.ruleGap;
  drawRule(page, PAGE.margin, PAGE.width - PAGE.margin, ruleY);
  return ruleY - HEADER.below;
}

/** The pills of the row under the image, measured: support level, class, subclass. */
function measurePills(content: ReportContent, fonts: ReportFonts): { left?: Pill; centre?: Pill; right?: Pill; height: number } {
  const side = CONTENT_WIDTH * PILL.sideShare;
  const pills = {
    left: content.support && pill(content.support.label, fonts.bold, side, { text: content.support.text, fill: content.support.fill, border: content.support.text }),
    centre: content.classText === undefined ? undefined : pill(content.classText, fonts.bold, CONTENT_WIDTH / 2 - PILL.centreGap, CLASS_PILL),
    right: content.subclass ? pill("POTENTIAL SUBCLASS", fonts.bold, side, SUBCLASS_PILL) : undefined,
  };
  const height = Math.max(0, pills.left?.height ?? 0, pills.centre?.height ?? 0, pills.right?.height ?? 0);
  return { ...pills, height };
}

/** Draws the image with its index border, case/item labels and boxes. */
function drawImage(page: PDFPage, image: EmbeddedImage, rect: Rect, content: ReportContent, fonts: ReportFonts): void {
  image.draw(page, rect);
  if (content.indexColour) {
    // Outside the image, so it hides no pixel and moves no box.
    const border = IMAGE.indexBorderWidth;
    page.drawRectangle({
      x: rect.x - border / 2,
      y: rect.y - border / 2,
      width: rect.width + border,
      height: rect.height + border,
      borderColor: pdfColour(content.indexColour),
      borderWidth: border,
    });
  }
  for (const box of content.boxes) {
    const r = boxRect(rect, box);
    page.drawRectangle({ x: r.x, y: r.y, width: r.width, height: r.height, borderColor: pdfColour(parseColour(box.color)), borderWidth: IMAGE.boxStrokeWidth });
  }
  const text = pdfColour(content.caseFontColour);
  // A dark label colour gets a light ground, a light one a dark ground.
  const ground = isDark(content.caseFontColour) ? INK.white : INK.black;
  const inset = Math.min(CASE_LABEL.maxInset, rect.width * CASE_LABEL.insetShare);
  const maxWidth = rect.width / 2 - 2 * inset - CASE_LABEL.gap;
  const fit = (label: string | undefined, size: number) => (label === undefined ? undefined : textBlock(label, fonts.label, size, CASE_LABEL.minSize, maxWidth));
  // Both labels at one size: the smaller of the sizes each would get alone.
  const size = Math.min(fit(content.labels.left, CASE_LABEL.size)?.size ?? CASE_LABEL.size, fit(content.labels.right, CASE_LABEL.size)?.size ?? CASE_LABEL.size);
  const left = fit(content.labels.left, size);
  const right = fit(content.labels.right, size);
  const top = rect.y + rect.height - inset;
  if (left) drawLabel(page, left, rect.x + inset, top, text, ground);
  if (right) drawLabel(page, right, rect.x + rect.width - inset - labelWidth(right), top, text, ground);
}

/** Draws lines of notes from `breaker` between `top` and `bottom`, as many as fit. */
function drawNotesLines(page: PDFPage, breaker: LineBreaker, font: PDFFont, left: number, width: number, top: number, bottom: number): void {
  let y = top - NOTES.size * TEXT.ascent;
  while (breaker.hasMore() && y >= bottom) {
    const line = breaker.next(width);
    if (line === null) break;
    page.drawText(line, { x: left, y, size: NOTES.size, font, color: INK.text });
    y -= NOTES.leading;
  }
}

/** Draws the notes heading; returns the top of the first line. */
function drawNotesHeading(page: PDFPage, fonts: ReportFonts, text: string, left: number, top: number): number {
  page.drawText(text, { x: left, y: top - NOTES.headingSize * TEXT.ascent, size: NOTES.headingSize, font: fonts.bold, color: INK.text });
  return top - NOTES.headingHeight;
}

/**
 * Renders the report of a request (docs/report.md). Validates the request (a 400
 * `ServiceError` names the field), checks every text is printable, loads the image, and
 * returns the PDF's bytes.
 */
export async function renderReport(input: ReportInput, options: ReportOptions): Promise<Bytes> {
  return await renderValidatedReport(parseReportRequest(input), options);
}

/** Renders a request {@link parseReportRequest} has already validated (the PDF worker's path). */
export async function renderValidatedReport(request: ReportRequest, options: ReportOptions): Promise<Bytes> {
  // One instant for the printed date and the PDF's metadata.
  const now = (options.clock ?? systemClock).now();
  const content = contentOf(request, options, now);
  const loaded = await loadReportImage(request.imageUrl, {
    hosts: parseHostList(options.imageHosts),
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxImageBytes,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  // A decoded image is held until the PDF is saved: the reservation covers the whole render.
  const planned = planReportImage(loaded);
  if (planned.decodeBytes === 0) return await renderWithImage(content, planned, options, now);
  return await decodeBudget.run(planned.decodeBytes, () => renderWithImage(content, planned, options, now));
}

/** Renders the report once its image is loaded and planned. */
async function renderWithImage(content: ReportContent, loaded: PlannedReportImage, options: ReportOptions, now: Date): Promise<Bytes> {
  const doc = await createNativeFlateDocument();
  doc.setTitle(`Report ${singleLine(content.caseNumber)}`);
  doc.setCreator(options.serviceName);
  doc.setProducer("pdf-lib");
  doc.setCreationDate(now);
  doc.setModificationDate(now);
  const labels = [content.labels.left, content.labels.right].filter((label) => label !== undefined);
  const fonts = await embedReportFonts(doc, labels);
  const image = await embedReportImage(doc, loaded);

  const footer = measureFooter(content, fonts);
  const bottom = footerTop(footer) + FOOTER.clearance;
  const pages: PDFPage[] = [];
  const newPage = (): { page: PDFPage; top: number } => {
    const page = doc.addPage([PAGE.width, PAGE.height]);
    pages.push(page);
    return { page, top: drawHeader(page, content, fonts) };
  };

  // Page 1: header, index, image, pills, confirmation and notes.
  let { page, top: cursor } = newPage();
  if (content.index !== undefined) {
    const index = textBlock(content.index, fonts.bold, INDEX_LINE.size, INDEX_LINE.minSize, CONTENT_WIDTH);
    drawBlock(page, index, { x: PAGE.width / 2, top: cursor, align: "center", color: INK.text });
    cursor -= index.height + INDEX_LINE.below;
  }
  const pills = measurePills(content, fonts);
  const border = content.indexColour ? IMAGE.indexBorderWidth : 0;
  const below = IMAGE.below + (pills.height > 0 ? pills.height + PILL.below : 0) +
    (content.confirmation ? CONFIRMATION_FORM.height + CONFIRMATION_FORM.above : 0);
  const rect = fitImage(image, {
    left: PAGE.margin,
    top: cursor - border,
    maxWidth: CONTENT_WIDTH,
    maxHeight: Math.max(IMAGE.minHeight, Math.min(MAX_IMAGE_HEIGHT, cursor - 2 * border - below - bottom)),
  });
  drawImage(page, image, rect, content, fonts);
  cursor = rect.y - border - IMAGE.below;

  if (pills.height > 0) {
    if (pills.left) drawPill(page, pills.left, PAGE.margin, cursor);
    if (pills.centre) drawPill(page, pills.centre, PAGE.width / 2 - pills.centre.width / 2, cursor);
    if (pills.right) drawPill(page, pills.right, PAGE.width - PAGE.margin - pills.right.width, cursor);
    cursor -= pills.height + PILL.below;
  }

  if (content.confirmation) drawConfirmationForm(page, fonts.regular, PAGE.margin, cursor, CONFIRMATION_WIDTH, content.signed);
  if (content.notes !== undefined) {
    const breaker = new LineBreaker(content.notes, fonts.regular, NOTES.size);
    const left = PAGE.margin + CONFIRMATION_WIDTH + NOTES.columnGap;
    const width = CONTENT_WIDTH - CONFIRMATION_WIDTH - NOTES.columnGap;
    let heading = "Additional Notes";
    // The heading and a first line must fit, or the notes start on the next page.
    if (cursor - NOTES.headingHeight - NOTES.leading >= bottom) {
      const linesTop = drawNotesHeading(page, fonts, heading, left, cursor);
      drawNotesLines(page, breaker, fonts.regular, left, width, linesTop, bottom);
      heading = "Additional Notes (continued)";
    }
    while (breaker.hasMore()) {
      ({ page, top: cursor } = newPage());
      const linesTop = drawNotesHeading(page, fonts, heading, PAGE.margin, cursor);
      drawNotesLines(page, breaker, fonts.regular, PAGE.margin, CONTENT_WIDTH, linesTop, bottom);
      heading = "Additional Notes (continued)";
    }
  }

  pages.forEach((p, i) => drawFooter(p, footer, fonts, i + 1, pages.length));
  return await saveWithNativeFlate(doc);
}
