/**
 * @module
 * The report's fonts: DejaVu Sans and DejaVu Sans Bold (from the npm package
 * `dejavu-fonts-ttf`, subset at build time to the report's scripts and shipped as base64
 * modules so every runtime and bundler imports them alike), read once per process by the
 * small TrueType reader of `truetype.ts` and subset into each PDF; and Courier-Bold, a
 * standard PDF font, for case/item labels whose characters are all WinAnsi.
 *
 * The subset covers Latin (with accents, Extended-A/B, Vietnamese, IPA), Greek, Cyrillic,
 * Armenian, Georgian, punctuation, currency, letterlike symbols, number forms, arrows and
 * maths (the ranges are listed in scripts/generate-pdf-fonts.mjs). A character no embedded
 * font covers, and right-to-left text (Hebrew, Arabic...: pdf-lib lays text out left to
 * right, so it would print reversed), is refused with a 400 that names it.
 */
import { type PDFDocument, type PDFFont, StandardFonts } from "pdf-lib";
import { ServiceError } from "../../errors.ts";
import { decodeBase64 } from "../image/base64.ts";
import { DEJAVU_SANS_TTF_BASE64 } from "../fonts/dejavu-sans.ts";
import { DEJAVU_SANS_BOLD_TTF_BASE64 } from "../fonts/dejavu-sans-bold.ts";
import { isDefaultIgnorable, TrueTypeFont } from "./truetype.ts";

/** The embedded fonts of one report, per face. */
export interface ReportFonts {
  /** DejaVu Sans: notes, footer, form labels. */
  regular: PDFFont;
  /** DejaVu Sans Bold: header, pills, company. */
  bold: PDFFont;
  /** Bold monospace for case/item labels: Courier-Bold, or DejaVu Sans Bold when a label is not WinAnsi. */
  label: PDFFont;
}

type Fontkit = Parameters<PDFDocument["registerFontkit"]>[0];

let parsed: { regular: TrueTypeFont; bold: TrueTypeFont } | undefined;

/** Decodes and reads both DejaVu subsets on first use only (tables are read where they lie). */
function dejaVu(): { regular: TrueTypeFont; bold: TrueTypeFont } {
  if (parsed === undefined) {
    const parse = (base64: string): TrueTypeFont => {
      const bytes = decodeBase64(base64);
      if (bytes === null) throw new Error("an embedded font module is not base64");
      return new TrueTypeFont(bytes);
    };
    parsed = { regular: parse(DEJAVU_SANS_TTF_BASE64), bold: parse(DEJAVU_SANS_BOLD_TTF_BASE64) };
  }
  return parsed;
}

// pdf-lib asks its "fontkit" for the font of the bytes it was given: the ones read once here.
// TrueTypeFont has the members pdf-lib's custom font embedders read, not all of fontkit's
// declared Font type, hence the cast.
const readOnceFonts = {
  create(bytes: Uint8Array): TrueTypeFont {
    const fonts = dejaVu();
    if (bytes === fonts.regular.bytes) return fonts.regular;
    if (bytes === fonts.bold.bytes) return fonts.bold;
    return new TrueTypeFont(bytes);
  },
} as unknown as Fontkit;

/**
 * The code points Courier-Bold prints (pdf-lib encodes the standard fonts in WinAnsi), as
 * ranges: a constant, because asking pdf-lib for them loads the font's metrics (pako inflating
 * them, cold, in a report's first request) only to learn that a label is not WinAnsi.
 * tests/core/pdf/report.test.ts checks it against pdf-lib's own list.
 */
const WIN_ANSI_RANGES: readonly (readonly [number, number])[] = [
  [0x20, 0x7e], [0xa0, 0xff], [0x152, 0x153], [0x160, 0x161], [0x178, 0x178], [0x17d, 0x17e], [0x192, 0x192],
  [0x2c6, 0x2c6], [0x2dc, 0x2dc], [0x2013, 0x2014], [0x2018, 0x201a], [0x201c, 0x201e], [0x2020, 0x2022],
  [0x2026, 0x2026], [0x2030, 0x2030], [0x2039, 0x203a], [0x20ac, 0x20ac], [0x2122, 0x2122],
];

/** Whether Courier-Bold prints `codePoint`. */
export function isWinAnsi(codePoint: number): boolean {
  return WIN_ANSI_RANGES.some(([first, last]) => codePoint >= first && codePoint <= last);
}

/** Normalises text for printing: NFC (precomposed accents), `\n` line breaks, tabs as spaces. */
export function printableText(text: string): string {
  return text.normalize("NFC").replace(/\r\n?/g, "\n").replace(/\t/g, "    ");
}

// Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic and their presentation forms (up to U+FEFC: U+FEFF is the byte order mark, printed as a zero-width space is).
const RIGHT_TO_LEFT = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFC\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;

function describe(codePoint: number): string {
  return `"${String.fromCodePoint(codePoint)}" (U+${codePoint.toString(16).toUpperCase().padStart(4, "0")})`;
}

/** Whether the parsed DejaVu face covers a code point. */
function dejaVuCovers(face: "regular" | "bold", codePoint: number): boolean {
  return dejaVu()[face].hasGlyphForCodePoint(codePoint);
}

/**
 * Throws a 400 naming the first character of `text` (as {@link printableText} returns it) that
 * `face` cannot print, and `field`. Line breaks are layout, not characters; other control
 * characters are refused.
 */
export function assertPrintable(text: string, face: "regular" | "bold", field: string): void {
  for (const char of text) {
    const codePoint = char.codePointAt(0) ?? 0;
    // Line breaks are layout; a default-ignorable character prints as a space (truetype.ts), glyph or not.
    if (char === "\n" || isDefaultIgnorable(codePoint)) continue;
    if (RIGHT_TO_LEFT.test(char)) {
      throw ServiceError.validation(
        `The character ${describe(codePoint)} in ${field} cannot be printed: right-to-left scripts are not supported in reports`,
        { field, character: char, codePoint },
      );
    }
    if (codePoint < 0x20 || (codePoint >= 0x7f && codePoint < 0xa0) || !dejaVuCovers(face, codePoint)) {
      throw ServiceError.validation(
        `The character ${describe(codePoint)} in ${field} cannot be printed: no font of the report covers it`,
        { field, character: char, codePoint },
      );
    }
  }
}

/**
 * Embeds the report's fonts into `doc`, subset to the glyphs used. `labels` are the case/item
 * labels to be drawn (as {@link printableText} returns them): Courier-Bold prints them, and
 * is embedded, when all their characters are WinAnsi.
 */
export async function embedReportFonts(doc: PDFDocument, labels: readonly string[]): Promise<ReportFonts> {
  doc.registerFontkit(readOnceFonts);
  const fonts = dejaVu();
  const regular = await doc.embedFont(fonts.regular.bytes, { subset: true });
  const bold = await doc.embedFont(fonts.bold.bytes, { subset: true });
  const winAnsi = labels.length > 0 && labels.every((text) => [...text].every((char) => isWinAnsi(char.codePointAt(0) ?? -1)));
  return { regular, bold, label: winAnsi ? await doc.embedFont(StandardFonts.CourierBold) : bold };
}
