/**
 * @module
 * Every size, distance and colour of the report (docs/report.md "Page layout" and "Colours"),
 * in one place and named for what it sizes. Points throughout (1/72 inch); colours are
 * pdf-lib sRGB channels from 0 to 1. The drawing code holds no layout number of its own.
 */
import { rgb, type RGB } from "pdf-lib";

/** US Letter in points, and the half-inch margin on every side. */
export const PAGE = { width: 612, height: 792, margin: 36 } as const;

/** The width between the margins. */
export const CONTENT_WIDTH: number = PAGE.width - 2 * PAGE.margin;

/** How lines of text are set, as multiples of the font size, and how finely a shrunk size is rounded. */
export const TEXT = {
  /** Line height. */
  leading: 1.2,
  /** Baseline below the top of its line. */
  ascent: 0.93,
  /** A size shrunk to fit is rounded down to a tenth of a point. */
  shrinkStepsPerPoint: 10,
} as const;

/** The fixed text and line colours (docs/report.md "Colours"). */
export const INK = {
  /** Header, index line, notes, footer centre: #1A1A1A. */
  text: rgb(0.1, 0.1, 0.1),
  /** Footer left and right: #595959. */
  muted: rgb(0.35, 0.35, 0.35),
  /** Rules under the header and over the footer: #8C8C8C. */
  rule: rgb(0.55, 0.55, 0.55),
  /** The confirmation form's box, lines and words: #262626. */
  form: rgb(0.15, 0.15, 0.15),
  /** Text on the dark pills, and the ground of a dark label colour. */
  white: rgb(1, 1, 1),
  /** The ground of a light label colour. */
  black: rgb(0, 0, 0),
} as const satisfies Record<string, RGB>;

/** A horizontal rule's stroke unless told otherwise. */
export const RULE_THICKNESS = 0.75;

/** The header on every page: date left, case number right, a rule beneath. */
export const HEADER = {
  /** Bold size of both texts. */
  size: 11,
  /** They shrink to this, then wrap. */
  minSize: 7,
  /** Kept free between the two halves of the content width. */
  gap: 6,
  /** From the lower text to the rule. */
  ruleGap: 3,
  /** From the rule to what follows. */
  below: 10,
} as const;

/** The footer on every page: service name, company, notes date and page number above a rule. */
export const FOOTER = {
  /** Size of every footer text. */
  size: 7.5,
  /** The content width is shared by this many columns. */
  columns: 3,
  /** The three columns shrink to this, then wrap. */
  minSize: 5,
  /** Kept free beside each third of the content width. */
  gap: 6,
  /** The rule's stroke. */
  ruleThickness: 0.5,
  /** From the tallest column to the rule above it. */
  ruleGap: 6,
  /** Between the rule and the lowest content of the page. */
  clearance: 8,
} as const;

/** The `Index: {indexNumber}` line over the image. */
export const INDEX_LINE = {
  /** Bold size. */
  size: 10,
  /** It shrinks to this, then wraps. */
  minSize: 6,
  /** From the line to the image. */
  below: 6,
} as const;

/** The image and what is drawn on it. */
export const IMAGE = {
  /** The tallest the image may be drawn, as a share of the page height. */
  maxHeightShare: 0.65,
  /** The shortest it is drawn, however much the rows below need. */
  minHeight: 40,
  /** From the image (or its index border) to the row below. */
  below: 8,
  /** The index colour border around the outside of the image. */
  indexBorderWidth: 5,
  /** The stroke of a box. */
  boxStrokeWidth: 2,
} as const;

/** The tallest the image may be drawn. */
export const MAX_IMAGE_HEIGHT: number = IMAGE.maxHeightShare * PAGE.height;

/** The case/item labels in the image's top corners. */
export const CASE_LABEL = {
  /** Bold size of both labels. */
  size: 11,
  /** They shrink to this, then wrap. */
  minSize: 5,
  /** Inset from the image's edges: at most this… */
  maxInset: 6,
  /** …and at most this share of the image width. */
  insetShare: 0.02,
  /** Kept free between the two labels, besides their insets. */
  gap: 6,
  /** Around the text, on its ground. */
  padding: 3,
  /** Opacity of the ground. */
  groundOpacity: 0.65,
  /** A label colour whose WCAG relative luminance is below this is dark (and gets a white ground). */
  darkBelowLuminance: 0.5,
} as const;

/** The default case/item label colour. */
export const DEFAULT_CASE_FONT_COLOR = "#FFDE21";

/** The rounded pills of the row under the image. */
export const PILL = {
  /** Bold size. */
  size: 9,
  /** It shrinks to this, then wraps. */
  minSize: 6,
  /** Left and right of the text. */
  padX: 8,
  /** Above and below the text. */
  padY: 3,
  /** Corner radius. */
  cornerRadius: 8,
  /** Outline of a pill that has one. */
  borderWidth: 0.75,
  /** The widest a side pill may be, as a share of the content width. */
  sideShare: 0.25,
  /** The class pill is half the content width less this. */
  centreGap: 12,
  /** From the pills to the row below. */
  below: 10,
} as const;

/** Colours of a pill. */
export interface PillColours {
  /** Text colour. */
  text: RGB;
  /** Fill colour. */
  fill: RGB;
  /** Outline colour, if any. */
  border?: RGB;
}

/** The support-level pills: text (and outline) and fill per level. */
export const SUPPORT_PILLS = {
  ID: { label: "Identification", text: rgb(0.08, 0.5, 0.24), fill: rgb(0.86, 0.99, 0.91) },
  Exclusion: { label: "Exclusion", text: rgb(0.73, 0.11, 0.11), fill: rgb(1, 0.89, 0.89) },
  Inconclusive: { label: "Inconclusive", text: rgb(0.71, 0.33, 0.04), fill: rgb(1, 0.95, 0.78) },
} as const;

/** The class pill: white on #262B33. */
export const CLASS_PILL: PillColours = { text: INK.white, fill: rgb(0.15, 0.17, 0.2) };

/** The `POTENTIAL SUBCLASS` pill: white on #D11F1F. */
export const SUBCLASS_PILL: PillColours = { text: INK.white, fill: rgb(0.82, 0.12, 0.12) };

/** The blank confirmation form; distances are from the form's top-left corner. */
export const CONFIRMATION_FORM = {
  /** Its height. */
  height: 74,
  /** Its width, as a share of the content width. */
  widthShare: 0.42,
  /** From the row above to the form. */
  above: 4,
  /** The box's stroke. */
  borderWidth: 0.75,
  /** The signature and date lines' stroke. */
  lineThickness: 0.5,
  /** Size of its words. */
  size: 9,
  /** Left and right of the words and lines, inside the box. */
  padding: 8,
  /** Down to the baseline of "Confirmation by:". */
  signatureLabelDrop: 18,
  /** Down to the signature line. */
  signatureLineDrop: 40,
  /** Down to the baseline of "Date:". */
  dateLabelDrop: 62,
  /** Down to the date line. */
  dateLineDrop: 63,
  /** From the box's left edge to the date line, besides the width of "Date:". */
  dateLineIndent: 12,
} as const;

/** The width of the confirmation form, and of the column left of the notes. */
export const CONFIRMATION_WIDTH: number = CONFIRMATION_FORM.widthShare * CONTENT_WIDTH;

/** The additional notes and their heading. */
export const NOTES = {
  /** Size of the notes. */
  size: 9,
  /** From one line's baseline to the next. */
  leading: 11.5,
  /** Bold size of the heading. */
  headingSize: 9,
  /** From the top of the heading to the top of the first line. */
  headingHeight: 14,
  /** Between the confirmation form's column and the notes. */
  columnGap: 14,
} as const;
