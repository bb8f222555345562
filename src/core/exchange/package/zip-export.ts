/**
 * @module
 * The single-case ZIP (docs/exchange.md#zip-package), built as a stream with fflate's streaming `Zip`:
 * the data file, then each image read, hashed and handed on before the next is read, then
 * README.txt, READ_ONLY_INSTRUCTIONS.txt and FORENSIC_MANIFEST.json (signed when a signer is
 * given). Images are stored, text is deflated. Memory holds one image at a time, so it is
 * bounded by the largest image, not the case. Output goes to a `ReadableStream` that produces
 * only as fast as it is read, or to a chunk callback that is awaited.
 */
import { type AsyncFlateStreamHandler, strToU8, Zip, ZipDeflate, type ZipInputFile } from "fflate";
import { crc32 } from "../../encoding/crc32.ts";
import { streamOf } from "../../storage/byte-stream.ts";
import { collectCaseExport, type CaseExportOptions, formatExportJson } from "../case-export.ts";
import { readmeText, readOnlyInstructionsText } from "./archive-texts.ts";
import { sha256Hex } from "../../encoding/digest.ts";
import { ExchangeError, messageOf } from "../exchange-error.ts";
import { recordAudit } from "../exchange-audit.ts";
import { buildManifest, dataEntryName, formatManifest, IMAGES_FOLDER, imageEntryName, MANIFEST_ENTRY } from "./manifest.ts";
import type { ForensicManifest } from "../shapes.ts";
import { type ManifestSigner, signManifestHash } from "./signature.ts";
import type { ExchangeStore } from "../sources.ts";

/** Options of a ZIP export. */
export interface CaseZipOptions extends CaseExportOptions {
  /** Signs the manifest (docs/exchange.md#signatures); unsigned without it. */
  signer?: ManifestSigner | undefined;
  /** Name recorded in the audit entry (default `{case}-export.zip`). */
  fileName?: string | undefined;
  /**
   * A native CRC-32 where the runtime has one (zlib's `crc32` in Node, Bun and Deno, passed in by the adapter),
   * called as `crc32(chunk, previous)`; default: this module's own, in JavaScript.
   */
  crc32?: ((chunk: Uint8Array, previous: number) => number) | undefined;
}

/** What a finished ZIP export wrote. */
export interface CaseZipSummary {
  /** The case number. */
  caseNumber: string;
  /** Bytes of the archive. */
  bytes: number;
  /** Images written. */
  images: number;
  /** The manifest written (with its signature when signed). */
  manifest: ForensicManifest;
}

const TEXT_LEVEL = 6;
/** Small chunks (entry headers, data descriptors) that may wait beside the largest one. */
const WRITE_SLACK = 64 * 1024;

/**
 * A stored (not deflated) entry: fflate's `ZipPassThrough` with a faster CRC. The bytes are
 * handed to the archive as they are, never copied.
 */
class StoredEntry implements ZipInputFile {
  readonly filename: string;
  readonly compression = 0;
  readonly mtime: Date;
  readonly #checksum: (chunk: Uint8Array, previous: number) => number;
  size = 0;
  crc = 0;
  ondata?: AsyncFlateStreamHandler;

  constructor(filename: string, mtime: Date, checksum: (chunk: Uint8Array, previous: number) => number) {
    this.filename = filename;
    this.mtime = mtime;
    this.#checksum = checksum;
  }

  push(chunk: Uint8Array, final: boolean): void {
    this.crc = this.#checksum(chunk, this.crc) >>> 0;
    this.size += chunk.length;
    this.ondata!(null, chunk as Uint8Array<ArrayBuffer>, final);
  }
}

/** The chunks of the archive, produced as they are asked for; the summary is filled at the end. */
async function* archiveChunks(
  store: ExchangeStore,
  userUid: string,
  caseNumber: string,
  options: CaseZipOptions,
  summary: CaseZipSummary,
): AsyncGenerator<Uint8Array, void, undefined> {
  const pending: Uint8Array[] = [];
  let failure: Error | null = null;
  const zip = new Zip((err, chunk) => {
    if (err) failure = err;
    else pending.push(chunk);
  });
  function* drain(): Generator<Uint8Array, void, undefined> {
    if (failure !== null) throw failure;
    while (pending.length > 0) {
      const chunk = pending.shift()!;
      summary.bytes += chunk.length;
      yield chunk;
    }
  }

  const data = await collectCaseExport(store, userUid, caseNumber, options);
  summary.caseNumber = data.metadata.caseNumber;
  const mtime = new Date(data.metadata.exportDate);
  const addText = (name: string, text: string) => {
    const entry = new ZipDeflate(name, { level: TEXT_LEVEL });
    entry.mtime = mtime;
    zip.add(entry);
    entry.push(strToU8(text), true);
  };

  const dataBytes = strToU8(formatExportJson(data));
  const dataHash = await sha256Hex(dataBytes);
  const dataEntry = new ZipDeflate(dataEntryName(data.metadata.caseNumber), { level: TEXT_LEVEL });
  dataEntry.mtime = mtime;
  zip.add(dataEntry);
  dataEntry.push(dataBytes, true);
  yield* drain();

  const imageHashes: Record<string, string> = {};
  const total = data.files.length;
  options.onProgress?.({ phase: "images", done: 0, total });
  // The next image is read while this one is hashed (web crypto, off the main thread where
  // the runtime has one) and checksummed for the archive (here): two images in memory at most.
  const read = (index: number): Promise<Uint8Array | null> | null => {
    const file = data.files[index];
    if (file === undefined) return null;
    const reading = store.readImage(file.fileData.id);
    reading.catch(() => {}); // awaited below; this only keeps an abandoned read from being "unhandled"
    return reading;
  };
  let next = read(0);
  for (const [index, file] of data.files.entries()) {
    const name = imageEntryName(file.fileData);
    if (Object.hasOwn(imageHashes, name)) throw new ExchangeError("VALIDATION_ERROR", `Two files of case ${caseNumber} have the image name ${name}`);
    const bytes = await next;
    next = read(index + 1);
    if (bytes === null || bytes === undefined) {
      throw new ExchangeError("NOT_FOUND", `The image ${file.fileData.id} of ${file.fileData.originalFilename} (case ${caseNumber}) was not found`);
    }
    const hashing = sha256Hex(bytes);
    const entry = new StoredEntry(`${IMAGES_FOLDER}${name}`, mtime, options.crc32 ?? crc32);
    zip.add(entry);
    entry.push(bytes, true);
    imageHashes[name] = await hashing;
    yield* drain();
    summary.images++;
    options.onProgress?.({ phase: "images", done: index + 1, total });
  }

  options.onProgress?.({ phase: "hashing", done: 0, total: 1 });
  const manifest = await buildManifest(dataHash, imageHashes, data.metadata.exportDate);
  if (options.signer !== undefined) manifest.signature = await signManifestHash(manifest.manifestHash, options.signer);
  summary.manifest = manifest;
  options.onProgress?.({ phase: "hashing", done: 1, total: 1 });

  options.onProgress?.({ phase: "writing", done: 0, total: 1 });
  addText("README.txt", readmeText(data, manifest.signature !== undefined));
  addText("READ_ONLY_INSTRUCTIONS.txt", readOnlyInstructionsText(data));
  addText(MANIFEST_ENTRY, formatManifest(manifest));
  zip.end();
  yield* drain();
  options.onProgress?.({ phase: "writing", done: 1, total: 1 });
}

/** Runs the archive, then writes the audit entry of how it ended. */
async function* auditedArchive(
  store: ExchangeStore,
  userUid: string,
  caseNumber: string,
  options: CaseZipOptions,
  summary: CaseZipSummary,
): AsyncGenerator<Uint8Array, void, undefined> {
  const startedAt = store.now();
  const audit = (result: "success" | "failure", errors: string[]) =>
    recordAudit(store, {
      userUid,
      action: "case-export",
      result,
      details: { caseNumber, fileName: options.fileName ?? `${caseNumber}-export.zip`, fileType: "zip", validationErrors: errors },
      startedAt,
      bytes: summary.bytes,
    });
  let outcome: "success" | "failure" | null = null;
  try {
    yield* archiveChunks(store, userUid, caseNumber, options, summary);
    outcome = "success";
    await audit("success", []);
  } catch (err) {
    outcome = "failure";
    await audit("failure", [messageOf(err)]);
    throw err;
  } finally {
    // A reader that stops reading (a cancelled stream) ends the generator here.
    if (outcome === null) await audit("failure", ["The export was cancelled before it was complete"]);
  }
}

const emptySummary = (caseNumber: string): CaseZipSummary => ({
  caseNumber,
  bytes: 0,
  images: 0,
  manifest: { dataHash: "", imageHashes: {}, manifestHash: "", totalFiles: 0, createdAt: "" },
});

/**
 * The ZIP export of a case as a stream of bytes. Nothing is read before the stream is read;
 * an error (a missing case or image, a failing store) errors the stream.
 *
 * @example
 * ```ts
 * const stream = exportCaseZip(store, "uid-1", "CASE-1", { onProgress: console.log });
 * await stream.pipeTo(fileWritableStream);
 * ```
 */
export function exportCaseZip(store: ExchangeStore, userUid: string, caseNumber: string, options: CaseZipOptions = {}): ReadableStream<Uint8Array> {
  return streamOf(auditedArchive(store, userUid, caseNumber, options, emptySummary(caseNumber)));
}

/**
 * The ZIP export of a case, handed chunk by chunk to `write` (awaited before the next image
 * is read). Answers what was written.
 */
export async function writeCaseZip(
  store: ExchangeStore,
  userUid: string,
  caseNumber: string,
  write: (chunk: Uint8Array) => void | Promise<void>,
  options: CaseZipOptions = {},
): Promise<CaseZipSummary> {
  const summary = emptySummary(caseNumber);
  // Writes run in order, one at a time, while the next image is read and hashed: at most the
  // largest chunk (plus small headers) waits to be written, so memory stays bounded.
  let writing: Promise<void> = Promise.resolve();
  let unwritten = 0;
  let largest = 0;
  for await (const chunk of auditedArchive(store, userUid, caseNumber, options, summary)) {
    largest = Math.max(largest, chunk.length);
    if (unwritten + chunk.length > largest + WRITE_SLACK) await writing;
    unwritten += chunk.length;
    writing = writing.then(async () => {
      await write(chunk);
      unwritten -= chunk.length;
    });
    writing.catch(() => {}); // a failed write is thrown by the next await of `writing`
  }
  await writing;
  return summary;
}
