/**
 * @module
 * The request of the PDF worker (docs/report.md#request), derived from the annotation model
 * of `annotation.ts`: the fields a report prints, with length caps and colours as the report
 * accepts them. Unknown fields are stripped. The zod types are written out because the report
 * request's types are public (see `annotation.ts`); tsc checks them against the schemas.
 */
import * as z from "zod";
import {
  AnnotationDataSchema,
  BoxAnnotationSchema,
  type ClassTypeSchema,
  ColorSchema,
  type IndexTypeSchema,
  type PercentSchema,
  type SupportLevelSchema,
} from "./annotation.ts";

/** The layer ids of docs/report.md#layers; a request may list other ids, which are ignored. */
export const PdfLayerSchema = z.enum(["number", "class", "index", "id", "box", "notes"]);
export type PdfLayer = z.infer<typeof PdfLayerSchema>;

/**
 * A box of the PDF request: id, position and size in percent of the image, and a colour as
 * the report allows (`#rgb`, `#rrggbb` or a CSS colour name).
 */
export const PdfBoxSchema: z.ZodObject<{
  id: z.ZodString;
  x: typeof PercentSchema;
  y: typeof PercentSchema;
  width: typeof PercentSchema;
  height: typeof PercentSchema;
  color: typeof ColorSchema;
}, z.core.$strip> = BoxAnnotationSchema.pick({ id: true, x: true, y: true, width: true, height: true, color: true })
  .strip()
  .extend({ id: z.string().max(200), color: ColorSchema })
  .meta({ id: "ReportBox" });
export type PdfBox = z.infer<typeof PdfBoxSchema>;

const label = z.string().max(200);
const note = z.string().max(2_000);

/**
 * `annotationData` of the PDF request: the annotation fields a report prints, all optional
 * (an absent text prints nothing, an absent `includeConfirmation` is false), colours as the
 * report allows them. `confirmationData` and unknown fields are stripped.
 */
export const PdfAnnotationDataSchema: z.ZodObject<{
  leftCase: z.ZodOptional<z.ZodString>;
  rightCase: z.ZodOptional<z.ZodString>;
  leftItem: z.ZodOptional<z.ZodString>;
  rightItem: z.ZodOptional<z.ZodString>;
  caseFontColor: z.ZodOptional<typeof ColorSchema>;
  classType: z.ZodOptional<typeof ClassTypeSchema>;
  customClass: z.ZodOptional<z.ZodString>;
  classNote: z.ZodOptional<z.ZodString>;
  indexType: z.ZodOptional<typeof IndexTypeSchema>;
  indexNumber: z.ZodOptional<z.ZodString>;
  indexColor: z.ZodOptional<typeof ColorSchema>;
  supportLevel: z.ZodOptional<typeof SupportLevelSchema>;
  hasSubclass: z.ZodOptional<z.ZodBoolean>;
  includeConfirmation: z.ZodOptional<z.ZodBoolean>;
  additionalNotes: z.ZodOptional<z.ZodString>;
  boxAnnotations: z.ZodOptional<z.ZodArray<typeof PdfBoxSchema>>;
}, z.core.$strip> = AnnotationDataSchema.pick({
  leftCase: true,
  rightCase: true,
  leftItem: true,
  rightItem: true,
  caseFontColor: true,
  classType: true,
  customClass: true,
  classNote: true,
  indexType: true,
  indexNumber: true,
  indexColor: true,
  supportLevel: true,
  hasSubclass: true,
  includeConfirmation: true,
  additionalNotes: true,
  boxAnnotations: true,
})
  .strip()
  .extend({
    leftCase: label,
    rightCase: label,
    leftItem: label,
    rightItem: label,
    caseFontColor: ColorSchema,
    customClass: label,
    classNote: note,
    indexNumber: label,
    indexColor: ColorSchema,
    additionalNotes: z.string().max(20_000),
    boxAnnotations: z.array(PdfBoxSchema).max(1_000),
  })
  // Every field optional; those optional in the model already are not wrapped twice.
  .partial({
    leftCase: true,
    rightCase: true,
    leftItem: true,
    rightItem: true,
    caseFontColor: true,
    customClass: true,
    classNote: true,
    indexNumber: true,
    indexColor: true,
    includeConfirmation: true,
    additionalNotes: true,
    boxAnnotations: true,
  })
  .meta({ id: "ReportAnnotations" });
export type PdfAnnotationData = z.infer<typeof PdfAnnotationDataSchema>;

/** Largest `imageUrl`: a `data:` URL of a pre-fetched image may be this long. */
export const MAX_IMAGE_URL_CHARS: number = 30 * 1024 * 1024;

/**
 * Body of POST / of the PDF worker plus what clients in the field send (docs/report.md#request):
 * `userCompany` (footer), `filename` and `firstName` (unused). `annotationData` is null when
 * the image has no annotations; `currentDate` absent prints the server's date.
 */
export const PdfRequestSchema: z.ZodObject<{
  imageUrl: z.ZodString;
  caseNumber: z.ZodString;
  annotationData: z.ZodNullable<typeof PdfAnnotationDataSchema>;
  activeAnnotations: z.ZodArray<z.ZodString>;
  currentDate: z.ZodOptional<z.ZodString>;
  notesUpdatedFormatted: z.ZodOptional<z.ZodString>;
  userCompany: z.ZodOptional<z.ZodNullable<z.ZodString>>;
  filename: z.ZodOptional<z.ZodNullable<z.ZodString>>;
  firstName: z.ZodOptional<z.ZodNullable<z.ZodString>>;
}, z.core.$strip> = z.object({
  imageUrl: z
    .string()
    .max(MAX_IMAGE_URL_CHARS)
    .regex(/^(?:https?:\/\/|data:)/i, "imageUrl must be an http(s) or data: URL"),
  caseNumber: z.string().max(200),
  annotationData: PdfAnnotationDataSchema.nullable(),
  activeAnnotations: z.array(z.string().max(100)).max(100),
  currentDate: z.string().max(100).optional(),
  notesUpdatedFormatted: z.string().max(100).optional(),
  userCompany: label.nullish(),
  filename: z.string().max(1_000).nullish(),
  firstName: label.nullish(),
}).meta({ id: "ReportRequest" });
export type PdfRequest = z.infer<typeof PdfRequestSchema>;
