#!/usr/bin/env node
// Writes src/core/pdf/fonts/*.ts: DejaVu Sans and DejaVu Sans Bold of the npm package
// dejavu-fonts-ttf, subset with HarfBuzz (the devDependency subset-font) to the scripts the
// README promises, without hinting and OpenType layout tables (the report lays text out by
// advance widths only), as base64 strings in TypeScript modules. A module is the one way to
// ship bytes that Node, Bun, Deno, JSR and a Cloudflare worker bundle all import alike.
// The "fonts" test of tests/core/pdf/units.test.ts checks the modules are what this script
// writes.   Run: node scripts/generate-pdf-fonts.mjs
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import subsetFont from "subset-font";

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * The Unicode ranges kept, by script: what the README's "PDF reports" section promises.
 * A character of these ranges that DejaVu Sans has no glyph for stays refused.
 */
export const PDF_FONT_RANGES = [
  ["Basic Latin", 0x0020, 0x007e],
  ["Latin-1 Supplement", 0x00a0, 0x00ff],
  ["Latin Extended-A", 0x0100, 0x017f],
  ["Latin Extended-B", 0x0180, 0x024f],
  ["IPA Extensions", 0x0250, 0x02af],
  ["Spacing Modifier Letters", 0x02b0, 0x02ff],
  ["Combining Diacritical Marks", 0x0300, 0x036f],
  ["Greek and Coptic", 0x0370, 0x03ff],
  ["Cyrillic", 0x0400, 0x04ff],
  ["Cyrillic Supplement", 0x0500, 0x052f],
  ["Armenian", 0x0530, 0x058f],
  ["Georgian", 0x10a0, 0x10ff],
  ["Phonetic Extensions", 0x1d00, 0x1d7f],
  ["Phonetic Extensions Supplement", 0x1d80, 0x1dbf],
  ["Latin Extended Additional (Vietnamese)", 0x1e00, 0x1eff],
  ["Greek Extended", 0x1f00, 0x1fff],
  ["General Punctuation", 0x2000, 0x206f],
  ["Superscripts and Subscripts", 0x2070, 0x209f],
  ["Currency Symbols", 0x20a0, 0x20cf],
  ["Letterlike Symbols", 0x2100, 0x214f],
  ["Number Forms", 0x2150, 0x218f],
  ["Arrows", 0x2190, 0x21ff],
  ["Mathematical Operators", 0x2200, 0x22ff],
  ["Miscellaneous Technical", 0x2300, 0x23ff],
  ["Enclosed Alphanumerics", 0x2460, 0x24ff],
  ["Box Drawing", 0x2500, 0x257f],
  ["Block Elements", 0x2580, 0x259f],
  ["Geometric Shapes", 0x25a0, 0x25ff],
  ["Ballot boxes", 0x2610, 0x2612],
  ["Check and cross marks", 0x2713, 0x2718],
  ["Georgian Supplement", 0x2d00, 0x2d2f],
  ["Latin ligatures", 0xfb00, 0xfb06],
  ["Armenian ligatures", 0xfb13, 0xfb17],
  ["Replacement Character", 0xfffd, 0xfffd],
];

const FONTS = [
  { file: "DejaVuSans.ttf", module: "dejavu-sans.ts", name: "DEJAVU_SANS_TTF_BASE64", title: "DejaVu Sans" },
  { file: "DejaVuSans-Bold.ttf", module: "dejavu-sans-bold.ts", name: "DEJAVU_SANS_BOLD_TTF_BASE64", title: "DejaVu Sans Bold" },
];

/** Every code point of the kept ranges (the subsetter keeps those the font has). */
function keptText() {
  let text = "";
  for (const [, first, last] of PDF_FONT_RANGES) for (let c = first; c <= last; c++) text += String.fromCodePoint(c);
  return text;
}

/** The font modules' sources, by module file name. */
export async function pdfFontModules() {
  const packageDir = dirname(require.resolve("dejavu-fonts-ttf/package.json"));
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const subsetVersion = JSON.parse(readFileSync(require.resolve("subset-font/package.json"), "utf8")).version;
  const license = readFileSync(join(packageDir, "LICENSE"), "utf8").trimEnd();
  const text = keptText();
  const modules = {};
  for (const font of FONTS) {
    const original = readFileSync(join(packageDir, "ttf", font.file));
    const bytes = await subsetFont(original, text, {
      targetFormat: "sfnt",
      noHinting: true,
      dropTables: ["GSUB", "GPOS", "GDEF", "kern", "MATH"],
    });
    modules[font.module] = [
      "/**",
      " * @module",
      ` * ${font.title} (${font.file} of the npm package dejavu-fonts-ttf ${version}) as base64, subset by`,
      ` * scripts/generate-pdf-fonts.mjs (subset-font ${subsetVersion}) to the report's scripts, without hinting`,
      " * and layout tables; do not edit. The font's licence follows.",
      " *",
      ...license.split("\n").map((line) => ` * ${line.replaceAll("*/", "* /")}`.trimEnd()),
      " */",
      "",
      `/** ${font.title}, the subset TrueType file, base64-encoded. */`,
      `export const ${font.name}: string =`,
      `  "${Buffer.from(bytes).toString("base64")}";`,
      "",
    ].join("\n");
  }
  return modules;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const [module, source] of Object.entries(await pdfFontModules())) {
    writeFileSync(join(root, "src/core/pdf/fonts", module), source);
    console.log(`src/core/pdf/fonts/${module}: ${source.length} characters`);
  }
}
