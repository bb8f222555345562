import { describe, expect, it } from "vitest";
import { createPdfWorker, pdfWorkerOptions } from "../../../src/core/workers/pdf.ts";
import { fixedClock } from "../../helpers/service.ts";
import { pdfInfo, pdfText } from "./poppler.ts";
import { fullRequest, testConfig } from "./requests.ts";

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
    const app = worker();
    const document = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "pdf", version: "1" } });
    const post = document.paths?.["/"]?.post;
    expect(post?.responses?.["200"]).toHaveProperty("content.application/pdf");
    expect(post?.requestBody).toHaveProperty("content.application/json");
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
