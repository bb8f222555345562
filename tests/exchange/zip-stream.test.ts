/**
 * A package entry read as a stream (an import streams each image into the image store): the
 * entry's bytes whatever the source and the reader, a reader's own buffer (BYOB) filled in
 * place, and a stream that errors, so that nothing is stored, when the bytes are not the entry's.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { zipSync } from "fflate";
import { type ArchiveReader, ZipDirectory, type ZipLimits, type ZipSource } from "../../src/core/exchange/package/zip-read.ts";
import { piecesInto } from "../../src/core/storage/byte-stream.ts";
import { createFileBlobStore } from "../../src/adapters/server/files/file-ports.ts";
import { exportCaseZip, importCase } from "../../src/core/exchange/mod.ts";
import { ANALYST, CASE, REVIEWER, readJson, seedCase, storedImageIds, streamBytes } from "./exchange-fixtures.ts";
import { storageKeys } from "../../src/core/storage/keys.ts";

const limits: ZipLimits = { maxEntries: 100, maxEntryBytes: 64 << 20, maxInflatedBytes: 64 << 20, maxRatio: 100, ratioFloorBytes: 1 << 20, maxDirectoryBytes: 1 << 20 };
const image = Uint8Array.from({ length: 700_001 }, (_, i) => (i * 7919) & 0xff);
const text = new TextEncoder().encode("land impressions ".repeat(5000));
const zip = zipSync({ "images/a.png": [image, { level: 0 }], "notes.txt": [text, { level: 6 }], "images/empty.png": [new Uint8Array(0), { level: 0 }] });

/** An archive kept outside memory, as the spool is: positional reads into the caller's buffer. */
const rangesOf = (bytes: Uint8Array): ArchiveReader => ({
  size: bytes.length,
  read: (offset, into) => {
    const range = bytes.subarray(offset, offset + into.length);
    into.set(range);
    return Promise.resolve(range.length);
  },
});

const sources: [string, () => ZipSource][] = [["bytes", () => zip], ["a Blob", () => new Blob([zip])], ["a reader of ranges", () => rangesOf(zip)]];

const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);

/** Every piece a BYOB reader of `buffer` bytes gets, copied, and the buffers they came in. */
async function readInto(stream: ReadableStream<Uint8Array>, size: number, buffer: number): Promise<{ bytes: Uint8Array; buffers: Set<number> }> {
  const out = new Uint8Array(size);
  const buffers = new Set<number>();
  let at = 0;
  for await (const piece of piecesInto(stream, size, buffer)) {
    buffers.add(piece.buffer.byteLength);
    out.set(piece, at);
    at += piece.length;
  }
  return { bytes: out, buffers };
}

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("ZipDirectory.stream", () => {
  for (const [name, source] of sources) {
    it(`gives each entry's bytes to a plain reader and into a reader's own buffer, from ${name}`, async () => {
      const directory = await ZipDirectory.open(source(), limits);
      for (const [entry, content] of [["images/a.png", image], ["notes.txt", text], ["images/empty.png", new Uint8Array(0)]] as const) {
        const found = directory.entries.get(entry)!;
        expect(same(await streamBytes(await directory.stream(found)), content)).toBe(true);
        const byob = await readInto(await directory.stream(found), content.length, 4096);
        expect(same(byob.bytes, content)).toBe(true);
        // Every piece landed in the reader's one buffer of 4096 bytes.
        if (content.length > 0) expect([...byob.buffers]).toEqual([4096]);
      }
    });
  }

  it("a stored entry whose bytes do not match its CRC-32 errors the stream before its last bytes, and a file store keeps nothing of it", async () => {
    const damaged = new Uint8Array(zip);
    const at = Buffer.from(zip).indexOf(Buffer.from(image.subarray(0, 64))) + 500_000;
    damaged[at] = damaged[at]! ^ 1;
    const directory = await ZipDirectory.open(rangesOf(damaged), limits);
    const entry = directory.entries.get("images/a.png")!;
    // A plain reader gets pieces, but never all the bytes: the stream errors instead of ending.
    const reader = (await directory.stream(entry)).getReader();
    let received = 0;
    const failure = await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return null;
        received += value.length;
      }
    })().catch((err: unknown) => err);
    expect(String(failure)).toMatch(/The archive entry "images\/a\.png" is damaged \(its CRC-32 does not match\)/);
    expect(received).toBeLessThan(image.length);

    const dir = await mkdtemp(join(tmpdir(), "fa-zip-stream-"));
    dirs.push(dir);
    const store = createFileBlobStore(dir);
    await expect(store.putStream!("images/copy", entry.size, await directory.stream(entry))).rejects.toThrow(/is damaged/);
    expect(await store.has("images/copy")).toBe(false);
    // No temporary file is left beside it either.
    expect(await readdir(join(dir, "images")).catch(() => [])).toEqual([]);
  });

  it("an import whose package changes after it was checked stores none of its images", async () => {
    const seeded = await seedCase();
    const exported = await streamBytes(exportCaseZip(seeded.store, ANALYST, CASE));
    const before = await storedImageIds(seeded.ports);
    // The bytes of the last image change once the package was checked and images are being stored.
    const directory = await ZipDirectory.open(exported, limits);
    const last = [...directory.entries.values()].filter((entry) => entry.name.startsWith("images/")).at(-1)!;
    const target = last.localOffset + 30 + last.nameBytes.length + 50;
    let storing = false;
    const changing: ArchiveReader = {
      size: exported.length,
      read(offset, into) {
        const range = exported.subarray(offset, offset + into.length);
        into.set(range);
        if (storing && offset <= target && target < offset + range.length) into[target - offset] = into[target - offset]! ^ 1;
        return Promise.resolve(range.length);
      },
    };
    const stored: number[] = [];
    const onProgress = ({ stage, done }: { stage: string; done: number }) => {
      if (stage !== "images") return;
      storing = true;
      stored.push(done);
    };
    const result = await importCase(seeded.store, changing, REVIEWER, { onProgress });
    expect(result.success).toBe(false);
    // It passed the check; the first images were stored, then taken away again.
    expect(stored).toEqual([0, 1, 2]);
    expect(result.errors?.join(" ")).toMatch(/is damaged \(its CRC-32 does not match\)/);
    expect(await storedImageIds(seeded.ports)).toEqual(before);
    expect(await readJson(seeded.ports, storageKeys.case(REVIEWER, CASE))).toBeNull();
  });
});
