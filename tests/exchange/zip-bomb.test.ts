/**
 * Issue 13 item 4: a case package is read without trusting its ZIP. Bombs are refused from
 * the central directory without being inflated, a size that lies stops inflation at the
 * declared size, and names, counts and duplicates are checked first; a normal package still
 * imports, from bytes or from a Blob.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { zipSync } from "fflate";
import { exportCaseZip, importCase, previewCaseImport } from "../../src/core/exchange/mod.ts";
import { ZipDirectory, type ZipLimits } from "../../src/core/exchange/package/zip-read.ts";
import { crc32 } from "../../src/core/encoding/crc32.ts";
import { storageKeys } from "../../src/core/storage/keys.ts";
import { ANALYST, CASE, entries, readJson, REVIEWER, seedCase, type Seeded, storedImageIds, streamBytes, text, utf8 } from "./exchange-fixtures.ts";
import { buildZip, CountingBlob, peakRss, type RawEntry, resetPeakRss, zeros } from "./zip-bombs.ts";

const MIB = 1024 * 1024;
let seeded: Seeded;
let exported: Uint8Array;
/** The exported package's entries: data file, manifest, texts and images. */
let files: Record<string, Uint8Array>;

beforeAll(async () => {
  seeded = await seedCase();
  exported = await streamBytes(exportCaseZip(seeded.store, ANALYST, CASE));
  files = { ...entries(exported) };
});

/** The exported package with bomb images added, listed in its manifest so that a reader would get to them. */
function withImages(raw: RawEntry[]): Uint8Array<ArrayBuffer> {
  const manifest = JSON.parse(text(files["FORENSIC_MANIFEST.json"]));
  for (const entry of raw) manifest.imageHashes[entry.name.slice("images/".length)] = "0".repeat(64);
  return buildZip({ ...files, "FORENSIC_MANIFEST.json": utf8(JSON.stringify(manifest, null, 2)) }, raw);
}

/** Both entry points refuse the package with a message matching `reason`, and nothing is written. */
async function expectRefused(zip: Uint8Array | Blob, reason: RegExp): Promise<void> {
  const before = await storedImageIds(seeded.ports);
  const preview = await previewCaseImport(zip);
  expect(preview.canImport).toBe(false);
  expect(preview.warnings[0]).toMatch(reason);
  const result = await importCase(seeded.store, zip, REVIEWER);
  expect(result.success).toBe(false);
  expect(result.errors?.[0]).toMatch(reason);
  expect(await storedImageIds(seeded.ports)).toEqual(before);
  expect(await readJson(seeded.ports, storageKeys.case(REVIEWER, CASE))).toBeNull();
}

describe("ZIP bombs in a case package", () => {
  it("6 x 250 MB of zeros in 1.5 MB is refused from the central directory, without inflating anything", async () => {
    const { deflated, size, crc } = zeros(250);
    const bomb = withImages(Array.from({ length: 6 }, (_, i) => ({ name: `images/bomb-${i}.png`, compression: 8, data: deflated, size, crc })));
    expect(bomb.length).toBeLessThan(2 * MIB);
    const blob = new CountingBlob([bomb]);
    const measured = resetPeakRss();
    const rssBefore = peakRss();
    const started = Date.now();
    await expectRefused(blob, /^The archive entry "images\/bomb-0\.png" would inflate \d+ times \(\d+ to 262144000 bytes\); at most 100 times is accepted$/);
    const elapsed = Date.now() - started;
    // Two refusals read the end of the archive and its directory, never the 1.5 MB of data.
    expect(blob.read).toBeLessThan(2 * (66 * 1024 + 2048));
    expect(elapsed).toBeLessThan(5000);
    const rssAfter = peakRss();
    if (measured && rssBefore !== null && rssAfter !== null) expect(rssAfter - rssBefore).toBeLessThan(64 * MIB);
  });

  it("an entry whose declared size understates it is stopped at that size", async () => {
    const { deflated, size, crc } = zeros(200);
    // The central directory says 1 KB (so no ratio cap applies); the stream holds 200 MB.
    const lying = withImages([{ name: "images/lying.png", compression: 8, data: deflated, size: 1024, crc }]);
    resetPeakRss();
    const rssBefore = peakRss();
    await expectRefused(lying, /^The archive entry "images\/lying\.png" inflates beyond its declared 1024 bytes; reading stopped there$/);
    const rssAfter = peakRss();
    if (rssBefore !== null && rssAfter !== null) expect(rssAfter - rssBefore).toBeLessThan(size / 2);
  });

  it("a local header that disagrees with the central directory is refused", async () => {
    const zip = zipSync({ ...files }, { level: 0 });
    const name = Object.keys(files).find((entry) => entry.startsWith("images/"))!;
    // The local header of that image says it is one byte shorter.
    const at = findLocalHeader(zip, name);
    const view = new DataView(zip.buffer, zip.byteOffset);
    view.setUint32(at + 22, view.getUint32(at + 22, true) - 1, true);
    await expectRefused(zip, new RegExp(`^The archive entry "${name.replace(/[.]/g, "\\.")}" has a local header that disagrees with the central directory$`));
  });

  it("refuses more entries than a case package holds, before reading them", async () => {
    const many: Record<string, Uint8Array> = { ...files };
    for (let i = 0; i < 10_001; i++) many[`images/${i}.png`] = new Uint8Array(0);
    const blob = new CountingBlob([zipSync(many, { level: 0 })]);
    await expectRefused(blob, new RegExp(`^The archive holds ${Object.keys(many).length} entries; a case package may hold at most 10000$`));
    expect(blob.read).toBeLessThan(2 * 66 * 1024);
  });

  it("refuses unsafe, duplicate and foreign entry names", async () => {
    const data = files[`${CASE}_data.json`]!;
    for (const [name, reason] of [
      ["../x", "it climbs out of its folder with .."],
      ["images/../../x.png", "it climbs out of its folder with .."],
      ["/abs", "it is an absolute path"],
      ["C:/x.png", "it is an absolute path"],
      ["a\\b", "it holds a backslash"],
      ["images\\x.png", "it holds a backslash"],
      ["images//x.png", "it has an empty or . segment"],
      ["images/x\u0001.png", "it holds a control character"],
    ]) {
      await expectRefused(buildZip({ ...files, [name!]: data }), new RegExp(`^The archive holds an unsafe entry name ${escape(JSON.stringify(name))}: ${escape(reason!)}$`));
    }
    const image = Object.keys(files).find((entry) => entry.startsWith("images/"))!;
    const duplicate: RawEntry = { name: image, compression: 0, data: new Uint8Array(data), size: data.length, crc: crc32(data) };
    await expectRefused(buildZip(files, [duplicate]), new RegExp(`^The archive holds the entry ${escape(JSON.stringify(image))} more than once$`));
    await expectRefused(buildZip({ ...files, "notes.txt": data, "images/sub/x.png": data }), /^The archive holds entries a case package does not \("notes\.txt", "images\/sub\/x\.png"\)/);
  });

  it("refuses encrypted entries, other methods, and totals over the cap", async () => {
    const deflated = zeros(3);
    const limits: ZipLimits = { maxEntries: 100, maxEntryBytes: 4 * MIB, maxInflatedBytes: 5 * MIB, maxRatio: 100, ratioFloorBytes: 4 * MIB, maxDirectoryBytes: MIB };
    const two = buildZip({}, [0, 1].map((i) => ({ name: `images/${i}.png`, compression: 8, data: deflated.deflated, size: deflated.size, crc: deflated.crc })));
    await expect(ZipDirectory.open(two, limits)).rejects.toThrow(`The archive's compressed entries would inflate to ${6 * MIB} bytes in all; at most ${5 * MIB} are accepted`);
    await expect(ZipDirectory.open(two, { ...limits, maxEntryBytes: 2 * MIB })).rejects.toThrow(`The archive entry "images/0.png" declares ${3 * MIB} bytes; an entry may hold at most ${2 * MIB}`);
    const one = await ZipDirectory.open(two, { ...limits, maxInflatedBytes: 6 * MIB });
    expect((await one.read(one.entries.get("images/1.png")!)).length).toBe(3 * MIB);
    const bzip = buildZip({}, [{ name: "README.txt", compression: 12, data: new Uint8Array(4), size: 4, crc: 0 }]);
    await expectRefused(bzip, /^The archive entry "README\.txt" uses compression method 12; only stored and deflated entries are read$/);
    const encrypted = buildZip({ "README.txt": utf8("x") });
    encrypted[findCentralRecord(encrypted, "README.txt") + 8]! |= 1;
    await expectRefused(encrypted, /^The archive entry "README\.txt" is encrypted$/);
    await expectRefused(utf8("not a zip"), /^The file is not a readable ZIP archive/);
  });

  it("a normal package still imports, from bytes and from a Blob", async () => {
    const fromBytes = await importCase(seeded.store, exported, REVIEWER);
    expect(fromBytes).toMatchObject({ success: true, caseNumber: CASE, filesImported: 3 });
    const document = await readJson(seeded.ports, storageKeys.case(REVIEWER, CASE));
    for (const file of seeded.files) expect(await seeded.store.readImage(document.originalImageIds[file.id])).toEqual(file.bytes);
    // Deflated images (as other ZIP tools write them), read from a Blob.
    const deflated = new Blob([zipSync({ ...files }, { level: 9 })]);
    expect((await previewCaseImport(deflated)).canImport).toBe(true);
    const fromBlob = await importCase(seeded.store, deflated, REVIEWER, { overwriteExisting: true });
    expect(fromBlob).toMatchObject({ success: true, filesImported: 3 });
    const replaced = await readJson(seeded.ports, storageKeys.case(REVIEWER, CASE));
    for (const file of seeded.files) expect(await seeded.store.readImage(replaced.originalImageIds[file.id])).toEqual(file.bytes);
  });
});

const escape = (value: string): string => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The offset of the local header (or central record) of `name`. */
function findRecord(zip: Uint8Array, signature: number, lengthAt: number, nameAt: number, name: string): number {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const wanted = utf8(name);
  for (let at = 0; at + nameAt < zip.length; at++) {
    if (view.getUint32(at, true) !== signature) continue;
    const length = view.getUint16(at + lengthAt, true);
    if (length === wanted.length && zip.subarray(at + nameAt, at + nameAt + length).every((byte, i) => byte === wanted[i])) return at;
  }
  throw new Error(`no record for ${name}`);
}

const findLocalHeader = (zip: Uint8Array, name: string): number => findRecord(zip, 0x04034b50, 26, 30, name);
const findCentralRecord = (zip: Uint8Array, name: string): number => findRecord(zip, 0x02014b50, 28, 46, name);
