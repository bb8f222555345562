import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { decodeBase64 } from "../../../src/core/pdf/image/base64.ts";
import { isDark, relativeLuminance, tryParseColour } from "../../../src/core/pdf/layout/colour.ts";
import { isListed, kindOfHost, parseHostList } from "../../../src/core/pdf/image/host-policy.ts";
import { LineBreaker, wrapText } from "../../../src/core/pdf/layout/text-layout.ts";
import { boxRect, fitImage } from "../../../src/core/pdf/layout/page-layout.ts";
import { jpegOrientation, type Orientation, orientedMatrix } from "../../../src/core/pdf/image/jpeg-orientation.ts";
import { filteredPng, solidJpeg, withOrientation } from "./images.ts";
import { splitAlpha } from "../../../src/core/pdf/image/png-alpha.ts";
import { inflateSync } from "node:zlib";
import { DEJAVU_SANS_TTF_BASE64 } from "../../../src/core/pdf/fonts/dejavu-sans.ts";
import { DEJAVU_SANS_BOLD_TTF_BASE64 } from "../../../src/core/pdf/fonts/dejavu-sans-bold.ts";
import { TrueTypeFont } from "../../../src/core/pdf/layout/truetype.ts";

describe("fonts", () => {
  it("the font modules are what scripts/generate-pdf-fonts.mjs makes of the npm package dejavu-fonts-ttf", async () => {
    const { pdfFontModules } = await import("../../../scripts/generate-pdf-fonts.mjs");
    const modules = await pdfFontModules();
    expect(Object.keys(modules).sort()).toEqual(["dejavu-sans-bold.ts", "dejavu-sans.ts"]);
    for (const [name, source] of Object.entries(modules)) {
      expect(readFileSync(new URL(`../../../src/core/pdf/fonts/${name}`, import.meta.url), "utf8") === source, name).toBe(true);
    }
    expect(source(modules, "dejavu-sans.ts")).toContain(DEJAVU_SANS_TTF_BASE64);
    expect(source(modules, "dejavu-sans-bold.ts")).toContain(DEJAVU_SANS_BOLD_TTF_BASE64);
  });

  it("the subsets keep every glyph of the kept ranges that the package's fonts have, and nothing else", async () => {
    const { PDF_FONT_RANGES } = await import("../../../scripts/generate-pdf-fonts.mjs");
    const dir = join(dirname(createRequire(import.meta.url).resolve("dejavu-fonts-ttf/package.json")), "ttf");
    const pairs: [string, string][] = [["DejaVuSans.ttf", DEJAVU_SANS_TTF_BASE64], ["DejaVuSans-Bold.ttf", DEJAVU_SANS_BOLD_TTF_BASE64]];
    for (const [file, base64] of pairs) {
      const full = new TrueTypeFont(new Uint8Array(readFileSync(join(dir, file))));
      const subset = new TrueTypeFont(decodeBase64(base64) ?? new Uint8Array());
      const kept = (c: number) => PDF_FONT_RANGES.some(([, first, last]) => c >= first && c <= last);
      for (let c = 0x20; c < 0x30000; c++) {
        const expected = kept(c) && full.hasGlyphForCodePoint(c);
        if (subset.hasGlyphForCodePoint(c) !== expected) expect.fail(`${file} U+${c.toString(16)}: expected ${expected}`);
        if (expected) expect(subset.advanceWidthOf(subset.glyphIdOf(c))).toBe(full.advanceWidthOf(full.glyphIdOf(c)));
      }
      expect(subset.postscriptName).toBe(full.postscriptName);
      expect([subset.unitsPerEm, subset.ascent, subset.descent]).toEqual([full.unitsPerEm, full.ascent, full.descent]);
    }
  });

  it("lays every kept character out as fontkit did with shaping off: same glyph, same advance width", async () => {
    const { default: fontkit } = await import("@pdf-lib/fontkit");
    const noShaping = Object.fromEntries(["ccmp", "locl", "rlig", "mark", "mkmk", "calt", "clig", "liga", "rclt", "curs", "kern"].map((f) => [f, false]));
    const pairs: [string, string][] = [["DejaVuSans.ttf", DEJAVU_SANS_TTF_BASE64], ["DejaVuSans-Bold.ttf", DEJAVU_SANS_BOLD_TTF_BASE64]];
    for (const [file, base64] of pairs) {
      const bytes = decodeBase64(base64) ?? new Uint8Array();
      const reference = fontkit.create(bytes);
      const ours = new TrueTypeFont(bytes);
      const text = reference.characterSet.map((c) => String.fromCodePoint(c)).join("") + " soft\u00adhyphen, zero\u200bwidth";
      const expected = reference.layout(text, noShaping).glyphs.map((g) => [g.id, g.advanceWidth]);
      expect(ours.layout(text).glyphs.map((g) => [g.id, g.advanceWidth]), file).toEqual(expected);
    }
  });
});

function source(modules: Record<string, string>, name: string): string {
  return modules[name] ?? "";
}

describe("base64", () => {
  it("decodes like Buffer for every length, with padding or without, whitespace and URL-safe letters", () => {
    for (let length = 0; length < 70; length++) {
      const bytes = new Uint8Array(length).map((_, i) => (i * 37 + length) & 0xff);
      const text = Buffer.from(bytes).toString("base64");
      expect(decodeBase64(text), `length ${length}`).toEqual(bytes);
      expect(decodeBase64(text.replace(/=+$/, ""))).toEqual(bytes);
      expect(decodeBase64(text.replace(/(.{7})/g, "$1\n"))).toEqual(bytes);
      expect(decodeBase64(Buffer.from(bytes).toString("base64url"))).toEqual(bytes);
    }
  });

  it("refuses what is not base64", () => {
    for (const bad of ["ab!c", "abcd=e==", "a===", "é", "abcde"]) expect(decodeBase64(bad), bad).toBeNull();
  });
});

describe("colours", () => {
  it("reads #rgb, #rrggbb and CSS names, and nothing else", () => {
    expect(tryParseColour("#f00")).toEqual({ r: 1, g: 0, b: 0 });
    expect(tryParseColour("#00FF00")).toEqual({ r: 0, g: 1, b: 0 });
    expect(tryParseColour("RebeccaPurple")).toEqual({ r: 0x66 / 255, g: 0x33 / 255, b: 0x99 / 255 });
    for (const bad of ["", "#12", "#1234", "rgb(1,2,3)", "constructor", "__proto__", "transparent"]) expect(tryParseColour(bad), bad).toBeNull();
  });

  it("calls a colour dark below luminance 0.5", () => {
    expect(relativeLuminance(tryParseColour("white")!)).toBeCloseTo(1);
    expect(relativeLuminance(tryParseColour("black")!)).toBe(0);
    expect(isDark(tryParseColour("#FFDE21")!)).toBe(false);
    expect(isDark(tryParseColour("navy")!)).toBe(true);
    expect(isDark(tryParseColour("#ff0000")!)).toBe(true);
  });
});

describe("host policy", () => {
  it("names what a host is", () => {
    const kinds: [string, string | null][] = [
      ["127.0.0.1", "a loopback address"],
      ["localhost", "a loopback name"],
      ["LOCALHOST.", "a loopback name"],
      ["[::1]", "a loopback address"],
      ["[::ffff:7f00:1]", "a loopback address"],
      ["[64:ff9b::a00:1]", "a private address"],
      ["0.0.0.0", "an unspecified (0.0.0.0/8) address"],
      ["169.254.169.254", "the cloud metadata address"],
      ["[fd00::1]", "a unique local (private) address"],
      ["[febf::1]", "a link-local address"],
      ["[ff02::1]", "a multicast address"],
      ["100.127.255.255", "a shared (carrier-grade NAT) address"],
      ["100.128.0.1", null],
      ["172.15.0.1", null],
      ["172.32.0.1", null],
      ["93.184.216.34", null],
      ["[2606:4700::1111]", null],
      ["images.example.org", null],
    ];
    for (const [host, kind] of kinds) expect(kindOfHost(host), host).toBe(kind);
  });

  it("matches listed hosts by name and, when given, port", () => {
    const hosts = parseHostList(["Images.Example.org", "127.0.0.1:8787", "https://cdn.example.org", "[::1]:9000", "::2", "", "http://bad host"]);
    expect(hosts).toEqual([
      { hostname: "images.example.org", port: undefined },
      { hostname: "127.0.0.1", port: "8787" },
      { hostname: "cdn.example.org", port: undefined },
      { hostname: "[::1]", port: "9000" },
      { hostname: "[::2]", port: undefined },
    ]);
    expect(isListed(new URL("https://images.example.org./a.png"), hosts)).toBe(true);
    expect(isListed(new URL("http://images.example.org:81/a.png"), hosts)).toBe(true);
    expect(isListed(new URL("http://127.0.0.1:8787/a"), hosts)).toBe(true);
    expect(isListed(new URL("http://127.0.0.1:8788/a"), hosts)).toBe(false);
    expect(isListed(new URL("http://127.0.0.1/a"), hosts)).toBe(false);
    expect(isListed(new URL("http://[::1]:9000/a"), hosts)).toBe(true);
    expect(isListed(new URL("http://sub.images.example.org/a"), hosts)).toBe(false);
    expect(isListed(new URL("https://cdn.example.org:443/a"), parseHostList(["cdn.example.org:443"]))).toBe(true);
  });
});

describe("text layout", () => {
  it("wraps at spaces within the width, breaks long words, and keeps every character", async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const text = `Short words here and there.\n\n${"x".repeat(300)} tail   spaced\nend`;
    const lines = wrapText(text, font, 10, 120);
    for (const line of lines) expect(font.widthOfTextAtSize(line, 10)).toBeLessThanOrEqual(120.001);
    expect(lines).toContain("");
    expect(lines.join("").replace(/\s/g, "")).toBe(text.replace(/\s/g, ""));
    expect(lines.at(-1)).toBe("end");
  });

  it("gives lines of different widths one at a time", async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Courier);
    const breaker = new LineBreaker("aaaa bbbb cccc dddd", font, 10);
    // Courier: 6 pt per character at 10 pt.
    expect(breaker.next(50)).toBe("aaaa");
    expect(breaker.next(60)).toBe("bbbb cccc");
    expect(breaker.next(1000)).toBe("dddd");
    expect(breaker.hasMore()).toBe(false);
    expect(breaker.next(60)).toBeNull();
  });
});

describe("page layout", () => {
  it("fits an image into the column, letterboxed and centred, and places boxes on it", () => {
    const tall = fitImage({ width: 100, height: 400 }, { left: 36, top: 700, maxWidth: 540, maxHeight: 400 });
    expect(tall).toEqual({ x: 36 + (540 - 100) / 2, y: 300, width: 100, height: 400 });
    const box = boxRect(tall, { x: 10, y: 20, width: 30, height: 40 });
    expect(box).toEqual({ x: tall.x + 10, y: 300 + 400 - 240, width: 30, height: 160 });
    // A box running past the image is cut at its edge.
    expect(boxRect(tall, { x: 90, y: 90, width: 20, height: 20 })).toEqual({ x: tall.x + 90, y: 300, width: 10, height: 40 });
  });
});

describe("JPEG orientation", () => {
  it("reads the EXIF orientation, 1 without one", () => {
    const jpeg = solidJpeg(8, 8, [0, 0, 0]);
    expect(jpegOrientation(jpeg)).toBe(1);
    for (let o = 1; o <= 8; o++) expect(jpegOrientation(withOrientation(jpeg, o))).toBe(o);
    expect(jpegOrientation(withOrientation(jpeg, 9))).toBe(1);
  });

  it("puts the stored first row where EXIF 2.3 says", () => {
    // Where the stored top-left and top-right corners land on the page (unit rectangle, y up).
    const TL = [0, 1], TR = [1, 1], BL = [0, 0], BR = [1, 0];
    const expected: Record<Orientation, number[][]> = {
      1: [TL, TR], 2: [TR, TL], 3: [BR, BL], 4: [BL, BR], 5: [TL, BL], 6: [TR, BR], 7: [BR, TR], 8: [BL, TL],
    };
    for (const [orientation, corners] of Object.entries(expected)) {
      const [a, b, c, d, e, f] = orientedMatrix(Number(orientation) as Orientation, { x: 0, y: 0, width: 1, height: 1 });
      const map = (u: number, v: number) => [a * u + c * v + e, b * u + d * v + f];
      expect([map(0, 1), map(1, 1)], `orientation ${orientation}`).toEqual(corners);
    }
  });
});

describe("PNG with alpha", () => {
  /** The IDAT data of a PNG written by filteredPng (one IDAT chunk after the 13-byte IHDR). */
  const idat = (png: Uint8Array) => png.subarray(8 + 25 + 8, 8 + 25 + 8 + new DataView(png.buffer, png.byteOffset).getUint32(8 + 25));

  it("undoes every row filter and splits colour from alpha exactly", async () => {
    for (const channels of [4, 2] as const) {
      const [width, height] = [37, 23];
      const pixels = new Uint8Array(width * height * channels).map((_, i) => (i * 97 + ((i / channels) | 0) * 13) & 0xff);
      const planes = await splitAlpha(idat(filteredPng(width, height, channels, pixels)), width, height, channels);
      const colours = channels - 1;
      expect(planes.colours).toBe(colours);
      const colour = inflateSync(planes.colour);
      const alpha = inflateSync(planes.alpha ?? new Uint8Array());
      for (let p = 0; p < width * height; p++) {
        for (let k = 0; k < colours; k++) expect(colour[p * colours + k]).toBe(pixels[p * channels + k]);
        expect(alpha[p]).toBe(pixels[p * channels + colours]);
      }
    }
  });

  it("needs no mask when every pixel is opaque", async () => {
    const pixels = new Uint8Array(4 * 3 * 4).map((_, i) => (i % 4 === 3 ? 255 : i));
    expect((await splitAlpha(idat(filteredPng(4, 3, 4, pixels)), 4, 3, 4)).alpha).toBeNull();
  });

  it("refuses data shorter or longer than the image", async () => {
    const png = filteredPng(4, 3, 4, new Uint8Array(48));
    await expect(splitAlpha(idat(png), 4, 4, 4)).rejects.toThrow("shorter");
    await expect(splitAlpha(idat(png), 4, 2, 4)).rejects.toThrow("longer");
  });
});
