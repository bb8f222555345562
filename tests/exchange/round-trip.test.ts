import * as zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { unzip, type UnzipFileInfo } from "fflate";
import { storageKeys } from "../../src/core/storage/keys.ts";
import { exportCaseZip, type ExportProgress, importCase, previewCaseImport, writeCaseZip } from "../../src/core/exchange/mod.ts";
import { collectCaseExport } from "../../src/core/exchange/case-export.ts";
import { imageEntryName, manifestHashOf } from "../../src/core/exchange/package/manifest.ts";
import { sha256Hex } from "../../src/core/encoding/digest.ts";
import { ANALYST, auditEntries, CASE, entries, readJson, referenceCrc, REVIEWER, seedCase, storedImageIds, streamBytes, text } from "./exchange-fixtures.ts";

/** The compression method of each entry, as the central directory states it. */
function methods(zip: Uint8Array): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  return new Promise((resolve, reject) =>
    unzip(zip, {
      filter: (file: UnzipFileInfo) => {
        found[file.name] = file.compression;
        return false;
      },
    }, (err) => (err ? reject(err) : resolve(found)))
  );
}

/** Name, CRC-32 and sizes of each entry from the central directory (fflate does not check CRCs). */
function centralDirectory(zip: Uint8Array): { name: string; crc: number; compressed: number; size: number }[] {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  let end = zip.length - 22;
  while (view.getUint32(end, true) !== 0x06054b50) end--;
  let at = view.getUint32(end + 16, true);
  const out = [];
  for (let n = view.getUint16(end + 10, true); n > 0; n--) {
    expect(view.getUint32(at, true)).toBe(0x02014b50);
    const nameLength = view.getUint16(at + 28, true);
    out.push({
      name: new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength)),
      crc: view.getUint32(at + 16, true),
      compressed: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
    });
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return out;
}

describe("ZIP export (EXCHANGE.md ZIP)", () => {
  it("holds the data file, each image stored under {basename}-{fileId}{ext}, the texts and the manifest", async () => {
    const { store, files } = await seedCase();
    const progress: ExportProgress[] = [];
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE, { onProgress: (p) => progress.push(p) }));
    const archive = entries(zip);
    const imageNames = files.map((file) => `images/${imageEntryName(file)}`);
    expect(Object.keys(archive).sort()).toEqual(
      [`${CASE}_data.json`, ...imageNames, "README.txt", "READ_ONLY_INSTRUCTIONS.txt", "FORENSIC_MANIFEST.json"].sort(),
    );
    expect(imageNames[0]).toBe(`images/bullet 1-${files[0]!.id}.png`);
    for (const [i, file] of files.entries()) expect(archive[imageNames[i]!]).toEqual(file.bytes);

    const compression = await methods(zip);
    for (const name of imageNames) expect(compression[name]).toBe(0);
    for (const name of [`${CASE}_data.json`, "README.txt", "READ_ONLY_INSTRUCTIONS.txt", "FORENSIC_MANIFEST.json"]) expect(compression[name]).toBe(8);

    const directory = centralDirectory(zip);
    expect(directory.map((entry) => entry.name).sort()).toEqual(Object.keys(archive).sort());
    for (const entry of directory) {
      expect(entry.crc, entry.name).toBe(referenceCrc(archive[entry.name]!));
      expect(entry.size).toBe(archive[entry.name]!.length);
    }

    const manifest = JSON.parse(text(archive["FORENSIC_MANIFEST.json"]));
    expect(Object.keys(manifest)).toEqual(["dataHash", "imageHashes", "manifestHash", "totalFiles", "createdAt"]);
    expect(manifest.dataHash).toBe(await sha256Hex(archive[`${CASE}_data.json`]!));
    expect(Object.keys(manifest.imageHashes)).toEqual(imageNames.map((name) => name.slice(7)).sort());
    for (const name of imageNames) expect(manifest.imageHashes[name.slice(7)]).toBe(await sha256Hex(archive[name]!));
    expect(manifest.totalFiles).toBe(4);
    const core = JSON.stringify({ dataHash: manifest.dataHash, imageHashes: manifest.imageHashes, totalFiles: 4, createdAt: manifest.createdAt });
    expect(manifest.manifestHash).toBe(await sha256Hex(core));
    expect(await manifestHashOf(manifest)).toBe(manifest.manifestHash);

    const readme = text(archive["README.txt"]);
    for (const fact of [`Case Number: ${CASE}`, `Exported By (UID): ${ANALYST}`, "Export Schema Version: 1.0", "- Total Box Annotations: 3", "EVIDENCE NOTICE"]) {
      expect(readme).toContain(fact);
    }
    expect(text(archive["READ_ONLY_INSTRUCTIONS.txt"])).toContain("READ ONLY");

    const phases = progress.map((p) => p.phase);
    expect(new Set(phases)).toEqual(new Set(["collecting", "images", "hashing", "writing"]));
    expect(progress.filter((p) => p.phase === "images").map((p) => p.done)).toEqual([0, 1, 2, 3]);
    expect(progress.at(-1)).toEqual({ phase: "writing", done: 1, total: 1 });
  });

  it("writes the same bytes through the chunk callback, and audits the export", async () => {
    const { store, ports } = await seedCase();
    const chunks: Uint8Array[] = [];
    let writing = 0;
    const summary = await writeCaseZip(store, ANALYST, CASE, async (chunk) => {
      expect(writing++).toBe(0); // one write at a time
      await new Promise((done) => setTimeout(done, chunk.length % 3));
      chunks.push(chunk);
      writing--;
    });
    const joined = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let offset = 0;
    for (const chunk of chunks) joined.set(chunk, (offset += chunk.length) - chunk.length);
    expect(summary.bytes).toBe(joined.length);
    expect(summary.images).toBe(3);
    expect(joined).toEqual(await streamBytes(exportCaseZip(store, ANALYST, CASE)));
    const audit = await auditEntries(ports, ANALYST);
    expect(audit.map((entry) => [entry.action, entry.result, entry.details.fileType])).toEqual([
      ["case-export", "success", "zip"],
      ["case-export", "success", "zip"],
    ]);
  });

  it("a native CRC-32 (node:zlib) gives the same archive as the module's own", async () => {
    const { store } = await seedCase();
    const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
    expect(typeof native).toBe("function");
    const collect = async (crc32?: (chunk: Uint8Array, previous: number) => number) => {
      const chunks: Uint8Array[] = [];
      await writeCaseZip(store, ANALYST, CASE, (chunk) => void chunks.push(chunk), { crc32 });
      return new Uint8Array(await new Blob(chunks as BlobPart[]).arrayBuffer());
    };
    expect(await collect(native)).toEqual(await collect());
  });

  it("a failing write fails the export", async () => {
    const { store } = await seedCase();
    let calls = 0;
    await expect(writeCaseZip(store, ANALYST, CASE, async () => {
      if (++calls === 2) throw new Error("disk full");
    })).rejects.toThrow("disk full");
  });

  it("a cancelled stream stops reading images and audits the export as cancelled", async () => {
    const { store, ports } = await seedCase();
    let reads = 0;
    const counting = { ...store, readImage: (id: string) => (reads++, store.readImage(id)) };
    const reader = exportCaseZip(counting, ANALYST, CASE).getReader();
    await reader.read();
    await reader.cancel();
    expect(reads).toBeLessThan(3);
    expect((await auditEntries(ports, ANALYST)).map((entry) => [entry.result, entry.details.validationErrors])).toEqual([
      ["failure", ["The export was cancelled before it was complete"]],
    ]);
  });

  it("errors the stream when an image is missing, and audits the failure", async () => {
    const { store, ports, files } = await seedCase();
    await ports.images.delete(storageKeys.image(files[1]!.id));
    await expect(streamBytes(exportCaseZip(store, ANALYST, CASE))).rejects.toThrow(/was not found/);
    expect((await auditEntries(ports, ANALYST)).map((entry) => entry.result)).toEqual(["failure"]);
  });
});

describe("round trip: export, import as another user, export again", () => {
  it("imports a read-only case whose annotations and image bytes equal the original's; a new export holds the same data", async () => {
    const { store, ports, files } = await seedCase();
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE));
    const original = await collectCaseExport(store, ANALYST, CASE);

    const preview = await previewCaseImport(zip, { store, importerUid: REVIEWER });
    expect(preview).toMatchObject({ caseNumber: CASE, fileCount: 3, annotationCount: 2, exportedBy: `${ANALYST}@lab.example`, hasImages: true, canImport: true, signatureValid: "unsigned" });

    const imagesBefore = await storedImageIds(ports);
    const result = await importCase(store, zip, REVIEWER, { fileName: "case.zip" });
    expect(result).toEqual({ success: true, caseNumber: CASE, isReadOnly: true, filesImported: 3, annotationsImported: 2, signatureValid: "unsigned" });

    const user = JSON.parse((await ports.users.get(REVIEWER))!);
    expect(user.readOnlyCases).toEqual([{
      caseNumber: CASE,
      importedAt: "2026-11-22T12:00:00.000Z",
      originalExportDate: "2026-11-22T12:00:00.000Z",
      originalExportedBy: `${ANALYST}@lab.example`,
      sourceHash: JSON.parse(text(entries(zip)["FORENSIC_MANIFEST.json"])).manifestHash,
      isReadOnly: true,
    }]);
    const document = await readJson(ports, storageKeys.case(REVIEWER, CASE));
    expect(document).toMatchObject({ caseNumber: CASE, isReadOnly: true, importedAt: "2026-11-22T12:00:00.000Z" });
    expect(Object.keys(document.originalImageIds)).toEqual(files.map((file) => file.id));
    const newIds: string[] = files.map((file) => document.originalImageIds[file.id]);
    expect(new Set(newIds).size).toBe(3);
    for (const id of newIds) expect(files.map((file) => file.id)).not.toContain(id);
    expect((await storedImageIds(ports)).length).toBe(imagesBefore.length + 3);

    for (const [i, file] of files.entries()) {
      expect(await store.readImage(newIds[i]!)).toEqual(file.bytes);
      const before = await readJson(ports, storageKeys.annotations(ANALYST, CASE, file.id));
      expect(await readJson(ports, storageKeys.annotations(REVIEWER, CASE, newIds[i]!))).toEqual(before);
    }

    const again = await collectCaseExport(store, REVIEWER, CASE);
    const byOriginal = Object.fromEntries(Object.entries(document.originalImageIds).map(([from, to]) => [to, from]));
    const normalized = { ...again, files: again.files.map((file) => ({ ...file, fileData: { ...file.fileData, id: byOriginal[file.fileData.id] } })) };
    const { exportedBy: _1, exportedByUid: _2, exportedByName: _3, exportedByCompany: _4, ...originalMeta } = original.metadata;
    const { exportedBy: _5, exportedByUid: _6, exportedByName: _7, exportedByCompany: _8, ...againMeta } = normalized.metadata;
    expect(againMeta).toEqual(originalMeta);
    expect(normalized.files).toEqual(original.files);
    expect(normalized.summary).toEqual(original.summary);
    expect(again.metadata.exportedByUid).toBe(REVIEWER);

    const audit = await auditEntries(ports, REVIEWER);
    expect(audit.at(-1)).toMatchObject({
      userId: REVIEWER,
      action: "case-import",
      result: "success",
      details: { caseNumber: CASE, fileName: "case.zip", hashValid: true, originalExaminerUid: ANALYST, reviewingExaminerUid: REVIEWER, workflowPhase: "case-import" },
    });
  });

  it("keeps or resets timestamps as preserveTimestamps says", async () => {
    const { store, ports, files } = await seedCase();
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE));
    expect((await importCase(store, zip, REVIEWER, { preserveTimestamps: false })).success).toBe(true);
    const document = await readJson(ports, storageKeys.case(REVIEWER, CASE));
    expect(document.createdAt).toBe("2026-11-22T12:00:00.000Z");
    expect(document.files.every((file: { uploadedAt: string }) => file.uploadedAt === "2026-11-22T12:00:00.000Z")).toBe(true);
    const annotations = await readJson(ports, storageKeys.annotations(REVIEWER, CASE, document.originalImageIds[files[0]!.id]));
    expect(annotations.updatedAt).toBe("2026-11-22T12:00:00.000Z");
  });
});
