/**
 * @module
 * Audit heads on disk (docs/storage.md#audit-heads-on-disk). A head is rewritten by every audit
 * append; a temporary file renamed over it cost about 0.3 ms on ext4 (a rename over a file
 * starts its writeback) and, with `FSYNC=audit`, a second and third flush (the file, then its
 * folder). So a head file holds two slots of equal size written in place by turns: each slot
 * starts with a header naming its generation, its length and a CRC-32 of both and its bytes.
 * The current head is the valid slot of the higher generation; a torn write spoils only the
 * slot being written, and the other one, the head before, is read instead. One positioned
 * write (and one data sync) per append, no rename, no folder sync. A head file in the whole
 * form (heads written before, or by `put`) is read as it is and becomes slotted on its next update.
 */
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import type { Bytes, UpdateOptions } from "../../../core/ports.ts";
import * as zlib from "node:zlib";
import { crc32 as crc32Js } from "../../../core/encoding/crc32.ts";
import { descriptors, type DocumentFiles, isAbsent } from "./file-driver.ts";
import { sameBytes } from "../../../core/encoding/same-bytes.ts";
import type { DeferredSyncs } from "./deferred-syncs.ts";

/** The keys kept as slotted files: the audit store's heads (storageKeys.auditHead). */
export const isHeadKey = (key: string): boolean => key.startsWith("audit-heads/");

/** Every slot begins with this: `fa-head-slot {generation: 16 hex} {length: 8 hex} {crc32: 8 hex}\n`. */
const MAGIC = "fa-head-slot ";
/** The header's length in bytes. */
export const SLOT_HEADER_BYTES = MAGIC.length + 16 + 1 + 8 + 1 + 8 + 1;
const MIN_SLOT_BYTES = 4_096;
// node:zlib's native CRC-32 (Node 20.15+, Bun, Deno; the same values as the core's) where there is one.
const crc32: (bytes: Uint8Array, previous?: number) => number = (zlib as { crc32?: typeof zlib.crc32 }).crc32 ?? crc32Js;
const encoder = new TextEncoder();

/** A slotted head file read back. */
interface Slots {
  /** The bytes of each slot (the file is two of them). */
  slotBytes: number;
  /** The slot holding the current head; undefined when neither slot is valid. */
  active: 0 | 1 | undefined;
  /** Its generation (0 when none is valid). */
  generation: number;
  /** Its head's bytes. */
  value: Bytes | undefined;
}

const hex = (value: number, digits: number): string => value.toString(16).padStart(digits, "0");

// Where the header's generation and length start, and their bytes ("{16 hex} {8 hex}"): what the CRC covers before the head.
const COUNTED_AT = MAGIC.length;
const COUNTED_BYTES = 16 + 1 + 8;

/**
 * One slot: its header then the head's bytes, written into one buffer (no copies of the header
 * text); the CRC-32 runs over the header's generation and length as written, then the head.
 */
export function encodeSlot(generation: number, value: Uint8Array): Uint8Array {
  const slot = new Uint8Array(SLOT_HEADER_BYTES + value.length);
  encoder.encodeInto(`${MAGIC}${hex(generation, 16)} ${hex(value.length, 8)} `, slot);
  slot.set(value, SLOT_HEADER_BYTES);
  const crc = crc32(value, crc32(slot.subarray(COUNTED_AT, COUNTED_AT + COUNTED_BYTES)));
  encoder.encodeInto(`${hex(crc, 8)}\n`, slot.subarray(COUNTED_AT + COUNTED_BYTES + 1));
  return slot;
}

const MAGIC_BYTES = encoder.encode(MAGIC);
const SPACE = 0x20;
const NEWLINE = 0x0a;

/** Whether `bytes` hold the slot magic at `at`. */
function hasMagic(bytes: Uint8Array, at: number): boolean {
  if (at + SLOT_HEADER_BYTES > bytes.length) return false;
  for (let i = 0; i < MAGIC_BYTES.length; i++) if (bytes[at + i] !== MAGIC_BYTES[i]) return false;
  return true;
}

/** The value of `digits` lower-case hex digits at `at`, or -1 when one is not (read byte by byte: no text decoded per read). */
function hexAt(bytes: Uint8Array, at: number, digits: number): number {
  let value = 0;
  for (let i = at; i < at + digits; i++) {
    const c = bytes[i]!;
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (digit === -1) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * The header of slot `at` of `bytes` when it is one (`fa-head-slot {16 hex} {8 hex} {8 hex}\n`),
 * its CRC-32 not yet checked.
 */
function slotHeader(bytes: Uint8Array, at: number, slotBytes: number): { at: number; generation: number; length: number; crc: number } | undefined {
  if (!hasMagic(bytes, at)) return undefined;
  const g = at + MAGIC.length;
  if (bytes[g + 16] !== SPACE || bytes[g + 25] !== SPACE || bytes[g + 34] !== NEWLINE) return undefined;
  const generation = hexAt(bytes, g, 16);
  const length = hexAt(bytes, g + 17, 8);
  const crc = hexAt(bytes, g + 26, 8);
  if (generation === -1 || length === -1 || crc === -1) return undefined;
  if (!Number.isSafeInteger(generation) || SLOT_HEADER_BYTES + length > slotBytes) return undefined;
  return { at, generation, length, crc };
}

/** The head's bytes in the slot a header describes, or undefined when its CRC-32 does not match them. */
function slotValue(bytes: Uint8Array, header: { at: number; generation: number; length: number; crc: number }): Bytes | undefined {
  const value = new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset + header.at + SLOT_HEADER_BYTES, header.length);
  // The header matched its pattern: its generation and length bytes are the ones encodeSlot wrote.
  const counted = bytes.subarray(header.at + COUNTED_AT, header.at + COUNTED_AT + COUNTED_BYTES);
  return crc32(value, crc32(counted)) === header.crc ? value : undefined;
}

/** The slots of a head file; undefined when it is in the whole form (a head's bytes as they are). */
export function readSlots(bytes: Uint8Array): Slots | undefined {
  const slotBytes = bytes.length / 2;
  if (!Number.isInteger(slotBytes) || slotBytes < SLOT_HEADER_BYTES) return undefined;
  // Slot 0 is written when the file is made, and a torn write leaves its first bytes as they were.
  if (!hasMagic(bytes, 0)) return undefined;
  // The current head is the valid slot of the higher generation: that one is checked first, the
  // other only when it is spoiled (a tie goes to slot 1, as the slot written last when both are).
  const headers = [slotHeader(bytes, 0, slotBytes), slotHeader(bytes, slotBytes, slotBytes)];
  const newerFirst = headers[0] !== undefined && (headers[1] === undefined || headers[0].generation > headers[1].generation);
  for (const active of newerFirst ? ([0, 1] as const) : ([1, 0] as const)) {
    const header = headers[active];
    const value = header === undefined ? undefined : slotValue(bytes, header);
    if (value !== undefined) return { slotBytes, active, generation: header!.generation, value };
  }
  return { slotBytes, active: undefined, generation: 0, value: undefined };
}

/** What a head file states: the current head's bytes (a slotted file whose slots are both spoiled: its bytes as they are). */
export function headOfFile(bytes: Bytes): Bytes {
  return readSlots(bytes)?.value ?? bytes;
}

/** A new slotted file holding `value` in slot 0, with room for heads twice its size. */
function slottedFile(generation: number, value: Uint8Array): Uint8Array {
  let slotBytes = MIN_SLOT_BYTES;
  while (slotBytes < 2 * (SLOT_HEADER_BYTES + value.length)) slotBytes *= 2;
  const file = new Uint8Array(2 * slotBytes);
  file.set(encodeSlot(generation, value));
  return file;
}

/** A head file opened for reading and writing. */
interface OpenHeadFile {
  /** The path opened. */
  path: string;
  /** Its bytes, read whole. */
  readWhole(): Bytes;
  /** Whether its current slot's header is still `known`'s (read without the head's bytes). */
  hasHeader(known: KnownSlots): boolean;
  /** Writes `bytes` at `position` and, with sync, data-syncs the file. */
  writeAt(bytes: Uint8Array, position: number): Promise<void>;
  close(): void;
}

/**
 * A slotted head file as this process last wrote it: its current slot's header as on
 * disk and the head. While that header is unchanged (generation, length and CRC-32), so is
 * the head: the next update reads its 48 bytes instead of the file, and the CRC-32 over the
 * head is not recomputed. A file put back, rewritten or replaced has another header there (a
 * slot of the same generation, length and CRC is that head); the other slot, older, is
 * overwritten by the next update either way.
 */
interface KnownSlots {
  header: Uint8Array;
  slots: Slots & { active: 0 | 1; value: Bytes };
}
const MAX_KNOWN_HEADS = 10_000;
// Where a header is read into (synchronously, so one buffer serves every update).
const headerScratch = new Uint8Array(SLOT_HEADER_BYTES);

// A head file's usual size (two slots of 4 KiB) and one byte, so its end is found without growing the buffer.
const FIRST_READ_BYTES = 2 * MIN_SLOT_BYTES + 1;

/**
 * The whole file open at `fd`, read in synchronous calls until its end, without an fstat: on
 * Linux 6.13+ a stat of the file makes its next write take a fine-grained ctime, so the write
 * dirties the inode and the head's data sync then cost about 0.05 ms more (measured on ext4).
 */
function readWhole(fd: number): Bytes {
  let bytes = new Uint8Array(FIRST_READ_BYTES);
  let filled = 0;
  for (;;) {
    if (filled === bytes.length) {
      const larger = new Uint8Array(bytes.length * 2);
      larger.set(bytes);
      bytes = larger;
    }
    const read = readSync(fd, bytes, filled, bytes.length - filled, filled);
    if (read === 0) return bytes.subarray(0, filled);
    filled += read;
  }
}

/**
 * Opens the first of `paths` that is a file; null when none is. Opened, read, written and
 * closed in synchronous calls (microseconds from the page cache, less than a thread-pool round
 * trip); with sync, the data sync waits for the disk off the event loop.
 */
function openHeadFile(paths: readonly string[], sync: boolean, deferred: DeferredSyncs | undefined): OpenHeadFile | null {
  for (const path of paths) {
    let fd: number;
    try {
      fd = openSync(path, "r+");
    } catch (err) {
      if (isAbsent(err)) continue;
      throw err;
    }
    try {
      return {
        path,
        readWhole: () => readWhole(fd),
        hasHeader: (known) => {
          const at = known.slots.active * known.slots.slotBytes;
          let read = 0;
          for (let n = -1; read < SLOT_HEADER_BYTES && n !== 0; read += n) n = readSync(fd, headerScratch, read, SLOT_HEADER_BYTES - read, at + read);
          return read === SLOT_HEADER_BYTES && sameBytes(headerScratch, known.header);
        },
        writeAt: async (data, position) => {
          for (let done = 0; done < data.length;) done += writeSync(fd, data, done, data.length - done, position + done);
          // The head only: the days it holds entries of are flushed apart (core/audit/chain.ts), not beside every head.
          if (sync) await (deferred === undefined ? descriptors.dataSync(fd) : deferred.syncNow(fd));
        },
        close: () => closeSync(fd),
      };
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }
  return null;
}

/**
 * Reads and updates the head files of `files`; `sync` data-syncs each write before it resolves.
 * No head is written once a data sync of `deferred` failed (deferred-syncs.ts).
 */
export function headFiles(files: DocumentFiles, sync: boolean, deferred?: DeferredSyncs) {
  // path -> its slots as last written by this process.
  const known = new Map<string, KnownSlots>();
  const remember = (path: string, slots: KnownSlots): void => {
    known.delete(path);
    known.set(path, slots);
    if (known.size > MAX_KNOWN_HEADS) known.delete(known.keys().next().value ?? path);
  };
  return {
    /** The current head's bytes, or null. */
    async read(key: string): Promise<Bytes | null> {
      const bytes = await files.read(key);
      return bytes === null ? null : headOfFile(new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.length));
    },
    /**
     * `BlobStore.update` of a head, under the document's lock: with `inPlace`, the next head in
     * the other slot; without (a rollback, re-sealing at rest), a new file, so no slot keeps the
     * head replaced.
     */
    update(key: string, change: (current: Bytes | null) => Uint8Array | Promise<Uint8Array>, options?: UpdateOptions): Promise<Uint8Array> {
      return files.exclusive(key, async (document) => {
        deferred?.throwIfFailed();
        let file = openHeadFile(document.paths, sync, deferred);
        const path = file?.path;
        try {
          const before = path === undefined ? undefined : known.get(path);
          let slots: Slots | undefined;
          let current: Bytes | null = null;
          if (file !== null && before !== undefined && file.hasHeader(before)) {
            slots = before.slots;
            current = before.slots.value;
          } else if (file !== null) {
            const bytes = file.readWhole();
            slots = readSlots(bytes);
            current = slots?.value ?? bytes;
          }
          const next = await change(current);
          if (current !== null && sameBytes(current, next)) return next;
          const inPlace = options?.inPlace === true || (typeof options?.inPlace === "function" && current !== null && options.inPlace(current));
          if (inPlace && file !== null && slots?.active !== undefined && SLOT_HEADER_BYTES + next.length <= slots.slotBytes) {
            const slot = encodeSlot(slots.generation + 1, next);
            const written = slots.active === 0 ? 1 : 0;
            await file.writeAt(slot, written * slots.slotBytes);
            remember(path!, {
              header: slot.slice(0, SLOT_HEADER_BYTES),
              slots: { slotBytes: slots.slotBytes, active: written, generation: slots.generation + 1, value: new Uint8Array(next.buffer as ArrayBuffer, next.byteOffset, next.length) },
            });
            return next;
          }
          // Not in place, no file yet, the whole form, or a head outgrowing its slots: a new file, renamed into place.
          file?.close();
          file = null;
          for (const candidate of document.paths) known.delete(candidate);
          await document.replace(slottedFile((slots?.generation ?? 0) + 1, next));
          return next;
        } catch (err) {
          // A write that failed midway may have left either slot as it was or not: read the file next time.
          for (const candidate of document.paths) known.delete(candidate);
          throw err;
        } finally {
          file?.close();
        }
      });
    },
  };
}
