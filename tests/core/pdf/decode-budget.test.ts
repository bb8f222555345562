/**
 * A PNG of a few hundred kilobytes can decode to hundreds of megabytes, and the PDF worker is
 * open to anyone: eight such reports at once took a server past 2 GB. One PNG's decode is
 * capped by its estimated memory, and all decodes of a process share a budget that a render
 * holds until its PDF is saved; JPEGs and PNGs embedded as they are never wait for it.
 */
import { describe, expect, it } from "vitest";
import { deflateSync } from "node:zlib";
import { createPdfWorker } from "../../../src/core/workers/pdf.ts";
import { DecodeBudget } from "../../../src/core/pdf/image/decode-budget.ts";
import { decodeBudget, MAX_DECODED_PNG_BYTES, reportImageDecodeBytes } from "../../../src/core/pdf/image/image-embed.ts";
import { fixedClock } from "../../helpers/service.ts";
import { fullRequest, testConfig } from "./requests.ts";
import { chunk, dataUrl, solidJpeg, solidPng, translucentPng } from "./images.ts";

/** A PNG whose header claims `width` x `height` of colour `type` at `depth` bits (its data is a few bytes). */
function pngHeader(width: number, height: number, type: number, depth: number, interlace = 0): Uint8Array {
  const header = new Uint8Array(13);
  new DataView(header.buffer).setUint32(0, width);
  new DataView(header.buffer).setUint32(4, height);
  header.set([depth, type, 0, 0, interlace], 8);
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  return new Uint8Array([...signature, ...chunk("IHDR", header), ...chunk("IDAT", deflateSync(new Uint8Array(8))), ...chunk("IEND", new Uint8Array(0))]);
}
const png = (bytes: Uint8Array) => ({ type: "image/png" as const, bytes });

describe("the memory a report's image takes to decode", () => {
  it("is estimated from the header: nothing for a JPEG or an opaque PNG kept as it is; 8-bit RGBA at 30 megapixels still fits, 16-bit RGBA at 20 does not", () => {
    expect(reportImageDecodeBytes({ type: "image/jpeg", bytes: solidJpeg(8, 8, [1, 2, 3]) })).toBe(0);
    expect(reportImageDecodeBytes(png(pngHeader(30_000, 3_000, 2, 8)))).toBe(0);
    expect(reportImageDecodeBytes(png(pngHeader(6_000, 5_000, 6, 8)))).toBe(30_000_000 * 8);
    expect(reportImageDecodeBytes(png(pngHeader(1_000, 1_000, 6, 16)))).toBe(1_000_000 * 16);
    expect(reportImageDecodeBytes(png(pngHeader(1_000, 1_000, 2, 16, 1)))).toBe(1_000_000 * 20);
    let refusal: unknown;
    try {
      reportImageDecodeBytes(png(pngHeader(5_000, 4_000, 6, 16)));
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "imageUrl", estimatedBytes: 320_000_000, limitBytes: MAX_DECODED_PNG_BYTES } });
  });

  it("over the cap is a 400 from the PDF worker before anything is decoded", async () => {
    const app = createPdfWorker({ config: testConfig(), clock: fixedClock("2026-11-22T12:00:00Z"), options: { serviceName: "Lab PDF" } });
    const response = await app.request("/", { method: "POST", body: JSON.stringify(fullRequest({}, { imageUrl: dataUrl(pngHeader(5_477, 5_477, 6, 16)) })) });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.message).toMatch(/^The PNG at imageUrl \(5477 x 5477 pixels, .*\) would take about \d+ MB to decode; at most 256 MB$/);
  });
});

describe("DecodeBudget", () => {
  it("grants reservations first come, first served, never more than its total at once", async () => {
    const budget = new DecodeBudget(100);
    const order: string[] = [];
    let held = 0;
    let most = 0;
    const gates: Record<string, () => void> = {};
    const task = (name: string, bytes: number) =>
      budget.run(bytes, async () => {
        held += bytes;
        most = Math.max(most, held);
        order.push(name);
        await new Promise<void>((open) => (gates[name] = open));
        held -= bytes;
      });
    const running = [task("a", 60), task("b", 60), task("c", 10)];
    await new Promise((resolve) => setTimeout(resolve, 10));
    // c would fit beside a, but waits behind b: a large decode is never starved by small ones.
    expect(order).toEqual(["a"]);
    gates["a"]!();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(order).toEqual(["a", "b", "c"]);
    gates["b"]!();
    gates["c"]!();
    await Promise.all(running);
    expect(most).toBeLessThanOrEqual(100);
    expect(budget.free).toBe(100);
  });

  it("refuses a render that waited longer than maxWaitMs with a 503 and Retry-After; those behind it go on", async () => {
    const budget = new DecodeBudget(100, { maxWaitMs: 50 });
    let release!: () => void;
    const holding = budget.run(100, () => new Promise<void>((open) => (release = open)));
    const refused = await budget.run(60, () => Promise.resolve("ran")).catch((err: unknown) => err);
    expect(refused).toMatchObject({ kind: "unavailable", details: { retryAfterSeconds: 1 } });
    const later = budget.run(60, () => Promise.resolve("ran"));
    release();
    await holding;
    expect(await later).toBe("ran");
    expect(budget.free).toBe(100);
  });

  it("gives back a reservation held longer than maxHoldMs (a render cancelled before its finally, as workerd may)", async () => {
    let now = 0;
    const budget = new DecodeBudget(100, { maxHoldMs: 1_000, now: () => now });
    void budget.run(100, () => new Promise<never>(() => undefined)); // never settles
    expect(budget.free).toBe(0);
    now = 1_001;
    expect(budget.free).toBe(100);
    expect(await budget.run(100, () => Promise.resolve("ran"))).toBe("ran");
  });

  it("frees a reservation when its task fails", async () => {
    const budget = new DecodeBudget(10);
    await expect(budget.run(10, () => Promise.reject(new Error("broken")))).rejects.toThrow("broken");
    expect(budget.free).toBe(10);
  });
});

describe("a render", () => {
  it("holds the shared budget until its PDF is saved: with the budget taken, a translucent PNG waits and a JPEG or an opaque PNG does not", async () => {
    const app = createPdfWorker({ config: testConfig(), clock: fixedClock("2026-11-22T12:00:00Z"), options: { serviceName: "Lab PDF" } });
    const render = (imageUrl: string) => app.request("/", { method: "POST", body: JSON.stringify(fullRequest({}, { imageUrl })) });
    let release!: () => void;
    const taken = decodeBudget.run(decodeBudget.total, () => new Promise<void>((open) => (release = open)));
    let translucentDone = false;
    const translucent = Promise.resolve(render(dataUrl(translucentPng(64, 48, [10, 20, 30])))).then((response) => {
      translucentDone = true;
      return response;
    });
    expect((await render(dataUrl(solidJpeg(64, 48, [1, 2, 3]), "image/jpeg"))).status).toBe(200);
    expect((await render(dataUrl(solidPng(64, 48, [1, 2, 3])))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(translucentDone).toBe(false);
    release();
    await taken;
    expect((await translucent).status).toBe(200);
    expect(decodeBudget.free).toBe(decodeBudget.total);
  });
});
