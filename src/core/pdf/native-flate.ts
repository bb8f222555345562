/**
 * @module
 * pdf-lib documents whose streams are compressed by the runtime's own zlib
 * (`CompressionStream("deflate")`, RFC 1950 as PDF's FlateDecode reads it) instead of pako,
 * JavaScript that runs interpreted, and slowly, in an isolate that has not rendered before.
 * pdf-lib deflates in two places: page content streams when it saves (`PDFFlateStream`), and
 * font subsets and ToUnicode maps at once when a font is embedded (`PDFContext.flateStream`).
 * {@link createNativeFlateDocument} keeps the latter raw, and {@link saveWithNativeFlate}
 * deflates both kinds natively before `save`, which then finds only finished streams. Object
 * streams are left out for the same reason: their dictionaries are a few KB uncompressed.
 */
import { PDFDocument, PDFFlateStream, PDFName, PDFRawStream, type PDFRef } from "pdf-lib";
import type { Bytes } from "../ports.ts";

const FLATE = PDFName.of("FlateDecode");
const FILTER = PDFName.of("Filter");

/** Streams pdf-lib asked to deflate on the spot, kept raw until {@link saveWithNativeFlate}. */
const deflateOnSave = new WeakSet<PDFRawStream>();

async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const compressed = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(compressed).arrayBuffer());
}

/**
 * A new document whose embedded fonts are deflated by {@link saveWithNativeFlate}, not by
 * pako when they are embedded (saved otherwise, they are stored uncompressed: still valid).
 */
export async function createNativeFlateDocument(): Promise<PDFDocument> {
  const doc = await PDFDocument.create();
  const context = doc.context;
  context.flateStream = (contents, dict = {}) => {
    const stream = context.stream(contents, dict);
    deflateOnSave.add(stream);
    return stream;
  };
  return doc;
}

/** The serialized document; every stream pdf-lib would deflate is deflated natively. */
export async function saveWithNativeFlate(doc: PDFDocument): Promise<Bytes> {
  // Font subsets and images are written into the document when it is flushed.
  await doc.flush();
  const pending: [PDFRef, PDFFlateStream | PDFRawStream, Uint8Array][] = [];
  for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
    // A flate stream with the filter set is one pdf-lib would encode on save.
    if (object instanceof PDFFlateStream && object.dict.get(FILTER) === FLATE) pending.push([ref, object, object.getUnencodedContents()]);
    else if (object instanceof PDFRawStream && deflateOnSave.has(object)) pending.push([ref, object, object.getContents()]);
  }
  const compressed = await Promise.all(pending.map(([, , contents]) => deflate(contents)));
  pending.forEach(([ref, stream], i) => {
    stream.dict.set(FILTER, FLATE);
    doc.context.assign(ref, PDFRawStream.of(stream.dict, compressed[i]!));
  });
  // All objects in one go: pdf-lib otherwise yields to the event loop every 50 objects.
  return (await doc.save({ useObjectStreams: false, objectsPerTick: Number.POSITIVE_INFINITY })) as Bytes;
}
