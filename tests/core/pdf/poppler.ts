import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decode } from "fast-png";
import { missingTool } from "../../helpers/system-tools.ts";

/** Runs a poppler tool on the PDF in a temp file; returns what it printed or wrote. */
function withPdf<T>(pdf: Uint8Array, run: (file: string, dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "fa-pdf-"));
  try {
    const file = join(dir, "report.pdf");
    writeFileSync(file, pdf);
    try {
      return run(file, dir);
    } catch (err) {
      // Say how to install poppler rather than failing with spawn's ENOENT.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw missingTool("poppler's pdftotext, pdfinfo, pdffonts and pdftoppm", "poppler-utils");
      throw err;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The text of every page (`pdftotext`), pages separated by form feeds. */
export function pdfText(pdf: Uint8Array): string {
  return withPdf(pdf, (file) => execFileSync("pdftotext", ["-enc", "UTF-8", file, "-"], { encoding: "utf8" }));
}

/** The text of each page, in order. */
export function pdfPages(pdf: Uint8Array): string[] {
  return pdfText(pdf).split("\f").slice(0, -1);
}

/** `pdfinfo` as a record ("Pages" → "2", "Page size" → "612 x 792 pts (letter)"; with pages, "Page    2 size"). */
export function pdfInfo(pdf: Uint8Array, pages?: { first: number; last: number }): Record<string, string> {
  const range = pages === undefined ? [] : ["-f", String(pages.first), "-l", String(pages.last)];
  const text = withPdf(pdf, (file) => execFileSync("pdfinfo", [...range, file], { encoding: "utf8" }));
  return Object.fromEntries(
    text.split("\n").filter((line) => line.includes(":")).map((line) => {
      const at = line.indexOf(":");
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    }),
  );
}

/** The fonts of the PDF as `pdffonts` lists them: name, type, embedded, subset. */
export function pdfFonts(pdf: Uint8Array): { name: string; embedded: boolean; subset: boolean }[] {
  const text = withPdf(pdf, (file) => execFileSync("pdffonts", [file], { encoding: "utf8" }));
  return text.split("\n").slice(2).filter((line) => line.trim() !== "").map((line) => {
    const columns = line.trim().split(/\s+/);
    // The last five columns: emb sub uni object-number generation.
    const [emb, sub] = columns.slice(-5, -3);
    return { name: columns[0] ?? "", embedded: emb === "yes", subset: sub === "yes" };
  });
}

/** A page rendered at 72 dpi (one pixel per point), with its top-left pixel at (0, 0). */
export interface Raster {
  width: number;
  height: number;
  /** The RGB of a pixel. */
  rgb(x: number, y: number): [number, number, number];
}

/** Renders one page with `pdftoppm -r 72 -png` and decodes it. */
export function renderPage(pdf: Uint8Array, page = 1): Raster {
  const png = withPdf(pdf, (file, dir) => {
    execFileSync("pdftoppm", ["-r", "72", "-png", "-f", String(page), "-l", String(page), "-singlefile", file, join(dir, "page")]);
    return readFileSync(join(dir, "page.png"));
  });
  const image = decode(png);
  const channels = image.channels;
  return {
    width: image.width,
    height: image.height,
    rgb(x, y) {
      const i = (y * image.width + x) * channels;
      const data = image.data;
      return [Number(data[i]), Number(data[i + 1]), Number(data[i + 2])];
    },
  };
}
