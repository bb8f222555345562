/**
 * @module
 * Reading an untrusted ZIP without letting it decide how much memory or time it takes
 *. The central directory is read and checked first: entry count,
 * names (no absolute paths, `..`, backslashes, control characters or duplicates), methods,
 * declared sizes, the compression ratio of each entry, the total that deflated entries would
 * inflate to, and that entries neither overlap nor leave the archive. An entry is read only
 * when asked, inflated in small steps with a running count that stops at its declared size,
 * so a header that understates a size cannot make it inflate further. The archive is bytes
 * in memory, a Blob or an {@link ArchiveReader} (a file on disk is read in ranges, never whole).
 */
import { Inflate, strFromU8 } from "fflate";
import { crc32 } from "../../encoding/crc32.ts";
import { ServiceError } from "../../errors.ts";
import { sameBytes } from "../../encoding/same-bytes.ts";
import { copiedStream } from "../../storage/byte-stream.ts";

/** Random access to an archive kept outside memory (a file), as positional file reads work. */
export interface ArchiveReader {
  /** The archive's size in bytes. */
  readonly size: number;
  /** Fills `into` with the bytes from `offset` on; answers how many it read (fewer only at the end). */
  read(offset: number, into: Uint8Array): Promise<number>;
}

/** Where the archive's bytes are: in memory, a Blob, or a reader of ranges. */
export type ZipSource = Uint8Array | Blob | ArchiveReader;

/** An archive that is not read, and why (the message says what is wrong with it). */
export class ZipRefusal extends ServiceError {
  /** Creates the refusal. */
  constructor(message: string) {
    super("invalid", message);
  }
}

/** What the archive may hold. */
export interface ZipLimits {
  /** Most entries (directory entries included). */
  maxEntries: number;
  /** Largest declared size of one entry. */
  maxEntryBytes: number;
  /** Most bytes all deflated entries together may inflate to. */
  maxInflatedBytes: number;
  /** Highest size / compressed size of a deflated entry above `ratioFloorBytes`. */
  maxRatio: number;
  /** Entries up to this size are not held to `maxRatio` (small text compresses well). */
  ratioFloorBytes: number;
  /** Largest central directory, in bytes. */
  maxDirectoryBytes: number;
}

/** One entry of the central directory. */
export interface ZipEntry {
  /** The entry's name, decoded. */
  readonly name: string;
  /** 0 stored, 8 deflated. */
  readonly method: 0 | 8;
  /** Bytes in the archive. */
  readonly compressedSize: number;
  /** Bytes once read, as declared. */
  readonly size: number;
  /** CRC-32 of the content, as declared. */
  readonly crc: number;
  readonly flags: number;
  readonly localOffset: number;
  readonly nameBytes: Uint8Array;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const ZIP64_MARK = 0xffffffff;
/** The EOCD record and the longest comment after it. */
const EOCD_SEARCH = 22 + 0xffff;
/** Archive bytes read at a time when inflating. */
const READ_STEP = 1024 * 1024;
/** Compressed bytes given to the inflater at a time: deflate expands at most ~1032:1, so one step yields at most ~16 MB. */
const INFLATE_STEP = 16 * 1024;

/** Content bytes per piece of {@link ZipDirectory.stream}. */
const STREAM_STEP = 256 * 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The archive's size in bytes. */
export function zipSourceSize(source: ZipSource): number {
  return source instanceof Uint8Array ? source.length : source.size;
}

/** The bytes from `start` to `end` (fewer at the end of the archive); read into `into` when given and the source needs a copy. */
async function readRange(source: ZipSource, start: number, end: number, into?: Uint8Array): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return source.subarray(start, end);
  if (source instanceof Blob) return new Uint8Array(await source.slice(start, end).arrayBuffer());
  const target = into?.subarray(0, Math.max(0, end - start)) ?? new Uint8Array(Math.max(0, end - start));
  return target.subarray(0, await source.read(start, target));
}

/** Fills `into` with the bytes from `start` on; how many (fewer at the end of the archive). */
async function readRangeInto(source: ZipSource, start: number, into: Uint8Array): Promise<number> {
  if (source instanceof Uint8Array) {
    const range = source.subarray(start, start + into.length);
    into.set(range);
    return range.length;
  }
  if (source instanceof Blob) {
    const range = new Uint8Array(await source.slice(start, start + into.length).arrayBuffer());
    into.set(range);
    return range.length;
  }
  return await source.read(start, into);
}

const u16 = (bytes: Uint8Array, at: number): number => bytes[at]! | (bytes[at + 1]! << 8);
const u32 = (bytes: Uint8Array, at: number): number => (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
const quoted = (name: string): string => JSON.stringify(name);
const damaged = (entry: ZipEntry): ZipRefusal => new ZipRefusal(`The archive entry ${quoted(entry.name)} is damaged (its CRC-32 does not match)`);

/** Why a name may not be used as a path, or null when it may. */
export function unsafeNameReason(name: string): string | null {
  if (name === "") return "it is empty";
  if (name.includes("\\")) return "it holds a backslash";
  for (const char of name) if (char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f) return "it holds a control character";
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return "it is an absolute path";
  const segments = (name.endsWith("/") ? name.slice(0, -1) : name).split("/");
  if (segments.includes("..")) return "it climbs out of its folder with ..";
  if (segments.some((segment) => segment === "" || segment === ".")) return "it has an empty or . segment";
  return null;
}

function decodeName(bytes: Uint8Array, flags: number): string {
  if ((flags & 0x800) === 0) return strFromU8(bytes, true); // no UTF-8 flag: Latin-1, as fflate reads it
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ZipRefusal(`The archive holds an entry name that is not valid UTF-8 (${quoted(strFromU8(bytes, true))})`);
  }
}

/** A ZIP whose central directory passed the checks; entries are read on demand. */
export class ZipDirectory {
  /** The entries by name, in central-directory order. */
  readonly entries: ReadonlyMap<string, ZipEntry>;
  /** The archive's size in bytes. */
  readonly size: number;
  readonly #source: ZipSource;
  /** Where each entry's bytes must end: the next entry's local header, or the directory. */
  readonly #limits: Map<ZipEntry, number>;
  #buffer = new Uint8Array(0);

  private constructor(source: ZipSource, entries: Map<string, ZipEntry>, limits: Map<ZipEntry, number>) {
    this.#source = source;
    this.entries = entries;
    this.size = zipSourceSize(source);
    this.#limits = limits;
  }

  /**
   * Reads and checks the central directory. Throws {@link ZipRefusal} when the archive is
   * not a ZIP this reader takes or breaks a limit; nothing is inflated.
   */
  static async open(source: ZipSource, limits: ZipLimits): Promise<ZipDirectory> {
    const size = zipSourceSize(source);
    const tailStart = Math.max(0, size - EOCD_SEARCH);
    const tail = await readRange(source, tailStart, size);
    let at = tail.length - 22;
    while (at >= 0 && u32(tail, at) !== EOCD) at--;
    if (at < 0) throw new ZipRefusal("The file is not a readable ZIP archive: it has no end of central directory record");
    const count = u16(tail, at + 10);
    const directorySize = u32(tail, at + 12);
    const directoryOffset = u32(tail, at + 16);
    if (count === 0xffff || directorySize === ZIP64_MARK || directoryOffset === ZIP64_MARK) throw new ZipRefusal("The archive is a ZIP64 archive, which a case package never is");
    if (u16(tail, at + 4) !== 0 || u16(tail, at + 6) !== 0 || u16(tail, at + 8) !== count) throw new ZipRefusal("The archive is split over several parts");
    if (count > limits.maxEntries) throw new ZipRefusal(`The archive holds ${count} entries; a case package may hold at most ${limits.maxEntries}`);
    const eocdOffset = tailStart + at;
    if (directoryOffset + directorySize > eocdOffset) throw new ZipRefusal("The file is not a readable ZIP archive: its central directory lies outside the file");
    if (directorySize > limits.maxDirectoryBytes) throw new ZipRefusal(`The archive's central directory is ${directorySize} bytes; at most ${limits.maxDirectoryBytes} are read`);
    const directory = await readRange(source, directoryOffset, directoryOffset + directorySize);
    const entries = new Map<string, ZipEntry>();
    let inflated = 0;
    let position = 0;
    for (let index = 0; index < count; index++) {
      if (position + 46 > directory.length || u32(directory, position) !== CENTRAL) {
        throw new ZipRefusal(`The file is not a readable ZIP archive: central directory record ${index + 1} of ${count} is damaged`);
      }
      const flags = u16(directory, position + 8);
      const method = u16(directory, position + 10);
      const nameLength = u16(directory, position + 28);
      const next = position + 46 + nameLength + u16(directory, position + 30) + u16(directory, position + 32);
      if (next > directory.length) throw new ZipRefusal(`The file is not a readable ZIP archive: central directory record ${index + 1} of ${count} is damaged`);
      const nameBytes = directory.slice(position + 46, position + 46 + nameLength);
      const name = decodeName(nameBytes, flags);
      const entry: ZipEntry = {
        name,
        method: method as 0 | 8,
        compressedSize: u32(directory, position + 20),
        size: u32(directory, position + 24),
        crc: u32(directory, position + 16),
        flags,
        localOffset: u32(directory, position + 42),
        nameBytes,
      };
      position = next;
      const unsafe = unsafeNameReason(name);
      if (unsafe !== null) throw new ZipRefusal(`The archive holds an unsafe entry name ${quoted(name)}: ${unsafe}`);
      if (entries.has(name)) throw new ZipRefusal(`The archive holds the entry ${quoted(name)} more than once`);
      if ((flags & 1) !== 0) throw new ZipRefusal(`The archive entry ${quoted(name)} is encrypted`);
      if (method !== 0 && method !== 8) throw new ZipRefusal(`The archive entry ${quoted(name)} uses compression method ${method}; only stored and deflated entries are read`);
      if (entry.size === ZIP64_MARK || entry.compressedSize === ZIP64_MARK || entry.localOffset === ZIP64_MARK) throw new ZipRefusal("The archive is a ZIP64 archive, which a case package never is");
      if (name.endsWith("/") && entry.size !== 0) throw new ZipRefusal(`The archive's folder entry ${quoted(name)} holds data`);
      if (method === 0 && entry.compressedSize !== entry.size) throw new ZipRefusal(`The stored archive entry ${quoted(name)} declares two different sizes (${entry.compressedSize} and ${entry.size} bytes)`);
      if (entry.size > limits.maxEntryBytes) throw new ZipRefusal(`The archive entry ${quoted(name)} declares ${entry.size} bytes; an entry may hold at most ${limits.maxEntryBytes}`);
      if (method === 8) {
        if (entry.size > limits.ratioFloorBytes && entry.size > entry.compressedSize * limits.maxRatio) {
          const ratio = Math.round(entry.size / Math.max(1, entry.compressedSize));
          throw new ZipRefusal(`The archive entry ${quoted(name)} would inflate ${ratio} times (${entry.compressedSize} to ${entry.size} bytes); at most ${limits.maxRatio} times is accepted`);
        }
        inflated += entry.size;
      }
      if (entry.localOffset + 30 + nameLength + entry.compressedSize > directoryOffset) throw new ZipRefusal(`The archive entry ${quoted(name)} lies outside the archive's data`);
      entries.set(name, entry);
    }
    if (inflated > limits.maxInflatedBytes) throw new ZipRefusal(`The archive's compressed entries would inflate to ${inflated} bytes in all; at most ${limits.maxInflatedBytes} are accepted`);
    // Entries that share bytes are how small archives are made to inflate many times over.
    const ordered = [...entries.values()].sort((a, b) => a.localOffset - b.localOffset);
    const ends = new Map<ZipEntry, number>();
    for (const [i, entry] of ordered.entries()) {
      const following = ordered[i + 1];
      const limit = following?.localOffset ?? directoryOffset;
      if (entry.localOffset + 30 + entry.nameBytes.length + entry.compressedSize > limit) {
        throw new ZipRefusal(`The archive entries ${quoted(entry.name)} and ${quoted(following?.name ?? "")} overlap`);
      }
      ends.set(entry, limit);
    }
    return new ZipDirectory(source, entries, ends);
  }

  /**
   * The entry's content. Inflates in small steps and stops as soon as the output passes the
   * declared size; refuses a local header that disagrees with the directory and content
   * whose size or CRC-32 is not the declared one. `"look"` answers bytes only valid until the
   * next `"look"` read (one buffer serves them all), for content that is checked and dropped.
   */
  async read(entry: ZipEntry, use: "keep" | "look" = "keep"): Promise<Uint8Array> {
    const { start, end } = await this.#contentRange(entry);
    const into = use === "look" ? this.#scratch(entry.size) : undefined;
    const stored = entry.method === 0 ? await readRange(this.#source, start, end, into) : undefined;
    // Kept bytes in memory are copied so they do not hold the caller's whole archive; others are new already.
    const copy = use === "keep" && this.#source instanceof Uint8Array;
    const content = stored === undefined ? await this.#inflate(entry, start, end, into) : copy ? stored.slice() : stored;
    if (crc32(content) !== entry.crc) throw damaged(entry);
    return content;
  }

  /**
   * The entry's content as a byte stream, checked as {@link ZipDirectory.read} checks it: the
   * stream errors, instead of ending, when the content is not the declared one, so a store
   * writing it keeps nothing. A reader that brings its own buffer (BYOB) has a stored entry read
   * straight into it; others get new pieces of at most {@link STREAM_STEP} bytes (a deflated
   * entry is inflated whole first). The local header is checked before this resolves.
   */
  async stream(entry: ZipEntry): Promise<ReadableStream<Uint8Array>> {
    const { start, end } = await this.#contentRange(entry);
    if (entry.method !== 0) return copiedStream(await this.read(entry), STREAM_STEP);
    const source = this.#source;
    let offset = start;
    let crc = 0;
    return new ReadableStream({
      type: "bytes",
      // Every pull then has a request to fill: the reader's own buffer, or a new one of this size.
      autoAllocateChunkSize: STREAM_STEP,
      start(controller) {
        if (start !== end) return;
        if (entry.crc !== 0) throw damaged(entry);
        controller.close();
      },
      async pull(controller) {
        const request = controller.byobRequest!;
        const view = request.view!;
        const into = new Uint8Array(view.buffer, view.byteOffset, Math.min(view.byteLength, end - offset));
        const count = await readRangeInto(source, offset, into);
        if (count === 0) throw damaged(entry);
        crc = crc32(into.subarray(0, count), crc);
        offset += count;
        // Checked before the last bytes are given: the stream errors rather than ends.
        if (offset === end && crc !== entry.crc) throw damaged(entry);
        request.respond(count);
        if (offset === end) controller.close();
      },
    });
  }

  /** Where the entry's content lies, once its local header agrees with the directory. */
  async #contentRange(entry: ZipEntry): Promise<{ start: number; end: number }> {
    const header = await readRange(this.#source, entry.localOffset, entry.localOffset + 30);
    if (header.length < 30 || u32(header, 0) !== LOCAL) throw new ZipRefusal(`The archive entry ${quoted(entry.name)} has no local header where the directory says`);
    const nameLength = u16(header, 26);
    const start = entry.localOffset + 30 + nameLength + u16(header, 28);
    const end = start + entry.compressedSize;
    const localName = await readRange(this.#source, entry.localOffset + 30, entry.localOffset + 30 + nameLength);
    const sizesInHeader = (u16(header, 6) & 8) === 0;
    if (
      u16(header, 8) !== entry.method || !sameBytes(localName, entry.nameBytes) || end > (this.#limits.get(entry) ?? 0) ||
      (sizesInHeader && (u32(header, 18) !== entry.compressedSize || u32(header, 22) !== entry.size))
    ) {
      throw new ZipRefusal(`The archive entry ${quoted(entry.name)} has a local header that disagrees with the central directory`);
    }
    return { start, end };
  }

  /** One buffer for bytes that are only looked at, so checking a case's images leaves no image-sized garbage. */
  #scratch(size: number): Uint8Array {
    if (this.#buffer.length < size) this.#buffer = new Uint8Array(size);
    return this.#buffer.subarray(0, size);
  }

  async #inflate(entry: ZipEntry, start: number, end: number, into: Uint8Array | undefined): Promise<Uint8Array> {
    const out = into ?? new Uint8Array(entry.size);
    let written = 0;
    let overflow = false;
    const inflater = new Inflate((chunk) => {
      if (overflow) return;
      if (written + chunk.length > entry.size) {
        overflow = true;
        return;
      }
      out.set(chunk, written);
      written += chunk.length;
    });
    try {
      for (let offset = start; offset < end && !overflow; offset += READ_STEP) {
        const block = await readRange(this.#source, offset, Math.min(end, offset + READ_STEP));
        for (let step = 0; step < block.length && !overflow; step += INFLATE_STEP) {
          inflater.push(block.subarray(step, step + INFLATE_STEP), offset + step + INFLATE_STEP >= end);
        }
      }
      if (start === end) inflater.push(new Uint8Array(0), true);
    } catch {
      if (!overflow) throw new ZipRefusal(`The archive entry ${quoted(entry.name)} is not valid deflate data`);
    }
    if (overflow) throw new ZipRefusal(`The archive entry ${quoted(entry.name)} inflates beyond its declared ${entry.size} bytes; reading stopped there`);
    if (written !== entry.size) throw new ZipRefusal(`The archive entry ${quoted(entry.name)} inflates to ${written} bytes, not the ${entry.size} it declares`);
    return out;
  }
}

