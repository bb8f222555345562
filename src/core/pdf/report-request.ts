/**
 * @module
 * Validating a report request with the PDF request schema (spec 4.3, REPORT.md "Rules"): the
 * 400 names the failing field and, for a box, the box's id as well as its position.
 */
import type * as z from "zod";
import { PdfRequestSchema, type PdfRequest } from "../schemas/pdf.ts";
import { ServiceError } from "../errors.ts";
import { normaliseClientValues } from "./client-values.ts";

/** A box of the report, in percent of the image (spec 2.4). */
export interface ReportBox {
  /** The box id; named in a 400 when the box is invalid. */
  id: string;
  /** Left edge, 0–100. */
  x: number;
  /** Top edge, 0–100. */
  y: number;
  /** Width, 0–100. */
  width: number;
  /** Height, 0–100. */
  height: number;
  /** `#rgb`, `#rrggbb` or a CSS colour name. */
  color: string;
}

/** The annotation fields a report prints (spec 4.3 `annotationData`); all optional. */
export interface ReportAnnotations {
  /** Left case label. */
  leftCase?: string;
  /** Right case label. */
  rightCase?: string;
  /** Left item label. */
  leftItem?: string;
  /** Right item label. */
  rightItem?: string;
  /** Colour of the case/item labels (default `#FFDE21`). */
  caseFontColor?: string;
  /** The class pill. */
  classType?: "Bullet" | "Cartridge Case" | "Other";
  /** The class name printed when `classType` is "Other". */
  customClass?: string;
  /** Note printed after the class. */
  classNote?: string;
  /** Whether the index is a number or a colour. */
  indexType?: "number" | "color";
  /** The index number. */
  indexNumber?: string;
  /** The index colour. */
  indexColor?: string;
  /** The support-level pill. */
  supportLevel?: "ID" | "Exclusion" | "Inconclusive";
  /** Prints the subclass pill. */
  hasSubclass?: boolean;
  /** Prints the confirmation form. */
  includeConfirmation?: boolean;
  /** Notes, wrapped and continued onto further pages. */
  additionalNotes?: string;
  /** The boxes drawn on the image. */
  boxAnnotations?: ReportBox[];
}

/** A report request (spec 4.3 and REPORT.md "Request"); unknown fields are stripped. */
export interface ReportRequest {
  /** An http(s) URL of an allowed host, or a `data:` URL. */
  imageUrl: string;
  /** The case number in the header. */
  caseNumber: string;
  /** What to print; null when the image has no annotations. */
  annotationData: ReportAnnotations | null;
  /** The layers switched on (REPORT.md "Layers"); unknown ids are ignored. */
  activeAnnotations: string[];
  /** The date in the header; absent prints the server's date. */
  currentDate?: string;
  /** When the notes were last updated, as printed. */
  notesUpdatedFormatted?: string;
  /** The lab in the footer. */
  userCompany?: string | null;
  /** Sent by clients; used for the download name. */
  filename?: string | null;
  /** Sent by clients; unused. */
  firstName?: string | null;
}

/** A report request as a caller writes it: the same fields as {@link ReportRequest}. */
export type ReportInput = ReportRequest;

// The schema and the interfaces must agree both ways; tsc fails here if either drifts.
const _fromSchema = (value: PdfRequest): ReportRequest => value;
const _toSchema = (value: ReportRequest): z.input<typeof PdfRequestSchema> => value;
void _fromSchema;
void _toSchema;

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
