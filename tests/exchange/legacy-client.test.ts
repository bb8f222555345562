/**
 * A package as the original browser client builds it (its documented rules, rebuilt here):
 * `{case}_data.json` with the `/* CASE DATA WARNING ... *\/` block in front of the 2-space
 * JSON, `striaeExportSchemaVersion` and its own metadata fields; images under their original
 * file names; a manifest whose data hash covers the JSON without the warning block and whose
 * image hashes are keyed by the file name under `images/`.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { zipSync } from "fflate";
import { storageKeys } from "../../src/core/storage/keys.ts";
import { importCase, previewCaseImport } from "../../src/core/exchange/mod.ts";
import { stripWarningBlock } from "../../src/core/exchange/formats/warning-block.ts";
import { fixture } from "../helpers/images.ts";
import { readJson, REVIEWER, seedCase, utf8 } from "./exchange-fixtures.ts";

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");

function legacyPackage(): { zip: Uint8Array; images: Record<string, Uint8Array> } {
  const images = { "left-bullet.png": fixture("sample.png"), "right-bullet.jpg": fixture("sample.jpg") };
  const exportData = {
    metadata: {
      caseNumber: "LEGACY-42",
      caseCreatedDate: "2025-09-01T10:00:00.000Z",
      exportDate: "2025-09-30T15:30:00.000Z",
      exportedBy: "field.analyst@lab.example",
      exportedByUid: "field-analyst-uid",
      exportedByName: "Field Analyst",
      exportedByCompany: "County Lab",
      striaeExportSchemaVersion: "1.0",
      totalFiles: 2,
    },
    files: [
      {
        fileData: { id: "cf-image-1", originalFilename: "left-bullet.png", uploadedAt: "2025-09-01T10:05:00.000Z" },
        annotations: {
          leftCase: "LEGACY-42", rightCase: "LEGACY-42", leftItem: "1", rightItem: "2", classType: "Bullet", supportLevel: "ID",
          includeConfirmation: true, hasSubclass: false,
          boxAnnotations: [{ id: "b1", x: 12, y: 34, width: 20, height: 10, color: "#FF0000", label: "striae", timestamp: "2025-09-02T10:00:00.000Z" }],
          updatedAt: "2025-09-02T10:00:00.000Z",
        },
        hasAnnotations: true,
      },
      { fileData: { id: "cf-image-2", originalFilename: "right-bullet.jpg", uploadedAt: "2025-09-01T10:06:00.000Z" }, hasAnnotations: false },
    ],
    summary: { filesWithAnnotations: 1, filesWithoutAnnotations: 1, totalBoxAnnotations: 1, lastModified: "2025-09-02T10:00:00.000Z" },
  };
  const json = JSON.stringify(exportData, null, 2);
  const warning = `/* CASE DATA WARNING
 * This file contains evidence data for forensic examination.
 * Any modification may compromise the integrity of the evidence.
 * Handle according to your organization's chain of custody procedures.
 * 
 * File generated: 2025-09-30T15:30:01.000Z
 * Checksum: 1a2b3c
 */\n\n`;
  const imageHashes: Record<string, string> = {};
  for (const name of Object.keys(images).sort()) imageHashes[name] = sha256(images[name as keyof typeof images]);
  const core = { dataHash: sha256(json), imageHashes, totalFiles: 3, createdAt: "2025-09-30T15:30:02.000Z" };
  const manifest = { ...core, manifestHash: sha256(JSON.stringify(core)) };
  const ordered = { dataHash: manifest.dataHash, imageHashes, manifestHash: manifest.manifestHash, totalFiles: 3, createdAt: core.createdAt };
  const zip = zipSync({
    "LEGACY-42_data.json": utf8(warning + json),
    "images/left-bullet.png": images["left-bullet.png"],
    "images/right-bullet.jpg": images["right-bullet.jpg"],
    "FORENSIC_MANIFEST.json": utf8(JSON.stringify(ordered, null, 2)),
    "READ_ONLY_INSTRUCTIONS.txt": utf8("EVIDENCE ARCHIVE - READ ONLY\n"),
    "README.txt": utf8("Striae Case Export\n"),
  });
  return { zip, images };
}

describe("a package made by the original client's layout", () => {
  it("imports: warning block stripped, striaeExportSchemaVersion accepted, images found by their original names", async () => {
    const { store, ports } = await seedCase();
    const { zip, images } = legacyPackage();
    const preview = await previewCaseImport(zip, { store, importerUid: REVIEWER });
    expect(preview).toMatchObject({ caseNumber: "LEGACY-42", fileCount: 2, annotationCount: 1, canImport: true, warnings: [], exportedBy: "field.analyst@lab.example" });

    const result = await importCase(store, zip, REVIEWER);
    expect(result).toMatchObject({ success: true, caseNumber: "LEGACY-42", filesImported: 2, annotationsImported: 1 });
    const document = await readJson(ports, storageKeys.case(REVIEWER, "LEGACY-42"));
    expect(document.createdAt).toBe("2025-09-01T10:00:00.000Z");
    // What the client's own importer writes on a read-only case; its confirmation export reads forensicManifestCreatedAt.
    expect(document).toMatchObject({ isReadOnly: true, importedAt: "2026-11-22T12:00:00.000Z", forensicManifestCreatedAt: "2025-09-30T15:30:02.000Z" });
    expect(await store.readImage(document.originalImageIds["cf-image-1"])).toEqual(images["left-bullet.png"]);
    expect(await store.readImage(document.originalImageIds["cf-image-2"])).toEqual(images["right-bullet.jpg"]);
    const annotations = await readJson(ports, storageKeys.annotations(REVIEWER, "LEGACY-42", document.originalImageIds["cf-image-1"]));
    expect(annotations.boxAnnotations[0]).toMatchObject({ id: "b1", label: "striae" });
  });

  it("is still refused when its JSON is changed behind the warning block", async () => {
    const { store } = await seedCase();
    const { zip } = legacyPackage();
    const { unzipSync } = await import("fflate");
    const archive = unzipSync(zip);
    const changed = new TextDecoder().decode(archive["LEGACY-42_data.json"]).replace('"rightItem": "2"', '"rightItem": "3"');
    const result = await importCase(store, zipSync({ ...archive, "LEGACY-42_data.json": utf8(changed) }), REVIEWER);
    expect(result.errors?.[0]).toContain("the data file does not match its hash");
  });

  it("strips only a leading comment block", () => {
    expect(stripWarningBlock('/* x\n * y\n */\n\n{"a":1}')).toBe('{"a":1}');
    expect(stripWarningBlock('{"a":"/* not a block */"}')).toBe('{"a":"/* not a block */"}');
    // The CSV warning line and its blank line, exact or reworded, as the client's reader takes them off.
    const warning = `"CASE DATA WARNING: This file contains evidence data for forensic examination. Any modification may compromise the integrity of the evidence. Handle according to your organization's chain of custody procedures."`;
    expect(stripWarningBlock(`${warning}\n\n# Case: A\n\n"x"`)).toBe('# Case: A\n\n"x"');
    expect(stripWarningBlock(`"CASE DATA WARNING: shorter"\r\n\r\n# Case: A`)).toBe("# Case: A");
    expect(stripWarningBlock('"Case Export Report"\n""')).toBe('"Case Export Report"\n""');
  });
});
