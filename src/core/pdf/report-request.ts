/**
 * @module
 * Validating a report request with the PDF request schema (docs/report.md#request): the 400
 * names the failing field and, for a box, the box's id as well as its position. The request's
 * types are inferred from the schemas, which are derived from the annotation model.
 */
import type * as z from "zod";
import { type PdfAnnotationDataSchema, type PdfBoxSchema, PdfRequestSchema } from "../schemas/pdf.ts";
import { ServiceError } from "../errors.ts";
import { normaliseClientValues } from "./client-values.ts";

/** A box of the report: id, position and size in percent of the image (0–100), and a colour (`#rgb`, `#rrggbb` or a CSS colour name). */
export type ReportBox = Parsed<"box">;

/** The annotation fields a report prints (docs/report.md#request), all optional; the model's, with the report's caps and colours. */
export type ReportAnnotations = Parsed<"annotations">;

/** A report request (docs/report.md#request): image URL, case number, what to print and which layers; unknown fields are stripped. */
export type ReportRequest = Parsed<"request">;

/** A report request as a caller writes it: the same fields as {@link ReportRequest}. */
export type ReportInput = ReportRequest;

/**
 * The PDF schemas by name, behind a private alias: `deno doc --lint` then documents the
 * inferred types without asking for zod's own types to be public.
 * @ignore
 */
interface ReportSchemas {
  box: typeof PdfBoxSchema;
  annotations: typeof PdfAnnotationDataSchema;
  request: typeof PdfRequestSchema;
}

/**
 * The type of a PDF schema, as parsing yields it.
 * @ignore
 */
type Parsed<K extends keyof ReportSchemas> = z.output<ReportSchemas[K]>;

// A parsed request is also a valid input (ReportInput is ReportRequest): tsc fails here if not.
const _inputIsOutput = (value: ReportInput): z.input<typeof PdfRequestSchema> => value;
void _inputIsOutput;

/** The id of the box at `index` of the raw input, when it has a printable one. */
function rawBoxId(value: unknown, index: number): string | undefined {
  const boxes = (value as { annotationData?: { boxAnnotations?: unknown } } | null)?.annotationData?.boxAnnotations;
  const box: unknown = Array.isArray(boxes) ? boxes[index] : undefined;
  const id: unknown = box !== null && typeof box === "object" ? (box as { id?: unknown }).id : undefined;
  return typeof id === "string" && id.length <= 200 ? id : undefined;
}

/** Validates a report request; a failure is a 400 naming the first bad field (and box). */
export function parseReportRequest(value: unknown): ReportRequest {
  const result = PdfRequestSchema.safeParse(normaliseClientValues(value));
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));
  const first = result.error.issues[0];
  const path = first?.path.map(String) ?? [];
  let where = path.length > 0 ? ` at "${path.join(".")}"` : "";
  if (path[0] === "annotationData" && path[1] === "boxAnnotations" && path[2] !== undefined) {
    const index = Number(path[2]);
    const id = rawBoxId(value, index);
    where += id === undefined ? ` (box ${index + 1})` : ` (box "${id}")`;
  }
  throw ServiceError.validation(`Invalid request body${where}: ${first?.message ?? "invalid"}`, { issues });
}
