// Types of scripts/generate-pdf-fonts.mjs, for the tests that check its output.
/** The Unicode ranges the PDF fonts keep: name, first and last code point. */
export declare const PDF_FONT_RANGES: readonly (readonly [string, number, number])[];
/** The font modules' sources, by module file name. */
export declare function pdfFontModules(): Promise<Record<string, string>>;
