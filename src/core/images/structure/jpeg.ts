/**
 * @module
 * JPEG structure (ITU T.81 annex B): the marker segments from SOI, each length inside the
 * file, a start-of-frame with its size before the first scan, the entropy-coded data of each
 * scan, and an end-of-image marker. Bytes after EOI (camera trailers) are left alone; nothing
 * is decoded.
 */
import { BrokenImage, ByteReader, type Dimensions } from "./reader.ts";

const SOI = 0xd8;
const EOI = 0xd9;
const SOS = 0xda;
const hex = (marker: number) => `FF${marker.toString(16).toUpperCase().padStart(2, "0")}`;
/** SOF0-3, 5-7, 9-11, 13-15: the frame headers (C4 is DHT, C8 reserved, CC is DAC). */
const isStartOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
/** Markers without a length: TEM and the restart markers. */
const isStandalone = (marker: number) => marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7);

/** The index just past a scan's entropy-coded data: the next marker that is not a stuffed byte or a restart. */
function endOfScan(bytes: Uint8Array, from: number): number {
  for (let at = bytes.indexOf(0xff, from); at >= 0; at = bytes.indexOf(0xff, at + 1)) {
    const next = bytes[at + 1];
    if (next === undefined) break;
    if (next !== 0x00 && next !== 0xff && !(next >= 0xd0 && next <= 0xd7)) return at;
  }
  throw new BrokenImage("the file ends inside its image data, without an end-of-image marker (EOI)");
}

/** The dimensions of a structurally sound JPEG; throws {@link BrokenImage} naming the failed check. */
export function checkJpeg(bytes: Uint8Array): Dimensions {
  const read = new ByteReader(bytes);
  let frame: Dimensions | undefined;
  let scans = 0;
  let at = 2;
  for (;;) {
    if (at >= read.length) throw new BrokenImage("it ends without an end-of-image marker (EOI)");
    if (read.u8(at, "a marker") !== 0xff) throw new BrokenImage(`byte ${at} should start a marker but is not 0xFF`);
    while (read.u8(at + 1, "a marker") === 0xff) at++; // fill bytes before a marker
    const marker = read.u8(at + 1, "a marker");
    at += 2;
    if (marker === EOI) break;
    if (isStandalone(marker)) continue;
    if (marker === SOI || marker === 0x00) throw new BrokenImage(`it has an invalid marker ${hex(marker)} at byte ${at - 2}`);
    const length = read.u16(at, `the length of segment ${hex(marker)}`);
    if (length < 2) throw new BrokenImage(`segment ${hex(marker)} at byte ${at - 2} declares a length of ${length}`);
    if (at + length > read.length) {
      throw new BrokenImage(`segment ${hex(marker)} at byte ${at - 2} declares ${length} bytes but the file ends ${read.length - at} bytes later`);
    }
    if (isStartOfFrame(marker) && frame === undefined) frame = readFrame(new ByteReader(bytes.subarray(at, at + length)), marker);
    if (marker === SOS) {
      if (frame === undefined) throw new BrokenImage("its image data (SOS) comes before any start-of-frame (SOF) segment");
      const components = read.u8(at + 2, "the scan header");
      if (components < 1 || components > 4 || length !== 6 + 2 * components) throw new BrokenImage(`its scan header at byte ${at - 2} is malformed`);
      scans++;
      at = endOfScan(bytes, at + length);
      continue;
    }
    at += length;
  }
  if (frame === undefined) throw new BrokenImage("it has no start-of-frame (SOF) segment, so no size");
  if (scans === 0) throw new BrokenImage("it has no image data (no SOS segment)");
  return frame;
}

/** A frame header: precision, height, width, then three bytes per component. */
function readFrame(segment: ByteReader, marker: number): Dimensions {
  const components = segment.u8(7, "the start-of-frame segment");
  if (components < 1 || components > 4 || segment.length !== 8 + 3 * components) {
    throw new BrokenImage(`its start-of-frame segment ${hex(marker)} is malformed`);
  }
  const height = segment.u16(3, "the start-of-frame segment");
  const width = segment.u16(5, "the start-of-frame segment");
  if (width === 0 || height === 0) throw new BrokenImage(`its start-of-frame gives a size of ${width} x ${height} pixels`);
  return { width, height };
}
