/**
 * @module
 * The PDF report without HTTP: {@link renderReport} lays out one annotated image (header,
 * index, the image with its boxes, case and item labels, support level, class and subclass,
 * confirmation form, notes, footer) on US Letter pages and returns the PDF's bytes. The
 * layout is described in `docs/`. The image comes from a `data:` URL or an `http(s)` URL on
 * one of `imageHosts`; text is set in DejaVu Sans, embedded in the code.
 *
 * @example
 * ```ts
 * import { renderReport } from "@forensic-annotation/service/pdf";
 *
 * const pdf = await renderReport(
 *   {
 *     imageUrl: "https://imagedelivery.net/HASH/IMAGE-ID/public",
 *     caseNumber: "CASE-1",
 *     annotationData: { leftCase: "CASE-1", rightCase: "CASE-1", leftItem: "1", rightItem: "2", supportLevel: "ID" },
 *     activeAnnotations: ["id", "class", "notes"],
 *   },
 *   { imageHosts: ["imagedelivery.net"], timeoutMs: 10_000, maxImageBytes: 25 * 1024 * 1024, serviceName: "My lab" },
 * );
 * ```
 */
export { renderReport, type ReportOptions, type SignedConfirmation } from "./report.ts";
export type { ReportAnnotations, ReportBox, ReportInput, ReportRequest } from "./report-request.ts";
