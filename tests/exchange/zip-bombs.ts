/**
 * Hostile archives, built with fflate and small on disk: deflate streams of many megabytes of
 * zeros (made once per megabyte and repeated), entries whose declared sizes lie, and a way to
 * watch how much of an archive a reader takes and how high the process's memory peaks.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Deflate, Zip, type ZipInputFile } from "fflate";
import { crc32 } from "../../src/core/encoding/crc32.ts";

const MIB = 1024 * 1024;

/** The deflate stream of `megabytes` MiB of zeros (about 1 KB per MiB) and their CRC-32. */
export function zeros(megabytes: number): { deflated: Uint8Array<ArrayBuffer>; size: number; crc: number } {
  const block: Uint8Array[] = [];
  const deflater = new Deflate({ level: 6 }, (chunk) => block.push(chunk));
  const mib = new Uint8Array(MIB);
  deflater.push(mib);
  deflater.flush(true); // byte-aligned and not final: the block can be repeated
  const end: Uint8Array[] = [];
  new Deflate((chunk) => end.push(chunk)).push(new Uint8Array(0), true);
  const parts = [...Array.from({ length: megabytes }, () => block).flat(), ...end];
  let crc = 0;
  for (let i = 0; i < megabytes; i++) crc = crc32(mib, crc);
  return { deflated: concat(parts), size: megabytes * MIB, crc };
}

/** An entry given to fflate's Zip as it is: method, declared size and CRC are ours to choose. */
export interface RawEntry {
  name: string;
  /** 0 stored, 8 deflated. */
  compression: number;
  /** Bytes as they go into the archive. */
  data: Uint8Array<ArrayBuffer>;
  /** The size the central directory declares. */
  size: number;
  crc: number;
}

/** A ZIP of plain files (stored) and raw entries, in that order; names may repeat. */
export function buildZip(files: Record<string, Uint8Array>, raw: RawEntry[] = []): Uint8Array<ArrayBuffer> {
  const parts: Uint8Array[] = [];
  const zip = new Zip((err, chunk) => {
    if (err) throw err;
    parts.push(chunk);
  });
  const entries: RawEntry[] = [
    ...Object.entries(files).map(([name, data]) => ({ name, compression: 0, data: new Uint8Array(data), size: data.length, crc: crc32(data) })),
    ...raw,
  ];
  for (const entry of entries) {
    const file: ZipInputFile = { filename: entry.name, compression: entry.compression, size: entry.size, crc: entry.crc, terminate: () => {} };
    zip.add(file);
    file.ondata!(null, entry.data, true);
  }
  zip.end();
  return concat(parts);
}

export function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** A Blob that counts the bytes read through it. */
export class CountingBlob extends Blob {
  read = 0;

  override slice(start?: number, end?: number, contentType?: string): Blob {
    const part = super.slice(start, end, contentType);
    this.read += part.size;
    return part;
  }
}

/** Resets the process's peak RSS to its current RSS where Linux allows it; answers whether it did. */
export function resetPeakRss(): boolean {
  try {
    writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch {
    return false;
  }
}

/** The process's peak resident memory (VmHWM) in bytes, or null off Linux. */
export function peakRss(status?: string): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(status ?? readFileSync("/proc/self/status", "utf8"));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}
