/**
 * One model of boxes and annotations: the types exchange and PDF users see are the ones
 * inferred from the zod schemas of src/core/schemas/annotation.ts (the PDF's through the PDF
 * schemas derived from them). The type checks run under `tsc` (npm run check); the last test
 * also parses one document both ways at run time.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import type * as z from "zod";
import {
  type AnnotationData,
  AnnotationDataSchema,
  type BoxAnnotation,
  BoxAnnotationSchema,
  type ClassType,
  ClassTypeSchema,
  type Confirmation,
  ConfirmationSchema,
  type IndexType,
  type SupportLevel,
} from "../src/core/schemas/annotation.ts";
import { PdfAnnotationDataSchema, PdfBoxSchema, PdfRequestSchema } from "../src/core/schemas/pdf.ts";
import type { CaseExportFileSchema } from "../src/core/schemas/exchange.ts";
import type * as Exchange from "../src/core/exchange/mod.ts";
import type * as Shapes from "../src/core/exchange/shapes.ts";
import type { ReportAnnotations, ReportBox, ReportInput, ReportRequest } from "../src/core/pdf/report-request.ts";
import { parseReportRequest } from "../src/core/pdf/report-request.ts";

/** The fields of a schema's shape (the index signature of a loose object left out). */
type Fields<S extends { shape: object }> = keyof S["shape"];

describe("one model of boxes and annotations", () => {
  it("exchange's types are the schemas' inferred types", () => {
    expectTypeOf<Exchange.BoxAnnotation>().toEqualTypeOf<z.output<typeof BoxAnnotationSchema>>();
    expectTypeOf<Exchange.AnnotationData>().toEqualTypeOf<z.output<typeof AnnotationDataSchema>>();
    expectTypeOf<Exchange.Confirmation>().toEqualTypeOf<z.output<typeof ConfirmationSchema>>();
    expectTypeOf<Exchange.ClassType>().toEqualTypeOf<z.output<typeof ClassTypeSchema>>();
    expectTypeOf<Shapes.BoxAnnotation>().toEqualTypeOf<BoxAnnotation>();
    expectTypeOf<Shapes.AnnotationData>().toEqualTypeOf<AnnotationData>();
    expectTypeOf<Shapes.IndexType>().toEqualTypeOf<IndexType>();
    expectTypeOf<Shapes.SupportLevel>().toEqualTypeOf<SupportLevel>();
    // An exported file's annotations, in the interface and in the schema, are the model.
    expectTypeOf<NonNullable<Exchange.CaseExportFile["annotations"]>>().toEqualTypeOf<AnnotationData>();
    expectTypeOf<NonNullable<z.output<typeof CaseExportFileSchema>["annotations"]>>().toEqualTypeOf<AnnotationData>();
    expectTypeOf<NonNullable<AnnotationData["confirmationData"]>>().toEqualTypeOf<Confirmation>();
  });

  it("the PDF's types are the PDF schemas' inferred types, and those are the model's fields", () => {
    expectTypeOf<ReportBox>().toEqualTypeOf<z.output<typeof PdfBoxSchema>>();
    expectTypeOf<ReportAnnotations>().toEqualTypeOf<z.output<typeof PdfAnnotationDataSchema>>();
    expectTypeOf<ReportRequest>().toEqualTypeOf<z.output<typeof PdfRequestSchema>>();
    expectTypeOf<ReportInput>().toEqualTypeOf<ReportRequest>();
    expectTypeOf<NonNullable<ReportRequest["annotationData"]>>().toEqualTypeOf<ReportAnnotations>();
    expectTypeOf<NonNullable<ReportAnnotations["boxAnnotations"]>[number]>().toEqualTypeOf<ReportBox>();
    // Every field a report reads is a field of the model, of the same type where the report adds no rule of its own.
    expectTypeOf<Fields<typeof PdfBoxSchema>>().toExtend<Fields<typeof BoxAnnotationSchema>>();
    expectTypeOf<Fields<typeof PdfAnnotationDataSchema>>().toExtend<Fields<typeof AnnotationDataSchema>>();
    expectTypeOf<Pick<ReportBox, "id" | "x" | "y" | "width" | "height">>().toEqualTypeOf<Pick<BoxAnnotation, "id" | "x" | "y" | "width" | "height">>();
    expectTypeOf<Pick<ReportAnnotations, "classType" | "indexType" | "supportLevel" | "hasSubclass" | "additionalNotes">>()
      .toEqualTypeOf<Partial<Pick<AnnotationData, "classType" | "indexType" | "supportLevel" | "hasSubclass" | "additionalNotes">>>();
    expectTypeOf<NonNullable<ReportAnnotations["classType"]>>().toEqualTypeOf<ClassType>();
  });

  it("a stored annotations document is a report's annotationData: the model's fields print, the rest is dropped", () => {
    const stored = AnnotationDataSchema.parse({
      leftCase: "A",
      rightCase: "B",
      leftItem: "1",
      rightItem: "2",
      classType: "Bullet",
      supportLevel: "ID",
      includeConfirmation: true,
      confirmationData: { fullName: "R", badgeId: "7", timestamp: "t", confirmationId: "CONF-ABCDEFGHIJ", confirmedBy: "r", confirmedByEmail: "r@x", confirmedByCompany: "Lab", confirmedAt: "t" },
      boxAnnotations: [{ id: "b1", x: 1, y: 2, width: 3, height: 4, color: "#ff0000", timestamp: "t", label: "kept by the model" }],
      updatedAt: "2026-01-01T00:00:00Z",
      clientField: "kept by the model",
    });
    expect(stored.clientField).toBe("kept by the model");
    const request = parseReportRequest({ imageUrl: "data:image/png;base64,AA==", caseNumber: "C-1", annotationData: stored, activeAnnotations: ["box"] });
    expect(request.annotationData).toEqual({
      leftCase: "A",
      rightCase: "B",
      leftItem: "1",
      rightItem: "2",
      classType: "Bullet",
      supportLevel: "ID",
      includeConfirmation: true,
      boxAnnotations: [{ id: "b1", x: 1, y: 2, width: 3, height: 4, color: "#ff0000" }],
    });
    expect(PdfBoxSchema.parse(BoxAnnotationSchema.parse(stored.boxAnnotations![0]))).toEqual(request.annotationData!.boxAnnotations![0]);
  });
});
