import { describe, expect, expectTypeOf, it } from "vitest";
import {
  AnnotationDataSchema,
  BoxAnnotationSchema,
  ClassTypeSchema,
  ColorSchema,
  ConfirmationIdSchema,
  ConfirmationSchema as AnnotationConfirmationSchema,
  CSS_NAMED_COLORS,
  HexColorSchema,
  IndexTypeSchema,
  PercentSchema,
  SupportLevelSchema,
} from "../src/core/schemas/annotation.ts";
import { CaseDataSchema, FileDataSchema, ImportedCaseNumberSchema } from "../src/core/schemas/case.ts";
import {
  AllCasesExportDataSchema,
  CaseActionTypeSchema,
  CaseExportDataSchema,
  CaseExportMetadataSchema,
  CaseImportPreviewSchema,
  CasesToDeleteSchema,
  ConfirmationExportSchema,
  ConfirmationImportResultSchema,
  ConfirmationSchema,
  ExportFormatSchema,
  ExportOptionsSchema,
  ForensicManifestSchema,
  ImportOptionsSchema,
  ImportResultSchema,
} from "../src/core/schemas/exchange.ts";
import {
  FileUploadResponseSchema,
  ImageDeleteResponseSchema,
  ImageMetadataSchema,
  ImageUploadResponseSchema,
} from "../src/core/schemas/image.ts";
import { type PdfAnnotationData, PdfBoxSchema, PdfLayerSchema, PdfRequestSchema } from "../src/core/schemas/pdf.ts";
import {
  CasesAddBodySchema,
  CasesDeleteBodySchema,
  type UserData,
  UserDataSchema,
  UserDeleteFailureSchema,
  UserDeleteResponseSchema,
  UserLimitsSchema,
  UserPutBodySchema,
} from "../src/core/schemas/user.ts";

const ts = "2024-05-01T12:00:00.000Z";
const hash = "a".repeat(64);

const box = { id: "b1", x: 10, y: 20.5, width: 30, height: 40, color: "#FF0000", label: "L", timestamp: ts };
const confirmation = {
  fullName: "Ann Reviewer",
  badgeId: "42",
  timestamp: "05/01/2024",
  confirmationId: "CONF-AB12CD34EF",
  confirmedBy: "uid-2",
  confirmedByEmail: "ann@example.org",
  confirmedByCompany: "Lab",
  confirmedAt: ts,
};
const annotations = {
  leftCase: "C1",
  rightCase: "C2",
  leftItem: "1",
  rightItem: "2",
  classType: "Cartridge Case",
  indexType: "color",
  indexColor: "#00ff00",
  supportLevel: "Inconclusive",
  hasSubclass: false,
  includeConfirmation: true,
  confirmationData: confirmation,
  boxAnnotations: [box],
  updatedAt: ts,
};
const user = {
  uid: "uid-1",
  email: null,
  firstName: "Ada",
  lastName: "L",
  company: "Lab",
  permitted: true,
  cases: [{ caseNumber: "C1", createdAt: ts }],
  readOnlyCases: [
    { caseNumber: "R1", importedAt: ts, originalExportDate: ts, originalExportedBy: "x@y.z", isReadOnly: true },
  ],
  createdAt: ts,
};
const caseExport = {
  metadata: {
    caseNumber: "C-1",
    caseCreatedDate: ts,
    exportDate: ts,
    exportedBy: "ada@example.org",
    exportedByUid: "uid-1",
    exportedByName: "Ada L",
    exportedByCompany: "Lab",
    exportSchemaVersion: "1.0",
    totalFiles: 1,
  },
  files: [{ fileData: { id: "f1", originalFilename: "a.png", uploadedAt: ts }, annotations, hasAnnotations: true }],
  summary: { filesWithAnnotations: 1, filesWithoutAnnotations: 0, totalBoxAnnotations: 1, lastModified: ts },
};

describe("user schemas (spec 2.1, 2.2, 4.1)", () => {
  it("parses a user record and keeps unknown fields, also in nested entries", () => {
    const parsed = UserDataSchema.parse({
      ...user,
      badgeId: "7",
      cases: [{ caseNumber: "C1", createdAt: ts, archived: true }],
    });
    expect(parsed).toMatchObject({ badgeId: "7", cases: [{ archived: true }] });
    expectTypeOf(parsed).toExtend<UserData>();
  });

  it("requires the fields of spec 2.1 and isReadOnly true on read-only cases", () => {
    const { cases: _cases, ...noCases } = user;
    expect(UserDataSchema.safeParse(noCases).success).toBe(false);
    expect(UserDataSchema.safeParse({ ...user, email: 3 }).success).toBe(false);
    const notReadOnly = [{ ...user.readOnlyCases[0], isReadOnly: false }];
    expect(UserDataSchema.safeParse({ ...user, readOnlyCases: notReadOnly }).success).toBe(false);
  });

  it("accepts only positive integer limits", () => {
    expect(UserLimitsSchema.safeParse({ maxCases: 10, maxFilesPerCase: 5 }).success).toBe(true);
    expect(UserLimitsSchema.safeParse({ maxCases: 0, maxFilesPerCase: 5 }).success).toBe(false);
    expect(UserLimitsSchema.safeParse({ maxCases: 1.5, maxFilesPerCase: 5 }).success).toBe(false);
  });

  it("PUT body: all optional, trims names, checks email, strips unknown fields (read-only case entries are kept as the client writes them)", () => {
    expect(UserPutBodySchema.parse({})).toEqual({});
    const parsed = UserPutBodySchema.parse({
      email: " ada@example.org ",
      firstName: "  Ada ",
      permitted: false,
      uid: "someone-else",
      readOnlyCases: [{ ...user.readOnlyCases[0], extra: 1 }],
    });
    expect(parsed).toEqual({
      email: "ada@example.org",
      firstName: "Ada",
      permitted: false,
      readOnlyCases: [{ ...user.readOnlyCases[0], extra: 1 }],
    });
    expect(UserPutBodySchema.parse({ email: null }).email).toBeNull();
    expect(UserPutBodySchema.safeParse({ email: "not-an-email" }).success).toBe(false);
    expect(UserPutBodySchema.safeParse({ company: "x".repeat(201) }).success).toBe(false);
    expect(UserPutBodySchema.safeParse({ company: ` ${"x".repeat(200)} ` }).success).toBe(true);
    expect(UserPutBodySchema.safeParse({ permitted: "yes" }).success).toBe(false);
  });

  it("case bodies: 1..200 characters, at most 10000 entries; the client's createdAt and fields are kept", () => {
    expect(CasesAddBodySchema.parse({ cases: [{ caseNumber: "any string / ok", createdAt: ts }] })).toEqual({
      cases: [{ caseNumber: "any string / ok", createdAt: ts }],
    });
    expect(CasesAddBodySchema.safeParse({ cases: [{ caseNumber: "" }] }).success).toBe(false);
    expect(CasesAddBodySchema.safeParse({ cases: [{ caseNumber: "x".repeat(201) }] }).success).toBe(false);
    const many = Array.from({ length: 10_001 }, (_, i) => ({ caseNumber: `C${i}` }));
    expect(CasesAddBodySchema.safeParse({ cases: many }).success).toBe(false);
    expect(CasesDeleteBodySchema.safeParse({ casesToDelete: ["C1"] }).success).toBe(true);
    expect(CasesDeleteBodySchema.safeParse({ casesToDelete: "C1" }).success).toBe(false);
  });

  it("delete answers carry success true or false", () => {
    expect(UserDeleteResponseSchema.safeParse({ success: true, message: "ok" }).success).toBe(true);
    expect(UserDeleteResponseSchema.safeParse({ success: false, message: "no" }).success).toBe(false);
    expect(UserDeleteFailureSchema.safeParse({ success: false, message: "no" }).success).toBe(true);
    expect(UserDeleteFailureSchema.safeParse({ success: true, message: "ok" }).success).toBe(false);
  });
});

describe("case schemas (spec 2.3, EXCHANGE.md)", () => {
  it("parses a read-only imported case and keeps unknown fields", () => {
    const parsed = CaseDataSchema.parse({
      caseNumber: "C1",
      files: [{ id: "f1", originalFilename: "a.png", uploadedAt: ts, size: 3 }],
      createdAt: ts,
      isReadOnly: true,
      importedAt: ts,
      originalImageIds: { old: "new" },
      confirmations: { old: [confirmation] },
      archived: false,
    });
    expect(parsed).toMatchObject({ archived: false, files: [{ size: 3 }] });
    expect(CaseDataSchema.safeParse({ caseNumber: "C1", files: [{ id: "f1" }], createdAt: ts }).success).toBe(false);
    expect(CaseDataSchema.safeParse({ caseNumber: "C1", files: [], createdAt: ts, isReadOnly: "yes" }).success).toBe(
      false,
    );
    expect(FileDataSchema.safeParse({ id: "f1", originalFilename: "a", uploadedAt: 1 }).success).toBe(false);
  });

  it("imported case numbers: 1..25 of A-Z a-z 0-9 -", () => {
    expect(ImportedCaseNumberSchema.safeParse("Case-2024-01").success).toBe(true);
    expect(ImportedCaseNumberSchema.safeParse("x".repeat(25)).success).toBe(true);
    for (const bad of ["", "x".repeat(26), "a b", "../etc", "case_1", "é"]) {
      expect(ImportedCaseNumberSchema.safeParse(bad).success, bad).toBe(false);
    }
  });
});

describe("annotation schemas (spec 2.4)", () => {
  it("enums reject values outside the spec", () => {
    expect(ClassTypeSchema.options).toEqual(["Bullet", "Cartridge Case", "Other"]);
    expect(ClassTypeSchema.safeParse("bullet").success).toBe(false);
    expect(IndexTypeSchema.safeParse("letter").success).toBe(false);
    expect(SupportLevelSchema.safeParse("Identification").success).toBe(false);
    expect(SupportLevelSchema.safeParse("ID").success).toBe(true);
  });

  it("hex colours: #rgb or #rrggbb, any case", () => {
    for (const ok of ["#fff", "#FFF", "#a1B2c3"]) expect(HexColorSchema.safeParse(ok).success, ok).toBe(true);
    for (const bad of ["fff", "#ffff", "#fffffff", "#ggg", "red", "#12345", " #fff"]) {
      expect(HexColorSchema.safeParse(bad).success, bad).toBe(false);
    }
  });

  it("colours of the report: hex or a CSS name", () => {
    expect(Object.keys(CSS_NAMED_COLORS)).toHaveLength(148);
    for (const ok of ["#FFDE21", "red", "RebeccaPurple"]) expect(ColorSchema.safeParse(ok).success, ok).toBe(true);
    for (const bad of ["reddish", "transparent", "rgb(0,0,0)", "", "#12"]) {
      expect(ColorSchema.safeParse(bad).success, bad).toBe(false);
    }
  });

  it("percentages: finite, 0 to 100 inclusive", () => {
    for (const ok of [0, 50.25, 100]) expect(PercentSchema.safeParse(ok).success, String(ok)).toBe(true);
    for (const bad of [-0.1, 100.0001, 101, Number.NaN, Number.POSITIVE_INFINITY, "50"]) {
      expect(PercentSchema.safeParse(bad).success, String(bad)).toBe(false);
    }
  });

  it("boxes: percent fields, a colour (hex, or a CSS name as the report draws it), timestamp; unknown fields kept", () => {
    expect(BoxAnnotationSchema.parse({ ...box, z: 1 })).toEqual({ ...box, z: 1 });
    expect(BoxAnnotationSchema.safeParse({ ...box, width: 101 }).success).toBe(false);
    expect(BoxAnnotationSchema.safeParse({ ...box, color: "Red" }).success).toBe(true);
    for (const color of ["reddish", "#12", "", "rgb(1,2,3)"]) expect(BoxAnnotationSchema.safeParse({ ...box, color }).success, color).toBe(false);
    const { timestamp: _t, ...noTimestamp } = box;
    expect(BoxAnnotationSchema.safeParse(noTimestamp).success).toBe(false);
  });

  it("annotation data: valid sample parses, unknown fields kept, required fields enforced", () => {
    const parsed = AnnotationDataSchema.parse({ ...annotations, leftMagnification: "10x" });
    expect(parsed).toMatchObject({ leftMagnification: "10x", confirmationData: confirmation });
    expect(AnnotationDataSchema.safeParse({ ...annotations, classType: "Shotgun" }).success).toBe(false);
    const { includeConfirmation: _i, ...noConfirmationFlag } = annotations;
    expect(AnnotationDataSchema.safeParse(noConfirmationFlag).success).toBe(false);
    const { updatedAt: _u, ...noUpdatedAt } = annotations;
    expect(AnnotationDataSchema.safeParse(noUpdatedAt).success).toBe(false);
    expect(AnnotationDataSchema.safeParse({ ...annotations, boxAnnotations: [{ ...box, x: -1 }] }).success).toBe(false);
  });

  it("confirmations: any id is loaded, new ids follow CONF- and 10 characters", () => {
    expect(AnnotationConfirmationSchema.parse({ ...confirmation, confirmationId: "legacy" }).confirmationId).toBe(
      "legacy",
    );
    expect(ConfirmationIdSchema.safeParse("CONF-AB12CD34EF").success).toBe(true);
    for (const bad of ["CONF-ab12cd34ef", "CONF-AB12CD34E", "XONF-AB12CD34EF"]) {
      expect(ConfirmationIdSchema.safeParse(bad).success, bad).toBe(false);
    }
  });
});

describe("image schemas (spec 2.6, 4.2)", () => {
  const upload = {
    success: true,
    result: { id: "img1", filename: "a.png", uploaded: ts, requireSignedURLs: true, variants: ["https://x/img1/public"] },
    errors: [],
    messages: [],
  };

  it("upload answers parse; FileUploadResponse is the same schema", () => {
    expect(FileUploadResponseSchema).toBe(ImageUploadResponseSchema);
    expect(ImageUploadResponseSchema.safeParse(upload).success).toBe(true);
    expect(ImageUploadResponseSchema.safeParse({ ...upload, errors: [{ code: "x", message: "m" }] }).success).toBe(
      false,
    );
    const { requireSignedURLs: _r, ...noFlag } = upload.result;
    expect(ImageUploadResponseSchema.safeParse({ ...upload, result: noFlag }).success).toBe(false);
  });

  it("delete answer has an empty result", () => {
    const ok = { success: true, result: {}, errors: [{ code: 5404, message: "not found" }], messages: [] };
    expect(ImageDeleteResponseSchema.safeParse(ok).success).toBe(true);
    expect(ImageDeleteResponseSchema.safeParse({ ...ok, result: null }).success).toBe(false);
  });

  it("self-hosted image metadata: size >= 0 integer, ISO upload time", () => {
    const meta = { id: "img1", contentType: "image/png", size: 0, filename: "a.png", uploaded: ts, owner: "uid-1" };
    expect(ImageMetadataSchema.safeParse(meta).success).toBe(true);
    expect(ImageMetadataSchema.safeParse({ ...meta, size: -1 }).success).toBe(false);
    expect(ImageMetadataSchema.safeParse({ ...meta, size: 1.5 }).success).toBe(false);
    expect(ImageMetadataSchema.safeParse({ ...meta, uploaded: "yesterday" }).success).toBe(false);
  });
});

describe("PDF request (spec 4.3, REPORT.md)", () => {
  const request = {
    imageUrl: "https://images.example.org/x.png",
    caseNumber: "C1",
    annotationData: { ...annotations, caseFontColor: "yellow" },
    activeAnnotations: ["number", "box", "print", "visibility"],
    currentDate: "05/01/2024",
    notesUpdatedFormatted: "05/01/2024",
    userCompany: "Lab",
    filename: "a.png",
    firstName: "Ada",
    unknownField: 1,
  };

  it("parses a request from the field, strips unknown fields and box extras, keeps unknown layer ids", () => {
    const parsed = PdfRequestSchema.parse(request);
    expect(parsed).not.toHaveProperty("unknownField");
    expect(parsed.activeAnnotations).toEqual(["number", "box", "print", "visibility"]);
    expect(parsed.annotationData).not.toHaveProperty("updatedAt");
    expect(parsed.annotationData).not.toHaveProperty("confirmationData");
    expect(parsed.annotationData?.boxAnnotations).toEqual([
      { id: "b1", x: 10, y: 20.5, width: 30, height: 40, color: "#FF0000" },
    ]);
    expectTypeOf(parsed.annotationData).toEqualTypeOf<PdfAnnotationData | null>();
  });

  it("accepts a minimal request: data URL, null annotations, no dates", () => {
    const parsed = PdfRequestSchema.parse({
      imageUrl: "data:image/png;base64,iVBORw0KGgo=",
      caseNumber: "C1",
      annotationData: null,
      activeAnnotations: [],
    });
    expect(parsed.annotationData).toBeNull();
    expect(PdfRequestSchema.safeParse({ ...request, annotationData: {} }).success).toBe(true);
  });

  it("rejects bad boxes, colours, enums, URLs and oversized fields", () => {
    const withBox = (b: object) => ({ ...request, annotationData: { boxAnnotations: [b] } });
    expect(PdfRequestSchema.safeParse(withBox({ ...box, x: 101 })).success).toBe(false);
    expect(PdfRequestSchema.safeParse(withBox({ ...box, y: Number.NaN })).success).toBe(false);
    const { height: _h, ...noHeight } = box;
    expect(PdfRequestSchema.safeParse(withBox(noHeight)).success).toBe(false);
    expect(PdfRequestSchema.safeParse(withBox({ ...box, color: "#12" })).success).toBe(false);
    expect(PdfBoxSchema.safeParse({ id: "b", x: 0, y: 0, width: 100, height: 100, color: "#abc" }).success).toBe(true);

    const withData = (d: object) => ({ ...request, annotationData: d });
    expect(PdfRequestSchema.safeParse(withData({ caseFontColor: "not-a-colour" })).success).toBe(false);
    expect(PdfRequestSchema.safeParse(withData({ indexColor: "#00FF00" })).success).toBe(true);
    expect(PdfRequestSchema.safeParse(withData({ classType: "Shotgun" })).success).toBe(false);
    expect(PdfRequestSchema.safeParse(withData({ supportLevel: "id" })).success).toBe(false);
    expect(PdfRequestSchema.safeParse(withData({ additionalNotes: "n".repeat(20_000) })).success).toBe(true);
    expect(PdfRequestSchema.safeParse(withData({ additionalNotes: "n".repeat(20_001) })).success).toBe(false);

    expect(PdfRequestSchema.safeParse({ ...request, imageUrl: "file:///etc/passwd" }).success).toBe(false);
    expect(PdfRequestSchema.safeParse({ ...request, imageUrl: "javascript:alert(1)" }).success).toBe(false);
    expect(PdfRequestSchema.safeParse({ ...request, caseNumber: "x".repeat(201) }).success).toBe(false);
    expect(PdfRequestSchema.safeParse({ ...request, activeAnnotations: "box" }).success).toBe(false);
    const { imageUrl: _u, ...noUrl } = request;
    expect(PdfRequestSchema.safeParse(noUrl).success).toBe(false);
  });

  it("accepts a data URL up to 30 MiB and no more", () => {
    const prefix = "data:image/png;base64,";
    const max = 30 * 1024 * 1024;
    expect(PdfRequestSchema.safeParse({ ...request, imageUrl: prefix + "A".repeat(max - prefix.length) }).success).toBe(
      true,
    );
    expect(
      PdfRequestSchema.safeParse({ ...request, imageUrl: prefix + "A".repeat(max - prefix.length + 1) }).success,
    ).toBe(false);
  });

  it("layer ids are those of REPORT.md", () => {
    expect(PdfLayerSchema.options).toEqual(["number", "class", "index", "id", "box", "notes"]);
    expect(PdfLayerSchema.safeParse("print").success).toBe(false);
  });
});

describe("exchange schemas (spec 2.7, EXCHANGE.md)", () => {
  it("parses a single-case export and keeps unknown fields at every level", () => {
    const parsed = CaseExportDataSchema.parse({
      ...caseExport,
      extraTop: 1,
      metadata: { ...caseExport.metadata, exportedByBadgeId: "7" },
      files: [{ ...caseExport.files[0], extraFile: true }],
    });
    expect(parsed).toMatchObject({ extraTop: 1, metadata: { exportedByBadgeId: "7" }, files: [{ extraFile: true }] });
  });

  it("accepts striaeExportSchemaVersion in place of exportSchemaVersion, requires one of them", () => {
    const { exportSchemaVersion: _v, ...noVersion } = caseExport.metadata;
    const striae = CaseExportMetadataSchema.parse({ ...noVersion, striaeExportSchemaVersion: "2.0" });
    expect(striae.striaeExportSchemaVersion).toBe("2.0");
    const missing = CaseExportMetadataSchema.safeParse(noVersion);
    expect(missing.success).toBe(false);
    expect(missing.error?.issues[0]?.path).toEqual(["exportSchemaVersion"]);
    expect(CaseExportDataSchema.safeParse({ ...caseExport, metadata: noVersion }).success).toBe(false);
  });

  it("checks counts, exportedBy and nested annotations", () => {
    const meta = caseExport.metadata;
    expect(CaseExportMetadataSchema.safeParse({ ...meta, exportedBy: null }).success).toBe(true);
    expect(CaseExportMetadataSchema.safeParse({ ...meta, totalFiles: -1 }).success).toBe(false);
    expect(CaseExportMetadataSchema.safeParse({ ...meta, totalFiles: "1" }).success).toBe(false);
    const badFile = { ...caseExport.files[0], annotations: { ...annotations, supportLevel: "Maybe" } };
    expect(CaseExportDataSchema.safeParse({ ...caseExport, files: [badFile] }).success).toBe(false);
  });

  it("parses a bulk export with a failed case and the striae version alias", () => {
    const { exportSchemaVersion: _v, caseNumber: _c, totalFiles: _f, caseCreatedDate: _d, ...exporter } =
      caseExport.metadata;
    const failed = {
      metadata: caseExport.metadata,
      files: [],
      summary: { filesWithAnnotations: 0, filesWithoutAnnotations: 0, totalBoxAnnotations: 0, exportError: "boom" },
    };
    const bulk = {
      metadata: {
        ...exporter,
        striaeExportSchemaVersion: "1.0",
        totalCases: 2,
        totalFiles: 1,
        totalAnnotations: 1,
        totalConfirmations: 0,
        totalConfirmationsRequested: 1,
      },
      cases: [caseExport, failed],
      summary: { casesWithFiles: 1, casesWithAnnotations: 1, casesWithoutFiles: 1 },
    };
    expect(AllCasesExportDataSchema.safeParse(bulk).success).toBe(true);
    const { striaeExportSchemaVersion: _s, ...noVersion } = bulk.metadata;
    expect(AllCasesExportDataSchema.safeParse({ ...bulk, metadata: noVersion }).success).toBe(false);
  });

  it("formats, options, results and previews", () => {
    expect(ExportFormatSchema.safeParse("json").success).toBe(true);
    expect(ExportFormatSchema.safeParse("xml").success).toBe(false);
    expect(ExportOptionsSchema.parse({ includeMetadata: false, other: 1 })).toEqual({ includeMetadata: false });
    expect(ImportOptionsSchema.safeParse({ overwriteExisting: "true" }).success).toBe(false);
    const result = { success: true, caseNumber: "C1", isReadOnly: true, filesImported: 2, annotationsImported: 1 };
    expect(ImportResultSchema.safeParse({ ...result, signatureValid: "unsigned" }).success).toBe(true);
    expect(ImportResultSchema.safeParse({ ...result, signatureValid: "maybe" }).success).toBe(false);
    expect(ImportResultSchema.safeParse({ ...result, errors: [1] }).success).toBe(false);
    const confirmationResult = { success: false, caseNumber: "C1", confirmationsImported: 0, imagesUpdated: 0 };
    expect(ConfirmationImportResultSchema.safeParse({ ...confirmationResult, warnings: ["w"] }).success).toBe(true);
    const preview = {
      caseNumber: "C1",
      fileCount: 1,
      annotationCount: 1,
      exportDate: ts,
      exportedBy: null,
      hasImages: true,
      canImport: false,
      warnings: [],
    };
    expect(CaseImportPreviewSchema.safeParse(preview).success).toBe(true);
    expect(CaseImportPreviewSchema.safeParse({ ...preview, warnings: undefined }).success).toBe(false);
  });

  it("cases to delete and case actions", () => {
    expect(CasesToDeleteSchema).toBe(CasesDeleteBodySchema);
    for (const ok of ["loaded", "created", "deleted", null]) expect(CaseActionTypeSchema.safeParse(ok).success).toBe(true);
    expect(CaseActionTypeSchema.safeParse("renamed").success).toBe(false);
    expect(CaseActionTypeSchema.safeParse(undefined).success).toBe(false);
  });

  it("manifest: SHA-256 hex hashes, optional signature, unknown fields kept", () => {
    const manifest = {
      dataHash: hash,
      imageHashes: { "images/a-f1.png": "B".repeat(64) },
      manifestHash: hash,
      totalFiles: 2,
      createdAt: ts,
      version: "4.0",
    };
    expect(ForensicManifestSchema.parse(manifest)).toEqual(manifest);
    const signature = { algorithm: "ES256", keyId: "k1", value: "eyJ..sig" };
    expect(ForensicManifestSchema.safeParse({ ...manifest, signature }).success).toBe(true);
    expect(ForensicManifestSchema.safeParse({ ...manifest, signature: { algorithm: "ES256" } }).success).toBe(false);
    expect(ForensicManifestSchema.safeParse({ ...manifest, dataHash: "abc" }).success).toBe(false);
    expect(ForensicManifestSchema.safeParse({ ...manifest, imageHashes: { a: "z".repeat(64) } }).success).toBe(false);
    expect(ForensicManifestSchema.safeParse({ ...manifest, totalFiles: 0 }).success).toBe(false);
  });

  it("confirmation export: confirmations by original image id, hash required", () => {
    expect(ConfirmationSchema).toBe(AnnotationConfirmationSchema);
    const exported = {
      metadata: {
        caseNumber: "C1",
        exportDate: ts,
        exportedBy: "ann@example.org",
        exportedByUid: "uid-2",
        exportedByName: "Ann Reviewer",
        exportedByCompany: "Lab",
        totalConfirmations: 1,
        version: "1.0",
        originalExportCreatedAt: ts,
        hash: "ABCDEF0123456789".repeat(4),
      },
      confirmations: { "orig-img-1": [confirmation] },
    };
    expect(ConfirmationExportSchema.safeParse(exported).success).toBe(true);
    const { hash: _h, ...noHash } = exported.metadata;
    expect(ConfirmationExportSchema.safeParse({ ...exported, metadata: noHash }).success).toBe(false);
    const { badgeId: _b, ...incomplete } = confirmation;
    expect(ConfirmationExportSchema.safeParse({ ...exported, confirmations: { x: [incomplete] } }).success).toBe(false);
  });
});
