/**
 * @module
 * Saving a pdf-lib document with its streams compressed by the runtime's own zlib
 * (`CompressionStream("deflate")`, RFC 1950 as PDF's FlateDecode reads it). pdf-lib deflates
 * each font subset, ToUnicode map and page content stream with pako, JavaScript that runs
 * interpreted, and slowly, in an isolate that has not rendered before; so it is done here
 * before `save`, which then finds only raw streams. Object streams are left out for the same
 * reason: their dictionaries are a few KB uncompressed.
 */
import { type PDFDocument, PDFFlateStream, PDFName, PDFRawStream, type PDFRef } from "pdf-lib";
import type { Bytes } from "../ports.ts";

const FLATE = PDFName.of("FlateDecode");
const FILTER = PDFName.of("Filter");

async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const compressed = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(compressed).arrayBuffer());
}

/** The serialized document; every stream pdf-lib would deflate is deflated natively. */
export async function saveWithNativeFlate(doc: PDFDocument): Promise<Bytes> {
  // Font subsets and images are written into the document when it is flushed.
  await doc.flush();
  const pending: [PDFRef, PDFFlateStream][] = [];
  for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
    // A flate stream with the filter set is one pdf-lib would encode on save.
    if (object instanceof PDFFlateStream && object.dict.get(FILTER) === FLATE) pending.push([ref, object]);
  }
  const compressed = await Promise.all(pending.map(([, stream]) => deflate(stream.getUnencodedContents())));
  pending.forEach(([ref, stream], i) => doc.context.assign(ref, PDFRawStream.of(stream.dict, compressed[i]!)));
  // All objects in one go: pdf-lib otherwise yields to the event loop every 50 objects.
  return (await doc.save({ useObjectStreams: false, objectsPerTick: Number.POSITIVE_INFINITY })) as Bytes;
}
