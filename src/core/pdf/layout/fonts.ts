/**
 * @module
 * The report's fonts: DejaVu Sans and DejaVu Sans Bold (from the npm package
 * `dejavu-fonts-ttf`, shipped as base64 modules so every runtime and bundler imports them
 * alike), decoded and parsed once per process and subset into each PDF; and Courier-Bold,
 * a standard PDF font, for case/item labels whose characters are all WinAnsi.
 *
 * DejaVu Sans covers Latin (with accents, Extended-A/B, Vietnamese, IPA), Greek, Cyrillic,
 * Armenian, Georgian, punctuation, currency, arrows, maths and box drawing. A character no
 * embedded font covers, and right-to-left text (Hebrew, Arabic...: pdf-lib lays text out left
 * to right, so it would print reversed), is refused with a 400 that names it.
 */
import fontkit from "@pdf-lib/fontkit";
import { type PDFDocument, type PDFFont, StandardFontEmbedder, StandardFonts } from "pdf-lib";
import { ServiceError } from "../../errors.ts";
import { decodeBase64 } from "../image/base64.ts";
import { DEJAVU_SANS_TTF_BASE64 } from "../fonts/dejavu-sans.ts";
import { DEJAVU_SANS_BOLD_TTF_BASE64 } from "../fonts/dejavu-sans-bold.ts";

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
type FontkitFont = ReturnType<Fontkit["create"]>;

interface ParsedFont {
  bytes: Uint8Array;
  font: FontkitFont;
}

let parsed: { regular: ParsedFont; bold: ParsedFont } | undefined;

/** Decodes and parses both DejaVu files on first use only (about 1.5 MB of TrueType). */
function dejaVu(): { regular: ParsedFont; bold: ParsedFont } {
  if (parsed === undefined) {
    const parse = (base64: string): ParsedFont => {
      const bytes = decodeBase64(base64);
      if (bytes === null) throw new Error("an embedded font module is not base64");
      return { bytes, font: fontkit.create(bytes) };
    };
    parsed = { regular: parse(DEJAVU_SANS_TTF_BASE64), bold: parse(DEJAVU_SANS_BOLD_TTF_BASE64) };
  }
  return parsed;
}

// pdf-lib parses the bytes again on every embedFont; this hands it the font parsed once.
const parsedOnceFontkit: Fontkit = {
  create(buffer, postscriptName) {
    const fonts = dejaVu();
    if (buffer === fonts.regular.bytes) return fonts.regular.font;
    if (buffer === fonts.bold.bytes) return fonts.bold.font;
    return fontkit.create(buffer, postscriptName);
  },
};

// Courier-Bold's WinAnsi character set, read once from pdf-lib's metrics without embedding the font.
let courierBoldSet: ReadonlySet<number> | undefined;
const courierBoldCharacters = (): ReadonlySet<number> =>
  (courierBoldSet ??= new Set(
    StandardFontEmbedder.for(StandardFonts.CourierBold as string as Parameters<typeof StandardFontEmbedder.for>[0]).encoding.supportedCodePoints,
  ));

/** Normalises text for printing: NFC (precomposed accents), `\n` line breaks, tabs as spaces. */
export function printableText(text: string): string {
  return text.normalize("NFC").replace(/\r\n?/g, "\n").replace(/\t/g, "    ");
}

// Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic and their presentation forms.
const RIGHT_TO_LEFT = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;

function describe(codePoint: number): string {
  return `"${String.fromCodePoint(codePoint)}" (U+${codePoint.toString(16).toUpperCase().padStart(4, "0")})`;
}

/** Whether the parsed DejaVu face covers a code point. */
function dejaVuCovers(face: "regular" | "bold", codePoint: number): boolean {
  return dejaVu()[face].font.hasGlyphForCodePoint(codePoint);
}

/**
 * Throws a 400 naming the first character of `text` (as {@link printableText} returns it) that
 * `face` cannot print, and `field`. Line breaks are layout, not characters; other control
 * characters are refused.
 */
export function assertPrintable(text: string, face: "regular" | "bold", field: string): void {
  for (const char of text) {
    const codePoint = char.codePointAt(0) ?? 0;
    if (char === "\n") continue;
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
 * OpenType features fontkit applies by default, all off: pdf-lib places glyphs by their
 * advance widths only (no kerning or mark offsets), so shaping would cost most of the render
 * time for nothing but ligatures, which also make copied text worse. Text is NFC first, so
 * accents are precomposed glyphs.
 */
const NO_SHAPING = Object.fromEntries(
  ["ccmp", "locl", "rlig", "mark", "mkmk", "calt", "clig", "liga", "rclt", "curs", "kern"].map((feature) => [feature, false]),
);

/**
 * Embeds the report's fonts into `doc`, subset to the glyphs used. `labels` are the case/item
 * labels to be drawn (as {@link printableText} returns them): Courier-Bold prints them, and
 * is embedded, when all their characters are WinAnsi.
 */
export async function embedReportFonts(doc: PDFDocument, labels: readonly string[]): Promise<ReportFonts> {
  doc.registerFontkit(parsedOnceFontkit);
  const fonts = dejaVu();
  const regular = await doc.embedFont(fonts.regular.bytes, { subset: true, features: NO_SHAPING });
  const bold = await doc.embedFont(fonts.bold.bytes, { subset: true, features: NO_SHAPING });
  const set = courierBoldCharacters();
  const winAnsi = labels.length > 0 && labels.every((text) => [...text].every((char) => set.has(char.codePointAt(0) ?? -1)));
  return { regular, bold, label: winAnsi ? await doc.embedFont(StandardFonts.CourierBold) : bold };
}
