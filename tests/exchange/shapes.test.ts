import { describe, expectTypeOf, it } from "vitest";
import type * as Schemas from "../../src/core/schemas/exchange.ts";
import type { AnnotationData as StoredAnnotations } from "../../src/core/schemas/annotation.ts";
import type * as Shapes from "../../src/core/exchange/mod.ts";

// The public interfaces are written out by hand (JSR "slow types"); these checks keep them
// and the zod schemas that validate the same shapes from drifting apart.
describe("the exchange interfaces match the zod schemas", () => {
  it("a value the schemas accept fits the interfaces, and what we write fits the schemas", () => {
    expectTypeOf<Schemas.CaseExportData>().toExtend<Shapes.CaseExportData>();
    expectTypeOf<Shapes.CaseExportData>().toExtend<Schemas.CaseExportData>();
    expectTypeOf<Schemas.AllCasesExportData>().toExtend<Shapes.AllCasesExportData>();
    expectTypeOf<Shapes.AllCasesExportData>().toExtend<Schemas.AllCasesExportData>();
    expectTypeOf<StoredAnnotations>().toExtend<Shapes.AnnotationData>();
    expectTypeOf<Shapes.AnnotationData>().toExtend<StoredAnnotations>();
    expectTypeOf<Schemas.ForensicManifest>().toExtend<Shapes.ForensicManifest>();
    expectTypeOf<Shapes.ForensicManifest>().toExtend<Schemas.ForensicManifest>();
    expectTypeOf<Schemas.ConfirmationExport>().toExtend<Shapes.ConfirmationExport>();
    expectTypeOf<Shapes.ConfirmationExport>().toExtend<Schemas.ConfirmationExport>();
    expectTypeOf<Shapes.ImportResult>().toEqualTypeOf<Shapes.ImportResult>();
    expectTypeOf<Schemas.ImportResult>().toExtend<Shapes.ImportResult>();
    expectTypeOf<Shapes.ImportResult>().toExtend<Schemas.ImportResult>();
    expectTypeOf<Shapes.CaseImportPreview>().toExtend<Schemas.CaseImportPreview>();
    expectTypeOf<Shapes.ConfirmationImportResult>().toExtend<Schemas.ConfirmationImportResult>();
    expectTypeOf<Shapes.ImportOptions>().toExtend<Schemas.ImportOptions>();
    expectTypeOf<Shapes.ExportOptions>().toExtend<Schemas.ExportOptions>();
  });
});
