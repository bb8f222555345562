import { beforeAll, describe, expect, it } from "vitest";
import { storageKeys } from "../../src/core/storage/keys.ts";
import { exportCaseZip, importCase, previewCaseImport, type ExchangeStore } from "../../src/core/exchange/mod.ts";
import { OWN_CASE_REFUSAL } from "../../src/core/exchange/import/import-rules.ts";
import { legalHoldStore } from "../../src/core/users/legal-holds.ts";
import { buildManifest } from "../../src/core/exchange/package/manifest.ts";
import { sha256Hex } from "../../src/core/encoding/digest.ts";
import { zipSync } from "fflate";
import {
  ANALYST,
  auditEntries,
  CASE,
  entries,
  flipped,
  putUser,
  readJson,
  REVIEWER,
  rezip,
  seedCase,
  type Seeded,
  storedImageIds,
  streamBytes,
  text,
  utf8,
} from "./exchange-fixtures.ts";

/** The package with its data file changed and the manifest made again, so it stays consistent with itself. */
async function repackage(pkg: Uint8Array, change: (data: any) => void, add: Record<string, Uint8Array> = {}): Promise<Uint8Array> {
  const archive = { ...entries(pkg), ...add };
  const dataName = Object.keys(archive).find((name) => name.endsWith("_data.json"))!;
  const data = JSON.parse(text(archive[dataName]));
  change(data);
  archive[dataName] = utf8(JSON.stringify(data, null, 2));
  const imageHashes: Record<string, string> = {};
  for (const [name, bytes] of Object.entries(archive)) if (name.startsWith("images/")) imageHashes[name.slice(7)] = await sha256Hex(bytes);
  const old = JSON.parse(text(archive["FORENSIC_MANIFEST.json"]));
  const manifest = await buildManifest(await sha256Hex(archive[dataName]!), imageHashes, old.createdAt);
  archive["FORENSIC_MANIFEST.json"] = utf8(JSON.stringify(manifest, null, 2));
  return zipSync(archive);
}

let seeded: Seeded;
let zip: Uint8Array;
let names: { data: string; image: string; manifest: string };
beforeAll(async () => {
  seeded = await seedCase();
  zip = await streamBytes(exportCaseZip(seeded.store, ANALYST, CASE));
  const archive = entries(zip);
  names = {
    data: `${CASE}_data.json`,
    image: Object.keys(archive).find((name) => name.startsWith("images/"))!,
    manifest: "FORENSIC_MANIFEST.json",
  };
});

/** Nothing of an import is left: no new image, no case, no read-only entry. */
async function expectNothingWritten(before: string[]) {
  expect(await storedImageIds(seeded.ports)).toEqual(before);
  expect(await readJson(seeded.ports, storageKeys.case(REVIEWER, CASE))).toBeNull();
  expect(JSON.parse((await seeded.ports.users.get(REVIEWER))!).readOnlyCases ?? []).toEqual([]);
}

describe("import rule 2: tampering with any byte is refused with the reason", () => {
  for (const which of ["data", "manifest"] as const) {
    // A preview per byte, ~1,000 of them: seconds on a quiet core, more beside other suites' files, so 60 s.
    it(`every byte of the ${which} file`, async () => {
      const original = entries(zip)[names[which]]!;
      for (let index = 0; index < original.length; index++) {
        const preview = await previewCaseImport(rezip(zip, { [names[which]]: flipped(original, index) }));
        if (preview.canImport) throw new Error(`a change of byte ${index} of the ${which} file was accepted`);
      }
    }, 60_000);
  }

  it("bytes across an image (first, middle, last and every 97th)", async () => {
    const original = entries(zip)[names.image]!;
    const positions = [0, original.length >> 1, original.length - 1, ...Array.from({ length: Math.floor(original.length / 97) }, (_, i) => i * 97)];
    for (const index of positions) {
      const preview = await previewCaseImport(rezip(zip, { [names.image]: flipped(original, index) }));
      expect(preview.canImport, `byte ${index}`).toBe(false);
      expect(preview.warnings[0]).toContain(`the image ${names.image} does not match its hash`);
    }
  });

  it("importCase refuses a tampered data file, writes nothing, and audits the failure", async () => {
    const before = await storedImageIds(seeded.ports);
    const data = entries(zip)[names.data]!;
    const result = await importCase(seeded.store, rezip(zip, { [names.data]: flipped(data, 200) }), REVIEWER);
    expect(result.success).toBe(false);
    expect(result.errors?.[0]).toMatch(/^Integrity check failed: the data file does not match its hash/);
    await expectNothingWritten(before);
    const audit = (await auditEntries(seeded.ports, REVIEWER)).at(-1);
    expect(audit).toMatchObject({ action: "case-import", result: "failure", details: { hashValid: false, caseNumber: CASE } });
    expect(audit.details.validationErrors[0]).toContain("data file does not match");
  });

  it("names the reason for a manifest hash, a missing image and an extra image", async () => {
    const manifest = JSON.parse(text(entries(zip)[names.manifest]));
    const changed = { ...manifest, manifestHash: "0".repeat(64) };
    expect((await importCase(seeded.store, rezip(zip, { [names.manifest]: utf8(JSON.stringify(changed, null, 2)) }), REVIEWER)).errors?.[0])
      .toContain("the manifest hash does not match");
    expect((await importCase(seeded.store, rezip(zip, { [names.image]: null }), REVIEWER)).errors?.[0]).toContain("images listed in the manifest are missing");
    expect((await importCase(seeded.store, rezip(zip, { "images/extra.png": utf8("x") }), REVIEWER)).errors?.[0]).toContain("images not listed in the manifest: extra.png");
    expect((await importCase(seeded.store, rezip(zip, { [names.manifest]: null }), REVIEWER)).errors).toEqual([
      "FORENSIC_MANIFEST.json is missing: the archive's integrity cannot be verified",
    ]);
  });
});

describe("import rules 1, 3, 4, 5 and 7", () => {
  it("1: exactly one *_data.json; a CSV package is refused", async () => {
    const data = entries(zip)[names.data]!;
    const csv = rezip(zip, { [names.data]: null, [`${CASE}_data.csv`]: utf8('"a"') });
    expect((await importCase(seeded.store, csv, REVIEWER)).errors).toEqual(["CSV import is not supported"]);
    expect((await importCase(seeded.store, rezip(zip, { "OTHER_data.json": data }), REVIEWER)).errors?.[0]).toMatch(/2 data files/);
    expect((await importCase(seeded.store, utf8("not a zip"), REVIEWER)).errors?.[0]).toMatch(/not a readable ZIP/);
  });

  it("4: the original analyst is refused and the refusal is audited as blocked", async () => {
    const before = await storedImageIds(seeded.ports);
    const result = await importCase(seeded.store, zip, ANALYST);
    expect(result).toMatchObject({ success: false, caseNumber: CASE, filesImported: 0, errors: [OWN_CASE_REFUSAL] });
    expect(await storedImageIds(seeded.ports)).toEqual(before);
    expect((await auditEntries(seeded.ports, ANALYST)).at(-1)).toMatchObject({ action: "case-import", result: "blocked" });
    const preview = await previewCaseImport(zip, { store: seeded.store, importerUid: ANALYST });
    expect(preview).toMatchObject({ canImport: false, warnings: [OWN_CASE_REFUSAL] });
  });

  it("5: a case number that is one of the importer's own cases is refused", async () => {
    const { store, ports } = await seedCase();
    await putUser(ports, REVIEWER, [CASE]);
    const result = await importCase(store, await streamBytes(exportCaseZip(store, ANALYST, CASE)), REVIEWER);
    expect(result.errors?.[0]).toContain("is one of your own cases");
  });

  it("7: a read-only case of the same number needs overwriteExisting, which replaces it whole", async () => {
    const { store, ports, files } = await seedCase();
    const package1 = await streamBytes(exportCaseZip(store, ANALYST, CASE));
    expect((await importCase(store, package1, REVIEWER)).success).toBe(true);
    const first = await readJson(ports, storageKeys.case(REVIEWER, CASE));
    const firstIds: string[] = Object.values(first.originalImageIds);

    const refused = await importCase(store, package1, REVIEWER);
    expect(refused.errors?.[0]).toMatch(/already exists; import with overwriteExisting/);

    const replaced = await importCase(store, package1, REVIEWER, { overwriteExisting: true });
    expect(replaced).toMatchObject({ success: true, filesImported: 3, warnings: [`The read-only case ${CASE} was replaced`] });
    const second = await readJson(ports, storageKeys.case(REVIEWER, CASE));
    for (const id of firstIds) {
      expect(await store.readImage(id)).toBeNull();
      expect(await readJson(ports, storageKeys.annotations(REVIEWER, CASE, id))).toBeNull();
    }
    expect(await store.readImage(second.originalImageIds[files[0]!.id])).toEqual(files[0]!.bytes);
    expect(JSON.parse((await ports.users.get(REVIEWER))!).readOnlyCases).toHaveLength(1);
  });

  it("7: a read-only case on legal hold is not replaced: CONFLICT naming the hold, its files and images stay", async () => {
    const { store, ports } = await seedCase();
    const package1 = await streamBytes(exportCaseZip(store, ANALYST, CASE));
    expect((await importCase(store, package1, REVIEWER)).success).toBe(true);
    const first = await readJson(ports, storageKeys.case(REVIEWER, CASE));
    const firstIds: string[] = Object.values(first.originalImageIds);
    await legalHoldStore(ports.users).place(REVIEWER, { caseNumber: CASE, reason: "State v. Doe", heldAt: "2026-11-22T00:00:00.000Z", heldBy: "admin", imageIds: firstIds });
    const imagesBefore = await storedImageIds(ports);
    const refused = await importCase(store, package1, REVIEWER, { overwriteExisting: true });
    expect(refused).toMatchObject({ success: false, errorCode: "CONFLICT" });
    expect(refused.errors?.[0]).toContain("legal hold");
    expect(await readJson(ports, storageKeys.case(REVIEWER, CASE))).toEqual(first);
    expect(await storedImageIds(ports)).toEqual(imagesBefore);
    for (const id of firstIds) expect(await store.readImage(id)).not.toBeNull();
  });

  it("an importer already holding 10,000 read-only cases is refused (the most a record lists), and nothing is written", async () => {
    const { store, ports } = await seedCase();
    const record = JSON.parse((await ports.users.get(REVIEWER))!);
    const full = Array.from({ length: 10_000 }, (_, i) => ({ caseNumber: `R-${i}`, importedAt: "2026-11-01T00:00:00.000Z", originalExportDate: "2026-11-01T00:00:00.000Z", originalExportedBy: "x", isReadOnly: true }));
    await ports.users.put(REVIEWER, JSON.stringify({ ...record, readOnlyCases: full }));
    const imagesBefore = await storedImageIds(ports);
    const result = await importCase(store, await streamBytes(exportCaseZip(store, ANALYST, CASE)), REVIEWER);
    expect(result.success).toBe(false);
    expect(result.errors?.[0]).toContain("10000 read-only cases, the most a record lists");
    expect((result.warnings ?? []).filter((warning) => warning.includes("Rollback"))).toEqual([]);
    expect(await storedImageIds(ports)).toEqual(imagesBefore);
    expect(JSON.parse((await ports.users.get(REVIEWER))!).readOnlyCases).toHaveLength(10_000);
    // Replacing one it holds adds none: allowed.
    await ports.users.put(REVIEWER, JSON.stringify({ ...record, readOnlyCases: [...full.slice(1), { ...full[0], caseNumber: CASE }] }));
    expect((await importCase(store, await streamBytes(exportCaseZip(store, ANALYST, CASE)), REVIEWER, { overwriteExisting: true })).success).toBe(true);
  });

  it("3: a missing or malformed case number is refused; 4: a missing exporter uid is refused", async () => {
    const { store } = await seedCase({ caseNumber: "BAD_CASE_1" });
    const bad = await streamBytes(exportCaseZip(store, ANALYST, "BAD_CASE_1"));
    expect((await importCase(store, bad, REVIEWER)).errors?.[0]).toMatch(/^Invalid case number "BAD_CASE_1"/);
    const noNumber = await repackage(zip, (data) => delete data.metadata.caseNumber);
    expect((await importCase(seeded.store, noNumber, REVIEWER)).errors).toEqual(["metadata.caseNumber is required"]);
    const noExporter = await repackage(zip, (data) => delete data.metadata.exportedByUid);
    expect((await importCase(seeded.store, noExporter, REVIEWER)).errors).toEqual(["metadata.exportedByUid is required"]);
  });
});

describe("import rule 8: rollback", () => {
  it("removes the images, annotations and case written before a failure, and says why", async () => {
    const { store, ports } = await seedCase();
    const before = await storedImageIds(ports);
    const failing: ExchangeStore = {
      ...store,
      updateReadOnlyCases: () => Promise.reject(new Error("user store unavailable")),
    };
    const result = await importCase(failing, await streamBytes(exportCaseZip(store, ANALYST, CASE)), REVIEWER);
    expect(result).toMatchObject({ success: false, filesImported: 0, annotationsImported: 0, errors: ["user store unavailable"] });
    expect(await storedImageIds(ports)).toEqual(before);
    expect(await readJson(ports, storageKeys.case(REVIEWER, CASE))).toBeNull();
    expect(await ports.data.list(`${REVIEWER}/`)).toEqual([]);
    expect((await auditEntries(ports, REVIEWER)).at(-1)).toMatchObject({ action: "case-import", result: "failure" });
  });

  it("restores the replaced case when an overwrite fails", async () => {
    const { store, ports } = await seedCase();
    const pkg = await streamBytes(exportCaseZip(store, ANALYST, CASE));
    await importCase(store, pkg, REVIEWER);
    const first = await readJson(ports, storageKeys.case(REVIEWER, CASE));
    const images = await storedImageIds(ports);
    let uploads = 0;
    const failing: ExchangeStore = {
      ...store,
      uploadImage: (image) => (++uploads === 3 ? Promise.reject(new Error("image host full")) : store.uploadImage(image)),
      // The import streams images where the store can: that way fails the same.
      uploadImageStream: (image) => (++uploads === 3 ? Promise.reject(new Error("image host full")) : store.uploadImageStream!(image)),
    };
    const result = await importCase(failing, pkg, REVIEWER, { overwriteExisting: true });
    expect(result.errors).toEqual(["image host full"]);
    expect(await readJson(ports, storageKeys.case(REVIEWER, CASE))).toEqual(first);
    expect(await storedImageIds(ports)).toEqual(images);
  });

  it("validateIntegrity: a file without its image or an image of no file is refused, a warning when false", async () => {
    const { store } = await seedCase();
    const pkg = await streamBytes(exportCaseZip(store, ANALYST, CASE));
    const ghost = await repackage(pkg, (data) => {
      data.files.push({ fileData: { id: "ghost", originalFilename: "ghost.png", uploadedAt: "2026-11-05T00:00:00.000Z" }, hasAnnotations: false });
      data.metadata.totalFiles = 4;
    });
    expect((await importCase(store, ghost, REVIEWER)).errors?.[0]).toBe("The package is inconsistent: File ghost (ghost.png) has no image in the archive");
    const lenient = await importCase(store, ghost, REVIEWER, { validateIntegrity: false });
    expect(lenient).toMatchObject({ success: true, filesImported: 3, warnings: ["File ghost (ghost.png) has no image in the archive"] });

    const someImage = Object.entries(entries(pkg)).find(([name]) => name.startsWith("images/"))![1];
    const extra = await repackage(pkg, () => {}, { "images/stray.png": someImage });
    expect((await previewCaseImport(extra)).warnings[0]).toBe("The package is inconsistent: The image images/stray.png belongs to no file of the data file");
    expect((await previewCaseImport(extra, { validateIntegrity: false })).canImport).toBe(true);
  });
});

describe("file ids", () => {
  it("two files of one id, or the id __proto__, are refused whatever validateIntegrity says, and nothing is written", async () => {
    const { store, ports } = await seedCase();
    const before = await storedImageIds(ports);
    const pkg = await streamBytes(exportCaseZip(store, ANALYST, CASE));
    const twice = await repackage(pkg, (data) => {
      data.files[1].fileData.id = data.files[0].fileData.id;
    });
    const proto = await repackage(pkg, (data) => {
      data.files[0].fileData.id = "__proto__";
    });
    for (const [name, zipped, reason] of [
      ["one id twice", twice, /^The data file lists the file id ".+" twice: each file needs an id of its own$/],
      ["__proto__", proto, /^The file id "__proto__" \(.+\) cannot be imported: it cannot name a file$/],
    ] as const) {
      for (const validateIntegrity of [true, false]) {
        const result = await importCase(store, zipped, REVIEWER, { validateIntegrity });
        expect(result.success, `${name}, validateIntegrity ${validateIntegrity}`).toBe(false);
        expect(result.errors?.[0]).toMatch(reason);
        expect((await previewCaseImport(zipped, { validateIntegrity })).canImport).toBe(false);
      }
    }
    expect(await storedImageIds(ports)).toEqual(before);
    expect(await readJson(ports, storageKeys.case(REVIEWER, CASE))).toBeNull();
  });
});

describe("imported images are checked as uploads are", () => {
  it("an image cut short, consistent with its manifest, is refused by its structure and nothing is written", async () => {
    const before = await storedImageIds(seeded.ports);
    const original = entries(zip)[names.image]!;
    const truncated = await repackage(zip, () => {}, { [names.image]: original.slice(0, 60) });
    const result = await importCase(seeded.store, truncated, REVIEWER);
    expect(result.success).toBe(false);
    expect(result.errors?.[0]).toMatch(/is not a readable (PNG|JPEG|WebP|GIF|TIFF|BMP)/);
    await expectNothingWritten(before);
  });

  it("the preview refuses what the import would (an image cut short, bytes that are no image), with the same reason", async () => {
    const original = entries(zip)[names.image]!;
    for (const bytes of [original.slice(0, 60), utf8("not an image at all")]) {
      const bad = await repackage(zip, () => {}, { [names.image]: bytes });
      const preview = await previewCaseImport(bad);
      const result = await importCase(seeded.store, bad, REVIEWER);
      expect(result.success).toBe(false);
      expect(preview.canImport).toBe(false);
      expect(preview.warnings[0]).toBe(result.errors?.[0]);
    }
  });
});
