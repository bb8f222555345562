import { describe, expect, it } from "vitest";
import { unzlibSync } from "fflate";
import { PDFDict, PDFDocument, PDFName, PDFRawStream, PDFRef, StandardFontEmbedder, StandardFonts } from "pdf-lib";
import { renderReport } from "../../../src/core/pdf/report.ts";
import { isWinAnsi } from "../../../src/core/pdf/layout/fonts.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { fixedClock } from "../../helpers/service.ts";
import { fixture } from "../../helpers/images.ts";
import { pdfFonts, pdfInfo, pdfPages, pdfText } from "./poppler.ts";
import { ALL_LAYERS, fullRequest, OPTIONS, SERVICE_NAME } from "./requests.ts";
import { dataUrl, solidJpeg, solidPng, translucentPng, withPngSize } from "./images.ts";
import { statusOf } from "../../../src/core/http/errors.ts";

/** pdftotext's words joined by single spaces, so wrapped lines compare as one text. */
const words = (text: string) => text.replace(/\s+/g, " ");

/** The texts REPORT.md prints for fullRequest(), by the layer that governs them ("always" for none). */
const ELEMENTS: Record<string, string[]> = {
  always: ["11/22/2026", "CASE-2026-0042", `Notes formatted by ${SERVICE_NAME}`, "State Crime Laboratory", "Notes updated 11/21/2026", "Page 1 of 1"],
  index: ["Index: IDX-7"],
  number: ["LC-11 LI-12", "RC-21 RI-22"],
  id: ["Identification"],
  class: ["Bullet (nine mm Luger)", "POTENTIAL SUBCLASS"],
  notes: ["Additional Notes", "Striations agree over the marked lands."],
  confirmation: ["Confirmation by:", "Date:"],
};

async function textOf(...args: Parameters<typeof fullRequest>): Promise<string> {
  return words(pdfText(await renderReport(fullRequest(...args), OPTIONS)));
}

async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(() => undefined, (err: unknown) => err);
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

describe("report text elements and layers (REPORT.md)", () => {
  it("prints every element when every layer is on", async () => {
    const text = await textOf();
    for (const texts of Object.values(ELEMENTS)) for (const expected of texts) expect(text).toContain(expected);
  });

  it("leaves out exactly the elements of a layer that is off", async () => {
    for (const layer of ["index", "number", "id", "class", "notes"]) {
      const text = await textOf({}, { activeAnnotations: ALL_LAYERS.filter((l) => l !== layer) });
      for (const [owner, texts] of Object.entries(ELEMENTS)) {
        for (const expected of texts) {
          if (owner === layer) expect(text, `${expected} with ${layer} off`).not.toContain(expected);
          else expect(text, `${expected} with ${layer} off`).toContain(expected);
        }
      }
    }
  });

  it("prints only the header and footer with no layer, and ignores unknown layer ids", async () => {
    const text = await textOf({ includeConfirmation: false }, { activeAnnotations: ["print", "visibility", "nonsense"] });
    for (const [owner, texts] of Object.entries(ELEMENTS)) {
      for (const expected of texts) {
        if (owner === "always") expect(text).toContain(expected);
        else expect(text, expected).not.toContain(expected);
      }
    }
  });

  it("the confirmation form depends on includeConfirmation alone", async () => {
    expect(await textOf({ includeConfirmation: false })).not.toContain("Confirmation by:");
    expect(await textOf({ includeConfirmation: true }, { activeAnnotations: [] })).toContain("Confirmation by:");
  });

  it("prints the index line only for indexType number", async () => {
    expect(await textOf({ indexType: "color", indexColor: "#00ff00" })).not.toContain("Index:");
  });

  it("prints the support level, custom class and subclass as REPORT.md says", async () => {
    expect(await textOf({ supportLevel: "Exclusion" })).toContain("Exclusion");
    expect(await textOf({ supportLevel: "Inconclusive" })).toContain("Inconclusive");
    const custom = await textOf({ customClass: "Shot pellet", classNote: undefined, hasSubclass: false });
    expect(custom).toContain("Shot pellet");
    expect(custom).not.toContain("Bullet");
    expect(custom).not.toContain("POTENTIAL SUBCLASS");
    expect(await textOf({ leftItem: "", rightItem: "" })).toMatch(/LC-11 .*RC-21/);
  });

  it("prints the server's date (UTC, MM/DD/YYYY) when currentDate is absent, and no 'Notes updated' without its date", async () => {
    const pdf = await renderReport(fullRequest({}, { currentDate: undefined, notesUpdatedFormatted: undefined }), {
      ...OPTIONS,
      clock: fixedClock("2027-03-04T23:30:00Z"),
    });
    const text = pdfText(pdf);
    expect(text).toContain("03/04/2027");
    expect(text).not.toContain("Notes updated");
    const blank = await renderReport(fullRequest({}, { currentDate: " " }), { ...OPTIONS, clock: fixedClock("2027-03-04T23:30:00Z") });
    expect(pdfText(blank)).toContain("03/04/2027");
  });

  it("renders a request with null annotationData", async () => {
    const text = words(pdfText(await renderReport({ ...fullRequest(), annotationData: null }, OPTIONS)));
    expect(text).toContain("CASE-2026-0042");
    expect(text).toContain("Page 1 of 1");
    expect(text).not.toContain("Confirmation by:");
  });
});

describe("pages", () => {
  it("is US Letter", async () => {
    const info = pdfInfo(await renderReport(fullRequest(), OPTIONS));
    expect(info["Pages"]).toBe("1");
    expect(info["Page size"]).toBe("612 x 792 pts (letter)");
  });

  it("long notes continue on a second page, which has the footer with its page number", async () => {
    const sentence = "The land impressions agree in width and twist";
    const notes = Array.from({ length: 90 }, (_, i) => `${sentence} (${i + 1}).`).join(" ") + " FINAL-WORD";
    const pdf = await renderReport(fullRequest({ additionalNotes: notes }), OPTIONS);
    const info = pdfInfo(pdf, { first: 1, last: 2 });
    expect(info["Pages"]).toBe("2");
    expect(info["Page    1 size"]).toBe("612 x 792 pts (letter)");
    expect(info["Page    2 size"]).toBe("612 x 792 pts (letter)");
    const [first = "", second = ""] = pdfPages(pdf).map(words);
    expect(first).toContain("Page 1 of 2");
    expect(second).toContain("Page 2 of 2");
    for (const footer of [`Notes formatted by ${SERVICE_NAME}`, "State Crime Laboratory", "Notes updated 11/21/2026"]) {
      expect(first).toContain(footer);
      expect(second).toContain(footer);
    }
    expect(first).toContain("(1).");
    expect(second).toContain("FINAL-WORD");
    // Nothing is lost: every numbered sentence is on one of the pages.
    const all = `${first} ${second}`;
    for (let i = 1; i <= 90; i++) expect(all).toContain(`(${i}).`);
  });

  it("short notes stay on one page", async () => {
    expect(pdfInfo(await renderReport(fullRequest(), OPTIONS))["Pages"]).toBe("1");
  });

  it("20,000 characters of one-word lines make many pages, each with its footer", async () => {
    const notes = Array.from({ length: 2_000 }, (_, i) => `L${i}`).join("\n");
    const pdf = await renderReport(fullRequest({ additionalNotes: notes }), OPTIONS);
    const pages = pdfPages(pdf);
    expect(pages.length).toBeGreaterThan(5);
    pages.forEach((page, i) => expect(page).toContain(`Page ${i + 1} of ${pages.length}`));
    expect(pages.at(-1)).toContain("L1999");
  });
});

describe("Unicode text", () => {
  it("prints Greek, Cyrillic and accented Latin in names, notes, company and case number", async () => {
    const text = await textOf(
      { leftCase: "Κάσα", leftItem: "Δ-1", rightCase: "Дело", rightItem: "№ 5", additionalNotes: "Ελληνικά, кириллица, café, Łódź, Ørsted, naïve." },
      { caseNumber: "Ü-2026-É", userCompany: "Лаборатория Ωμέγα" },
    );
    for (const expected of ["Κάσα Δ-1", "Дело № 5", "Ελληνικά, кириллица, café, Łódź, Ørsted, naïve.", "Ü-2026-É", "Лаборатория Ωμέγα"]) {
      expect(text).toContain(expected);
    }
  });

  it("prints every script the README promises, in the regular and the bold face, as poppler reads it back", async () => {
    const samples = [
      "Tiếng Việt: Người điều tra đã ký", // Vietnamese
      "ʃəˈtɑː ŋ ɬ ʔ", // IPA
      "Ŋŧħ ǅ Ș ț ő ű", // Latin Extended-A/B
      "Հայերեն արձանագրություն", // Armenian
      "ქართული ოქმი", // Georgian
      "Ἀθῆναι", // Greek Extended (polytonic)
      "Ґанок Ђорђе Ӂ", // Cyrillic beyond Russian
      "€ £ ¥ ₴ № ™ ½ → ≤ ∑ “quoted” — ‰ ⌀ ① ┼ ■ ☑ ✓", // symbols
    ];
    const notes = samples.join("\n");
    const text = await textOf({ additionalNotes: notes, classNote: samples[3] }, { userCompany: samples[4], caseNumber: samples[0] });
    for (const sample of samples) expect(text).toContain(sample);
  });

  it("prints a byte order mark (U+FEFF) as the other zero-width characters, not refused as right-to-left text", async () => {
    expect(await textOf({ additionalNotes: "\uFEFFnote\u200Bone" })).toContain("note");
  });

  it("prints a decomposed accent as the composed letter", async () => {
    expect(await textOf({ additionalNotes: "cafe\u0301 de\u0301ja\u0300" })).toContain("café déjà");
  });

  it("refuses a character no font covers with a 400 naming it and its field", async () => {
    const cases: [Parameters<typeof fullRequest>, string, string][] = [
      [[{ additionalNotes: "ok \u{1F9EA}" }], "U+1F9EA", "annotationData.additionalNotes"],
      [[{ leftCase: "漢字" }], "U+6F22", "annotationData.leftCase"],
      [[{}, { userCompany: "Lab \u0007" }], "U+0007", "userCompany"],
      [[{ classNote: "שלום" }], "U+05E9", "annotationData.customClass/classType/classNote"],
      [[{}, { caseNumber: "C-\u{1F52B}" }], "U+1F52B", "caseNumber"],
    ];
    for (const [args, codePoint, field] of cases) {
      const error = await rejection(renderReport(fullRequest(...args), OPTIONS));
      expect(statusOf(error)).toBe(400);
      expect(error.message).toContain(codePoint);
      expect(error.message).toContain(field);
    }
  });

  it("does not refuse text that a layer that is off would have printed", async () => {
    const text = await textOf({ additionalNotes: "\u{1F9EA}" }, { activeAnnotations: ["number"] });
    expect(text).toContain("LC-11 LI-12");
  });

  it("embeds its fonts as subsets, and labels in Courier-Bold only when they are WinAnsi", async () => {
    const pdf = await renderReport(fullRequest(), OPTIONS);
    const latin = pdfFonts(pdf);
    expect(latin.some((font) => font.name === "Courier-Bold")).toBe(true);
    const dejaVu = latin.filter((font) => /^DejaVuSans(-Bold)?-\d+$/.test(font.name));
    expect(dejaVu.length).toBe(2);
    for (const font of dejaVu) expect(font.embedded).toBe(true);
    // The two TrueType files hold 1.4 MB; only the glyphs used are in the PDF.
    expect(pdf.length).toBeLessThan(60_000);
    const greek = pdfFonts(await renderReport(fullRequest({ leftCase: "Κάσα" }), OPTIONS));
    expect(greek.some((font) => font.name === "Courier-Bold")).toBe(false);
  });

  it("prints a label in Courier-Bold exactly when pdf-lib's Courier-Bold encodes every character", () => {
    const courier = new Set(StandardFontEmbedder.for(StandardFonts.CourierBold as string as Parameters<typeof StandardFontEmbedder.for>[0]).encoding.supportedCodePoints);
    for (let codePoint = 0; codePoint <= 0x2200; codePoint++) expect(isWinAnsi(codePoint), codePoint.toString(16)).toBe(courier.has(codePoint));
  });

  it("deflates every stream but the photo's JPEG, the font subsets included, and they inflate to TrueType", async () => {
    const doc = await PDFDocument.load(await renderReport(fullRequest({}, { imageUrl: dataUrl(solidJpeg(64, 48, [200, 30, 30]), "image/jpeg") }), OPTIONS));
    const filters: string[] = [];
    const fontFiles: PDFRef[] = [];
    for (const [, object] of doc.context.enumerateIndirectObjects()) {
      if (object instanceof PDFRawStream) filters.push(String(object.dict.get(PDFName.of("Filter"))));
      if (object instanceof PDFDict && object.get(PDFName.of("FontFile2")) instanceof PDFRef) fontFiles.push(object.get(PDFName.of("FontFile2")) as PDFRef);
    }
    for (const ref of fontFiles) {
      const file = doc.context.lookup(ref);
      expect(file).toBeInstanceOf(PDFRawStream);
      expect([...unzlibSync((file as PDFRawStream).getContents()).subarray(0, 4)]).toEqual([0, 1, 0, 0]);
    }
    expect(fontFiles.length).toBe(2);
    expect(filters.filter((filter) => filter !== "/FlateDecode")).toEqual(["/DCTDecode"]);
  });
});

describe("the image", () => {
  it("embeds a JPEG's bytes as they are", async () => {
    const jpeg = fixture("sample.jpg");
    const pdf = Buffer.from(await renderReport(fullRequest({}, { imageUrl: dataUrl(jpeg, "image/jpeg") }), OPTIONS));
    expect(pdf.indexOf(Buffer.from(jpeg))).toBeGreaterThan(0);
    const made = solidJpeg(300, 200, [10, 200, 30]);
    const pdf2 = Buffer.from(await renderReport(fullRequest({}, { imageUrl: dataUrl(made, "image/jpeg") }), OPTIONS));
    expect(pdf2.indexOf(Buffer.from(made))).toBeGreaterThan(0);
  });

  it("embeds PNGs: opaque ones without recompression, others through pdf-lib", async () => {
    const png = solidPng(50, 40, [1, 2, 3]);
    // The IDAT data of an opaque PNG is the image stream as it is.
    const idat = Buffer.from(png).indexOf("IDAT");
    const length = Buffer.from(png).readUInt32BE(idat - 4);
    const data = Buffer.from(png).subarray(idat + 4, idat + 4 + length);
    const pdf = Buffer.from(await renderReport(fullRequest({}, { imageUrl: dataUrl(png) }), OPTIONS));
    expect(pdf.indexOf(data)).toBeGreaterThan(0);
    // The fixture has an alpha channel or is otherwise not on the fast path; it renders all the same.
    const sample = await renderReport(fullRequest({}, { imageUrl: dataUrl(fixture("sample.png")) }), OPTIONS);
    expect(pdfInfo(sample)["Pages"]).toBe("1");
  });

  it("refuses other formats and broken files with a 400 that says what they are", async () => {
    const cases: [string, string][] = [
      ["sample.gif", "GIF"],
      ["sample.webp", "WebP"],
      ["sample.tiff", "TIFF"],
      ["sample.bmp", "BMP"],
      ["not-an-image.png", "not an image"],
    ];
    for (const [name, expected] of cases) {
      const error = await rejection(renderReport(fullRequest({}, { imageUrl: dataUrl(fixture(name)) }), OPTIONS));
      expect(statusOf(error), name).toBe(400);
      expect(error.message).toContain(expected);
      expect(error.message).toContain("JPEG and PNG");
    }
    const brokenJpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 4, 1, 2, 3, 4, 5]);
    const jpegError = await rejection(renderReport(fullRequest({}, { imageUrl: dataUrl(brokenJpeg) }), OPTIONS));
    expect(statusOf(jpegError)).toBe(400);
    expect(jpegError.message).toContain("not a readable JPEG");
    // A PNG that must be decoded (alpha) and claims 10,000 x 10,000 pixels is refused before decoding.
    const bomb = withPngSize(translucentPng(4, 4, [0, 0, 0]), 10_000, 10_000);
    const bombError = await rejection(renderReport(fullRequest({}, { imageUrl: dataUrl(bomb) }), OPTIONS));
    expect(statusOf(bombError)).toBe(400);
    expect(bombError.message).toContain("(10000 x 10000 pixels, with transparency, interlacing or 16-bit samples) would take about 763 MB to decode");
    const corruptAlpha = translucentPng(20, 20, [0, 0, 0]);
    corruptAlpha.fill(7, 41, 60);
    const alphaError = await rejection(renderReport(fullRequest({}, { imageUrl: dataUrl(corruptAlpha) }), OPTIONS));
    expect(statusOf(alphaError)).toBe(400);
    expect(alphaError.message).toContain("not a readable PNG");
    const brokenPng = solidPng(10, 10, [0, 0, 0]).slice(0, 40);
    const pngError = await rejection(renderReport(fullRequest({}, { imageUrl: dataUrl(brokenPng) }), OPTIONS));
    expect(statusOf(pngError)).toBe(400);
    expect(pngError.message).toContain("not a readable PNG");
  });
});

describe("validation without HTTP", () => {
  it("refuses NaN, out-of-range and missing box fields naming the box", async () => {
    const box = { id: "scratch-3", x: 10, y: 10, width: 10, height: 10, color: "#ff0000" };
    const cases: [object, string][] = [
      [{ ...box, x: Number.NaN }, "boxAnnotations.0.x"],
      [{ ...box, width: 100.5 }, "boxAnnotations.0.width"],
      [{ ...box, y: -1 }, "boxAnnotations.0.y"],
      [{ id: box.id, x: 1, y: 1, width: 1, color: "red" }, "boxAnnotations.0.height"],
      [{ ...box, color: "#12" }, "boxAnnotations.0.color"],
    ];
    for (const [bad, field] of cases) {
      const input = fullRequest({ boxAnnotations: [bad as never] });
      const error = await rejection(renderReport(input, OPTIONS));
      expect(statusOf(error)).toBe(400);
      expect(error.message).toContain(field);
      expect(error.message).toContain('box "scratch-3"');
    }
  });

  it("accepts box colours as #rgb, #rrggbb and CSS names", async () => {
    const boxes = ["#f00", "#00FF00", "RebeccaPurple"].map((color, i) => ({ id: `b${i}`, x: 1, y: 1, width: 5, height: 5, color }));
    const pdf = await renderReport(fullRequest({ boxAnnotations: boxes }), OPTIONS);
    expect(pdfInfo(pdf)["Pages"]).toBe("1");
  });
});
