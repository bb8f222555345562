/**
 * @module
 * The request of the PDF worker (spec 4.3 and REPORT.md "Request"), built from the annotation
 * schemas. Unknown fields are stripped; every text has a length cap.
 */
import * as z from "zod";
import { AnnotationDataSchema, BoxAnnotationSchema, ColorSchema } from "./annotation.ts";

/** The layer ids of REPORT.md "Layers"; a request may list other ids, which are ignored. */
export const PdfLayerSchema = z.enum(["number", "class", "index", "id", "box", "notes"]);
export type PdfLayer = z.infer<typeof PdfLayerSchema>;

/**
 * A box of the PDF request (spec 4.3): id, position and size in percent of the image, and a
 * colour as REPORT.md "Rules" allows (`#rgb`, `#rrggbb` or a CSS colour name).
 */
export const PdfBoxSchema = BoxAnnotationSchema.pick({ id: true, x: true, y: true, width: true, height: true, color: true })
  .strip()
  .extend({ id: z.string().max(200), color: ColorSchema });
export type PdfBox = z.infer<typeof PdfBoxSchema>;

const label = z.string().max(200);
const note = z.string().max(2_000);

/**
 * `annotationData` of the PDF request (spec 4.3): the AnnotationData fields a report prints,
 * all optional (an absent text prints nothing, an absent `includeConfirmation` is false),
 * colours as REPORT.md "Rules" allows them. `confirmationData` and unknown fields are stripped.
 */
export const PdfAnnotationDataSchema = AnnotationDataSchema.pick({
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
  .partial();
export type PdfAnnotationData = z.infer<typeof PdfAnnotationDataSchema>;

/** Largest `imageUrl`: a `data:` URL of a pre-fetched image may be this long. */
export const MAX_IMAGE_URL_CHARS: number = 30 * 1024 * 1024;

/**
 * Body of POST / of the PDF worker (spec 4.3) plus what clients in the field send (REPORT.md
 * "Request"): `userCompany` (footer), `filename` and `firstName` (unused). `annotationData` is
 * null when the image has no annotations; `currentDate` absent prints the server's date.
 */
export const PdfRequestSchema = z.object({
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
});
export type PdfRequest = z.infer<typeof PdfRequestSchema>;
