/**
 * @module
 * The report's file name (docs/report.md#colours): built from the case and item numbers, safe for
 * any file system and for a `Content-Disposition` header.
 */
import type { PdfRequest } from "../schemas/pdf.ts";

/** A file name twice: ASCII only (for `filename=`) and with its Unicode kept (for `filename*=`). */
export interface ReportFilename {
  /** Letters, digits, `.`, `_` and `-` only. */
  ascii: string;
  /** The same name with non-ASCII letters kept; no separators, quotes or control characters. */
  unicode: string;
}

const MAX_STEM = 120;

/** One part of the name: what a file system or a header cannot take becomes `_`; runs collapse; no dots or separators at its ends. */
function clean(text: string, keep: RegExp): string {
  return [...text]
    .map((char) => (keep.test(char) ? char : "_"))
    .join("")
    .replace(/([._-])[._-]*/g, "$1")
    .replace(/^[._-]+|[._-]+$/g, "");
}

/** `report-{case}-{left case}-{left item}-{right case}-{right item}.pdf`, empty parts left out. */
export function reportFilename(request: Pick<PdfRequest, "caseNumber" | "annotationData">): ReportFilename {
  const data = request.annotationData;
  const parts = [request.caseNumber, data?.leftCase, data?.leftItem, data?.rightCase, data?.rightItem];
  const name = (keep: RegExp, normalise: (part: string) => string) => {
    const stem = parts.map((part) => clean(normalise(part ?? ""), keep)).filter((part) => part !== "").join("-").slice(0, MAX_STEM);
    return `report${stem === "" ? "" : `-${stem}`}.pdf`;
  };
  return {
    ascii: name(/[A-Za-z0-9._-]/, (part) => part.normalize("NFKD").replace(/\p{M}/gu, "")),
    unicode: name(/[\p{L}\p{N}._-]/u, (part) => part.normalize("NFC")),
  };
}
