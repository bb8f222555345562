import { describe, expect, it } from "vitest";
import { renderReport } from "../../../src/core/pdf/report.ts";
import { type Raster, renderPage } from "./poppler.ts";
import { dataUrl, filteredPng, halvesJpeg, solidJpeg, solidPng, translucentPng, withOrientation } from "./images.ts";
import { fullRequest, OPTIONS } from "./requests.ts";

type Rgb = readonly [number, number, number];
// The image's colour: one the page uses nowhere else.
const GREY: Rgb = [60, 140, 200];

const near = (pixel: Rgb, colour: Rgb, tolerance = 40) => pixel.every((value, i) => Math.abs(value - (colour[i] ?? 0)) <= tolerance);

/** The drawn image: the bounding box of its grey pixels, in raster pixels (top-down). */
function imageRect(page: Raster): { left: number; top: number; right: number; bottom: number } {
  let left = Infinity;
  let top = Infinity;
  let right = -Infinity;
  let bottom = -Infinity;
  for (let y = 0; y < page.height; y++) {
    for (let x = 0; x < page.width; x++) {
      if (near(page.rgb(x, y), GREY, 12)) {
        left = Math.min(left, x);
        right = Math.max(right, x + 1);
        top = Math.min(top, y);
        bottom = Math.max(bottom, y + 1);
      }
    }
  }
  return { left, top, right, bottom };
}

/** Centres of the runs of `colour` along a row or a column. */
function runs(page: Raster, colour: Rgb, line: { row: number } | { column: number }): number[] {
  const length = "row" in line ? page.width : page.height;
  const centres: number[] = [];
  let start = -1;
  for (let i = 0; i <= length; i++) {
    const hit = i < length && near("row" in line ? page.rgb(i, line.row) : page.rgb(line.column, i), colour);
    if (hit && start < 0) start = i;
    if (!hit && start >= 0) {
      centres.push((start + i) / 2);
      start = -1;
    }
  }
  return centres;
}

async function render(imageUrl: string, boxes: { x: number; y: number; width: number; height: number; color: string }[], layers = ["box"], extra = {}) {
  const pdf = await renderReport(
    fullRequest(
      { boxAnnotations: boxes.map((box, i) => ({ id: `b${i}`, ...box })), includeConfirmation: false, ...extra },
      { imageUrl, activeAnnotations: layers },
    ),
    OPTIONS,
  );
  return renderPage(pdf, 1);
}

/** Checks that a box is drawn, in `colour`, at its percentages of the drawn image. */
function expectBox(page: Raster, box: { x: number; y: number; width: number; height: number }, colour: Rgb) {
  const image = imageRect(page);
  const width = image.right - image.left;
  const height = image.bottom - image.top;
  const left = image.left + (width * box.x) / 100;
  const right = image.left + (width * (box.x + box.width)) / 100;
  const top = image.top + (height * box.y) / 100;
  const bottom = image.top + (height * (box.y + box.height)) / 100;
  const across = runs(page, colour, { row: Math.round((top + bottom) / 2) });
  expect(across.length, `runs across ${JSON.stringify(across)}`).toBe(2);
  expect(Math.abs((across[0] ?? 0) - left)).toBeLessThanOrEqual(2);
  expect(Math.abs((across[1] ?? 0) - right)).toBeLessThanOrEqual(2);
  const down = runs(page, colour, { column: Math.round((left + right) / 2) });
  expect(down.length, `runs down ${JSON.stringify(down)}`).toBe(2);
  expect(Math.abs((down[0] ?? 0) - top)).toBeLessThanOrEqual(2);
  expect(Math.abs((down[1] ?? 0) - bottom)).toBeLessThanOrEqual(2);
  // Inside the box the image shows through: boxes are not filled.
  expect(near(page.rgb(Math.round((left + right) / 2), Math.round((top + bottom) / 2)), GREY, 12)).toBe(true);
}

describe("boxes on the drawn image (pdftoppm at 72 dpi)", () => {
  it("draws a box at its percentages of a landscape image, in its colour", async () => {
    const box = { x: 10, y: 20, width: 30, height: 40 };
    const named = { x: 60, y: 50, width: 25, height: 30 };
    const page = await render(dataUrl(solidPng(400, 300, GREY)), [{ ...box, color: "#ff0000" }, { ...named, color: "lime" }]);
    expect([page.width, page.height]).toEqual([612, 792]);
    const image = imageRect(page);
    // Full content width (0.5 in margins): 540 pt, aspect ratio kept.
    expect(image.right - image.left).toBeGreaterThanOrEqual(539);
    expect(image.right - image.left).toBeLessThanOrEqual(541);
    expect(Math.abs((image.bottom - image.top) - 405)).toBeLessThanOrEqual(1);
    expectBox(page, box, [255, 0, 0]);
    expectBox(page, named, [0, 255, 0]);
  });

  it("draws a box on a tall narrow image relative to the letterboxed image, not the column", async () => {
    const box = { x: 10, y: 20, width: 30, height: 40 };
    const page = await render(dataUrl(solidPng(100, 400, GREY)), [{ ...box, color: "#ff0000" }]);
    const image = imageRect(page);
    const width = image.right - image.left;
    const height = image.bottom - image.top;
    // At most 65% of the page height, aspect ratio 1:4 kept, centred between the margins.
    // (Partly covered pixels at both ends count: up to two more than the height in points.)
    expect(height).toBeLessThanOrEqual(0.65 * 792 + 2);
    expect(height).toBeGreaterThanOrEqual(0.65 * 792 - 2);
    expect(height).toBeGreaterThan(400);
    expect(Math.abs(width * 4 - height)).toBeLessThanOrEqual(6);
    expect(Math.abs((image.left + image.right) / 2 - 306)).toBeLessThanOrEqual(1);
    expectBox(page, box, [255, 0, 0]);
    // Where the box would be if placed on the column instead, there is nothing red.
    const columnLeft = 36 + (540 * box.x) / 100;
    expect(runs(page, [255, 0, 0], { row: Math.round(image.top + height * 0.4) }).some((x) => Math.abs(x - columnLeft) < 3)).toBe(false);
  });

  it("draws boxes on a JPEG too", async () => {
    const box = { x: 50, y: 5, width: 45, height: 90 };
    expectBox(await render(dataUrl(solidJpeg(320, 240, GREY), "image/jpeg"), [{ ...box, color: "#f00" }]), box, [255, 0, 0]);
  });

  it("draws no box when the box layer is off", async () => {
    const page = await render(dataUrl(solidPng(400, 300, GREY)), [{ x: 10, y: 20, width: 30, height: 40, color: "#ff0000" }], []);
    const image = imageRect(page);
    const middle = Math.round((image.top + image.bottom) / 2);
    expect(runs(page, [255, 0, 0], { row: middle })).toEqual([]);
  });

  it("draws the index colour as a border around the image, hiding none of it", async () => {
    const page = await render(dataUrl(solidPng(400, 300, GREY)), [], ["index"], { indexType: "color", indexColor: "#0000ff" });
    const image = imageRect(page);
    const middleRow = Math.round((image.top + image.bottom) / 2);
    expect(image.right - image.left).toBeGreaterThanOrEqual(539);
    for (const x of [image.left - 2, image.left - 4, image.right + 1, image.right + 3]) {
      expect(near(page.rgb(x, middleRow), [0, 0, 255]), `x=${x}`).toBe(true);
    }
    expect(near(page.rgb(image.left, middleRow), GREY, 12)).toBe(true);
  });

  it("puts the case/item labels in caseFontColor on a dark ground, or a light ground for a dark colour", async () => {
    const count = (page: Raster, colour: Rgb, tolerance: number) => {
      const image = imageRect(page);
      let hits = 0;
      for (let y = image.top; y < image.top + 30; y++) for (let x = image.left; x < image.left + 120; x++) if (near(page.rgb(x, y), colour, tolerance)) hits++;
      return hits;
    };
    // The ground is black or white at 65% over the image.
    const over = (ground: number): Rgb => [0, 1, 2].map((i) => Math.round(0.65 * ground + 0.35 * (GREY[i] ?? 0))) as unknown as Rgb;
    const yellow = await render(dataUrl(solidPng(400, 300, GREY)), [], ["number"]);
    expect(count(yellow, [255, 222, 33], 30)).toBeGreaterThan(20);
    expect(count(yellow, over(0), 8)).toBeGreaterThan(200);
    expect(count(yellow, over(255), 8)).toBe(0);
    const navy = await render(dataUrl(solidPng(400, 300, GREY)), [], ["number"], { caseFontColor: "navy" });
    expect(count(navy, [0, 0, 128], 40)).toBeGreaterThan(20);
    expect(count(navy, over(255), 8)).toBeGreaterThan(200);
    expect(count(navy, over(0), 8)).toBe(0);
  });

  it("draws a PNG with an alpha channel (decoded by pdf-lib) with its boxes in place", async () => {
    const box = { x: 20, y: 30, width: 50, height: 40 };
    expectBox(await render(dataUrl(translucentPng(300, 200, GREY)), [{ ...box, color: "#ff0000" }]), box, [255, 0, 0]);
  });

  it("turns a JPEG as its EXIF orientation says, and places boxes on the image as seen", async () => {
    const red: Rgb = [255, 0, 0];
    const blue: Rgb = [0, 0, 255];
    // Stored landscape, red left and blue right; orientation 6 shows it turned a quarter clockwise: red on top.
    for (const [orientation, top, bottom] of [[6, red, blue], [8, blue, red], [1, undefined, undefined]] as const) {
      const jpeg = withOrientation(halvesJpeg(200, 100, red, blue), orientation);
      const page = await render(dataUrl(jpeg, "image/jpeg"), [{ x: 10, y: 10, width: 80, height: 30, color: "#00ff00" }]);
      let left = Infinity;
      let right = -Infinity;
      let upper = Infinity;
      let lower = -Infinity;
      for (let y = 0; y < page.height; y++) {
        for (let x = 0; x < page.width; x++) {
          if (near(page.rgb(x, y), red, 60) || near(page.rgb(x, y), blue, 60)) {
            left = Math.min(left, x);
            right = Math.max(right, x + 1);
            upper = Math.min(upper, y);
            lower = Math.max(lower, y + 1);
          }
        }
      }
      const [width, height] = [right - left, lower - upper];
      const centre = Math.round((left + right) / 2);
      if (top === undefined) {
        expect(width / height, "as stored").toBeCloseTo(2, 1);
        continue;
      }
      expect(height / width, `orientation ${orientation}`).toBeCloseTo(2, 1);
      expect(near(page.rgb(centre, Math.round(upper + height * 0.25)), top, 60), `orientation ${orientation} top`).toBe(true);
      expect(near(page.rgb(centre, Math.round(upper + height * 0.75)), bottom, 60), `orientation ${orientation} bottom`).toBe(true);
      // The green box spans 10%..40% of the height of the image as seen.
      const down = runs(page, [0, 255, 0], { column: centre });
      expect(down.length).toBe(2);
      expect(Math.abs((down[0] ?? 0) - (upper + height * 0.1))).toBeLessThanOrEqual(2);
      expect(Math.abs((down[1] ?? 0) - (upper + height * 0.4))).toBeLessThanOrEqual(2);
    }
  });

  it("shows the page through the transparent part of a PNG with alpha (soft mask)", async () => {
    const [width, height] = [200, 100];
    const pixels = new Uint8Array(width * height * 4);
    // Left half fully transparent, right half opaque in the image colour.
    for (let p = 0; p < width * height; p++) pixels.set([...GREY, (p % width) < width / 2 ? 0 : 255], p * 4);
    const page = await render(dataUrl(filteredPng(width, height, 4, pixels)), []);
    const image = imageRect(page);
    const row = Math.round((image.top + image.bottom) / 2);
    // Only the opaque half is there: 270 pt of the 540 pt column, at its right.
    expect(Math.abs(image.right - image.left - 270)).toBeLessThanOrEqual(2);
    expect(near(page.rgb(Math.round(image.left - 100), row), [255, 255, 255], 2)).toBe(true);
    const grey = new Uint8Array(width * height * 2);
    for (let p = 0; p < width * height; p++) grey.set([90, (p % width) < width / 2 ? 0 : 255], p * 2);
    const greyPage = await render(dataUrl(filteredPng(width, height, 2, grey)), []);
    expect(near(greyPage.rgb(450, row), [90, 90, 90], 3)).toBe(true);
    expect(near(greyPage.rgb(150, row), [255, 255, 255], 2)).toBe(true);
  });
});
