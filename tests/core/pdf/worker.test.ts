import { describe, expect, it } from "vitest";
import { createPdfWorker, pdfWorkerOptions } from "../../../src/core/workers/pdf.ts";
import { fixedClock } from "../../helpers/service.ts";
import { pdfInfo, pdfText } from "./poppler.ts";
import { fullRequest, testConfig } from "./requests.ts";
import { deflateSync } from "node:zlib";
import { chunk, dataUrl, solidJpeg, solidPng, withPngSize } from "./images.ts";
import { startHttpServer } from "../../helpers/http-server.ts";
import { loadOpenApiGenerators } from "../../../src/core/http/openapi-document.ts";

type ErrorBody = { error: string; code: string; message: string; details: Record<string, unknown> };

function worker(env: Record<string, string> = {}) {
  return createPdfWorker({ config: testConfig(env), clock: fixedClock("2026-11-22T12:00:00Z"), options: { serviceName: "Lab PDF" } });
}

const post = (app: ReturnType<typeof worker>, body: unknown) =>
  app.request("/", { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body), headers: { "Content-Type": "application/json" } });

describe("PDF worker over HTTP (spec 4.3)", () => {
  it("answers the report as application/pdf, inline, named after the case and item numbers", async () => {
    const response = await post(worker(), fullRequest());
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/pdf");
    expect(response.headers.get("Content-Disposition")).toBe(
      `inline; filename="report-CASE-2026-0042-LC-11-LI-12-RC-21-RI-22.pdf"; filename*=UTF-8''report-CASE-2026-0042-LC-11-LI-12-RC-21-RI-22.pdf`,
    );
    const pdf = new Uint8Array(await response.arrayBuffer());
    expect(pdfInfo(pdf)["Page size"]).toBe("612 x 792 pts (letter)");
    expect(pdfText(pdf)).toContain("Notes formatted by Lab PDF");
  });

  it("sanitises the file name: no separators, quotes or control characters; Unicode kept in filename*", async () => {
    const response = await post(
      worker(),
      fullRequest({ leftCase: '../"evil"', leftItem: "a/b\\c", rightCase: "Дело", rightItem: "№\r\n5" }, { caseNumber: "Κ 1; x=y" }),
    );
    expect(response.status).toBe(200);
    const disposition = response.headers.get("Content-Disposition") ?? "";
    expect(disposition).toBe(
      `inline; filename="report-1_x_y-evil-a_b_c-No_5.pdf"; filename*=UTF-8''report-%CE%9A_1_x_y-evil-a_b_c-%D0%94%D0%B5%D0%BB%D0%BE-5.pdf`,
    );
  });

  it("dates the report by its clock when currentDate is absent", async () => {
    const response = await post(worker(), fullRequest({}, { currentDate: undefined }));
    expect(pdfText(new Uint8Array(await response.arrayBuffer()))).toContain("11/22/2026");
  });

  it("answers 405 with the standard body and Allow for other methods", async () => {
    const app = worker();
    for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
      const response = await app.request("/", { method });
      expect(response.status, method).toBe(405);
      expect(response.headers.get("Allow")).toBe("POST, OPTIONS");
      const body = (await response.json()) as ErrorBody;
      expect(Object.keys(body).sort()).toEqual(["code", "details", "error", "message"]);
      expect(body.code).toBe("VALIDATION_ERROR");
    }
  });

  it("answers 400 naming the field for bad bodies, colours, percentages and boxes", async () => {
    const app = worker();
    const box = { id: "stria-9", x: 10, y: 10, width: 10, height: 10, color: "#ff0000" };
    const { height: _h, ...noHeight } = box;
    const cases: [unknown, string[]][] = [
      ["", ["empty"]],
      ["{not json", ["not valid JSON"]],
      [[], ["Invalid request body"]],
      [{ ...fullRequest(), imageUrl: undefined }, ['"imageUrl"']],
      [{ ...fullRequest(), imageUrl: "file:///etc/passwd" }, ['"imageUrl"', "http(s) or data: URL"]],
      [{ ...fullRequest(), activeAnnotations: "box" }, ['"activeAnnotations"']],
      [fullRequest({ caseFontColor: "not-a-colour" }), ['"annotationData.caseFontColor"', "CSS colour name"]],
      [fullRequest({ indexColor: "#12345" }), ['"annotationData.indexColor"']],
      [fullRequest({ classType: "Shotgun" as never }), ['"annotationData.classType"']],
      [fullRequest({ boxAnnotations: [{ ...box, x: 101 }] }), ['"annotationData.boxAnnotations.0.x"', 'box "stria-9"']],
      [fullRequest({ boxAnnotations: [box, { ...box, id: "b2", width: -5 }] }), ['"annotationData.boxAnnotations.1.width"', 'box "b2"']],
      [fullRequest({ boxAnnotations: [{ ...box, y: "NaN" as never }] }), ['"annotationData.boxAnnotations.0.y"', 'box "stria-9"']],
      [fullRequest({ boxAnnotations: [noHeight as never] }), ['"annotationData.boxAnnotations.0.height"', 'box "stria-9"']],
      [fullRequest({ boxAnnotations: [{ ...box, id: undefined, color: "bluish" } as never] }), ["boxAnnotations.0", "(box 1)"]],
      [fullRequest({ boxAnnotations: [{ ...box, color: "rgb(1,2,3)" }] }), ['"annotationData.boxAnnotations.0.color"']],
    ];
    for (const [body, expected] of cases) {
      const response = await post(app, body);
      const error = (await response.json()) as ErrorBody;
      expect(response.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(error.code).toBe("VALIDATION_ERROR");
      for (const part of expected) expect(error.message).toContain(part);
    }
  });

  it("answers 400, never 500, for a character no font covers", async () => {
    const response = await post(worker(), fullRequest({ additionalNotes: "\u{1F9EA}" }));
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).message).toContain("U+1F9EA");
  });

  it("refuses a body over the limit with 413", async () => {
    const response = await worker().request("/", {
      method: "POST",
      body: " ".repeat(33 * 1024 * 1024),
      headers: { "Content-Type": "application/json" },
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as ErrorBody).code).toBe("VALIDATION_ERROR");
  });

  it("describes POST / in the OpenAPI document", async () => {
    loadOpenApiGenerators();
    const app = worker();
    const document = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "pdf", version: "1" } });
    const post = document.paths?.["/"]?.post;
    expect(post?.responses?.["200"]).toHaveProperty("content.application/pdf");
    expect(post?.requestBody).toHaveProperty("content.application/json");
  });
});

describe("PDF worker: the image is what it claims (issue 13 item 9)", () => {
  const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  const ihdr = (width: number, height: number) => {
    const body = new Uint8Array(13);
    new DataView(body.buffer).setUint32(0, width);
    new DataView(body.buffer).setUint32(4, height);
    body.set([8, 2, 0, 0, 0], 8); // 8-bit RGB: opaque, so embedded as it is, without decoding
    return chunk("IHDR", body);
  };
  const png = (...chunks: Uint8Array[]) => new Uint8Array([...SIGNATURE, ...chunks.flatMap((part) => [...part])]);
  const IEND = chunk("IEND", new Uint8Array(0));
  const refusal = async (imageUrl: string, app = worker()) => {
    const response = await post(app, fullRequest({}, { imageUrl }));
    expect(response.headers.get("Content-Type")).not.toBe("application/pdf");
    return { status: response.status, body: (await response.json()) as ErrorBody };
  };

  it("a PNG with a valid header and garbage image data answers 400, however well its chunks are formed", async () => {
    const header = png(ihdr(64, 48)).subarray(0, 33);
    const cases: [Uint8Array, string][] = [
      // The header, then bytes that are no chunks at all.
      [new Uint8Array([...header, ...new TextEncoder().encode("garbage where the image data should be, and no IEND")]), "not a readable PNG: "],
      // Chunks with right lengths and CRCs around data that is no zlib stream.
      [png(ihdr(64, 48), chunk("IDAT", new TextEncoder().encode("not compressed pixels")), IEND), "its image data (IDAT) does not start as a zlib stream"],
      // A zlib header, then a deflate block of a type that does not exist.
      [png(ihdr(64, 48), chunk("IDAT", new Uint8Array([0x78, 0x9c, ...new Array<number>(64).fill(0xff)])), IEND), "its image data is not valid zlib data"],
      // A whole zlib stream, but of one pixel where the header promises 64 x 48.
      [png(ihdr(64, 48), chunk("IDAT", deflateSync(new Uint8Array([0, 1, 2, 3]))), IEND), "its image data holds 4 bytes, but its size and format need 9264"],
    ];
    for (const [bytes, message] of cases) {
      const { status, body } = await refusal(dataUrl(bytes));
      expect(status, message).toBe(400);
      expect(body.code).toBe("VALIDATION_ERROR");
      expect(body.message).toContain("The image at imageUrl is not a readable PNG");
      expect(body.message).toContain(message);
    }
  });

  it("a truncated JPEG, or one without a start-of-frame, answers 400 saying which check failed", async () => {
    const jpeg = solidJpeg(64, 48, [40, 80, 120]);
    const truncated = await refusal(dataUrl(jpeg.slice(0, jpeg.length - 40), "image/jpeg"));
    expect(truncated.status).toBe(400);
    expect(truncated.body.message).toBe("The image at imageUrl is not a readable JPEG: the file ends inside its image data, without an end-of-image marker (EOI)");
    expect(truncated.body.details).toMatchObject({ field: "imageUrl", type: "image/jpeg" });
    const sof = jpeg.findIndex((byte, i) => byte === 0xff && jpeg[i + 1] === 0xc0);
    const noFrame = new Uint8Array([...jpeg.subarray(0, sof), ...jpeg.subarray(sof + 2 + ((jpeg[sof + 2]! << 8) | jpeg[sof + 3]!))]);
    const missing = await refusal(dataUrl(noFrame, "image/jpeg"));
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain("start-of-frame (SOF)");
  });

  it("a header claiming more pixels than the cap answers 400 before anything is decoded", async () => {
    const { status, body } = await refusal(dataUrl(withPngSize(solidPng(4, 4, [0, 0, 0]), 30_001, 2)));
    expect(status).toBe(400);
    expect(body.message).toBe("The image at imageUrl is a PNG of 30001 x 2 pixels; images may have at most 30000 pixels a side and 100000000 in all");
  });

  it("a fetched image is checked as a data: URL is", async () => {
    const good = solidPng(64, 48, [1, 2, 3]);
    const broken = good.slice();
    broken[broken.length - 20] = broken[broken.length - 20]! ^ 0xff; // inside the image data: its CRC no longer matches
    const host = await startHttpServer((req, _body, res) => {
      res.writeHead(200, { "Content-Type": "image/png" }).end(req.url === "/good.png" ? good : broken);
    });
    try {
      const app = worker({ PDF_IMAGE_HOSTS: new URL(host.url).host });
      expect((await post(app, fullRequest({}, { imageUrl: `${host.url}/good.png` }))).status).toBe(200);
      const { status, body } = await refusal(`${host.url}/broken.png`, app);
      expect(status).toBe(400);
      expect(body.message).toMatch(/^The image at imageUrl is not a readable PNG: chunk IDAT at byte \d+ has a wrong CRC$/);
    } finally {
      await host.close();
    }
  });

  it("real PNG and JPEG images still render", async () => {
    for (const imageUrl of [dataUrl(solidPng(64, 48, [1, 2, 3])), dataUrl(solidJpeg(64, 48, [1, 2, 3]), "image/jpeg")]) {
      const response = await post(worker(), fullRequest({}, { imageUrl }));
      expect(response.status).toBe(200);
      expect(pdfInfo(new Uint8Array(await response.arrayBuffer()))["Pages"]).toBe("1");
    }
  });
});

describe("PDF worker options from the configuration", () => {
  it("allows PDF_IMAGE_HOSTS, or else the PUBLIC_URL host and the image delivery host", () => {
    expect(pdfWorkerOptions(testConfig()).imageHosts).toEqual(["imagedelivery.net"]);
    expect(pdfWorkerOptions(testConfig({ PUBLIC_URL: "https://lab.example:8443/base" })).imageHosts).toEqual(["lab.example:8443", "imagedelivery.net"]);
    expect(pdfWorkerOptions(testConfig({ PDF_IMAGE_HOSTS: "a.example, b.example:8080", PUBLIC_URL: "https://lab.example" })).imageHosts).toEqual([
      "a.example",
      "b.example:8080",
    ]);
    expect(pdfWorkerOptions(testConfig({ MAX_IMAGE_BYTES: "1234" })).maxImageBytes).toBe(1234);
  });
});
