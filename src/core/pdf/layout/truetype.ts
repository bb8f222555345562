/**
 * @module
 * A TrueType reader and subsetter with just what the report needs of a font: the character
 * map, advance widths, the metrics of the PDF font descriptor, and a subset of the glyphs
 * used (with the components of composite glyphs) written as a TrueType file for the PDF. It
 * stands in for fontkit behind pdf-lib's `embedFont`: the report shapes nothing (it places
 * glyphs by their advance widths), and fontkit's shaping engines, Unicode tables and WOFF2
 * decoder were about 375 KiB gzipped of the PDF worker's bundle. Tables are read where they
 * lie; only the character map is decoded, once, on first use (under a millisecond).
 */

/** A glyph as pdf-lib reads it: its id, advance width (font units) and the text it prints. */
export interface TrueTypeGlyph {
  /** Glyph id in the font (0, `.notdef`, when the font lacks the character). */
  id: number;
  /** Advance width in font units. */
  advanceWidth: number;
  /** The code points the glyph stands for (its ToUnicode entry). */
  codePoints: number[];
}

interface Table {
  offset: number;
  length: number;
}

// Composite glyph component flags (TrueType 'glyf').
const ARG_1_AND_2_ARE_WORDS = 0x0001;
const WE_HAVE_A_SCALE = 0x0008;
const MORE_COMPONENTS = 0x0020;
const WE_HAVE_AN_X_AND_Y_SCALE = 0x0040;
const WE_HAVE_A_TWO_BY_TWO = 0x0080;

/** A parsed TrueType font, with the members pdf-lib's custom font embedder reads. */
export class TrueTypeFont {
  /** Font units per em. */
  readonly unitsPerEm: number;
  /** The PostScript name (name id 6), pdf-lib's base font name. */
  readonly postscriptName: string;
  /** Ascender (hhea), font units. */
  readonly ascent: number;
  /** Descender (hhea, negative), font units. */
  readonly descent: number;
  /** Cap height (OS/2 version 2 and later), font units. */
  readonly capHeight: number | undefined;
  /** x-height (OS/2 version 2 and later), font units. */
  readonly xHeight: number | undefined;
  /** Italic angle in degrees (post). */
  readonly italicAngle: number;
  /** The font's bounding box (head), font units. */
  readonly bbox: { minX: number; minY: number; maxX: number; maxY: number };
  /** The OS/2 fields pdf-lib's font flags read. */
  readonly "OS/2": { sFamilyClass: number };
  /** The post fields pdf-lib's font flags read. */
  readonly post: { isFixedPitch: boolean };
  /** The head fields pdf-lib's font flags read. */
  readonly head: { macStyle: { italic: boolean } };

  readonly #view: DataView;
  readonly #tables: ReadonlyMap<string, Table>;
  readonly #numGlyphs: number;
  readonly #numberOfHMetrics: number;
  readonly #longLoca: boolean;
  #cmap: Map<number, number> | undefined;

  /** Reads the table directory and the header tables of `bytes`, a TrueType (glyf) font. */
  constructor(readonly bytes: Uint8Array) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#view = view;
    if (view.getUint32(0) !== 0x00010000) throw new Error("not a TrueType font with glyf outlines");
    const tables = new Map<string, Table>();
    for (let i = 0, count = view.getUint16(4); i < count; i++) {
      const record = 12 + 16 * i;
      const tag = String.fromCharCode(bytes[record]!, bytes[record + 1]!, bytes[record + 2]!, bytes[record + 3]!);
      const table = { offset: view.getUint32(record + 8), length: view.getUint32(record + 12) };
      if (table.offset + table.length > bytes.length) throw new Error(`the font's ${tag} table lies outside the file`);
      tables.set(tag, table);
    }
    this.#tables = tables;
    const head = this.#table("head").offset;
    const hhea = this.#table("hhea").offset;
    this.unitsPerEm = view.getUint16(head + 18);
    this.bbox = { minX: view.getInt16(head + 36), minY: view.getInt16(head + 38), maxX: view.getInt16(head + 40), maxY: view.getInt16(head + 42) };
    this.head = { macStyle: { italic: (view.getUint16(head + 44) & 0x2) !== 0 } };
    this.#longLoca = view.getInt16(head + 50) === 1;
    this.ascent = view.getInt16(hhea + 4);
    this.descent = view.getInt16(hhea + 6);
    this.#numberOfHMetrics = view.getUint16(hhea + 34);
    this.#numGlyphs = view.getUint16(this.#table("maxp").offset + 4);
    const os2 = tables.get("OS/2");
    const os2Version = os2 === undefined ? 0 : view.getUint16(os2.offset);
    this["OS/2"] = { sFamilyClass: os2 === undefined ? 0 : view.getInt16(os2.offset + 30) };
    this.xHeight = os2 !== undefined && os2Version >= 2 ? view.getInt16(os2.offset + 86) : undefined;
    this.capHeight = os2 !== undefined && os2Version >= 2 ? view.getInt16(os2.offset + 88) : undefined;
    const post = tables.get("post");
    this.italicAngle = post === undefined ? 0 : view.getInt32(post.offset + 4) / 65536;
    this.post = { isFixedPitch: post !== undefined && view.getUint32(post.offset + 12) !== 0 };
    this.postscriptName = this.#name(6) ?? "Font";
  }

  #table(tag: string): Table {
    const table = this.#tables.get(tag);
    if (table === undefined) throw new Error(`the font has no ${tag} table`);
    return table;
  }

  /** A name record (Windows UTF-16 or Macintosh Roman, ASCII in practice). */
  #name(nameId: number): string | undefined {
    const table = this.#tables.get("name");
    if (table === undefined) return undefined;
    const view = this.#view;
    const strings = table.offset + view.getUint16(table.offset + 4);
    for (let i = 0, count = view.getUint16(table.offset + 2); i < count; i++) {
      const record = table.offset + 6 + 12 * i;
      const platform = view.getUint16(record);
      if (view.getUint16(record + 6) !== nameId || (platform !== 3 && platform !== 1)) continue;
      const length = view.getUint16(record + 8);
      const start = strings + view.getUint16(record + 10);
      let text = "";
      if (platform === 3) for (let at = start; at + 1 < start + length; at += 2) text += String.fromCharCode(view.getUint16(at));
      else for (let at = start; at < start + length; at++) text += String.fromCharCode(view.getUint8(at));
      return text;
    }
    return undefined;
  }

  /** The character map (Unicode to glyph id), decoded on first use from format 12 or 4. */
  #characterMap(): Map<number, number> {
    if (this.#cmap !== undefined) return this.#cmap;
    const view = this.#view;
    const cmap = this.#table("cmap").offset;
    let format4: number | undefined;
    let format12: number | undefined;
    for (let i = 0, count = view.getUint16(cmap + 2); i < count; i++) {
      const record = cmap + 4 + 8 * i;
      const platform = view.getUint16(record);
      const encoding = view.getUint16(record + 2);
      if (platform !== 0 && !(platform === 3 && (encoding === 1 || encoding === 10))) continue;
      const subtable = cmap + view.getUint32(record + 4);
      const format = view.getUint16(subtable);
      if (format === 12) format12 ??= subtable;
      if (format === 4) format4 ??= subtable;
    }
    const map = new Map<number, number>();
    if (format12 !== undefined) {
      for (let i = 0, groups = view.getUint32(format12 + 12); i < groups; i++) {
        const group = format12 + 16 + 12 * i;
        const first = view.getUint32(group);
        const last = view.getUint32(group + 4);
        const glyph = view.getUint32(group + 8);
        for (let c = first; c <= last; c++) map.set(c, glyph + c - first);
      }
    } else if (format4 !== undefined) {
      const segments = view.getUint16(format4 + 6) / 2;
      const ends = format4 + 14;
      const starts = ends + 2 * segments + 2;
      const deltas = starts + 2 * segments;
      const rangeOffsets = deltas + 2 * segments;
      for (let s = 0; s < segments; s++) {
        const first = view.getUint16(starts + 2 * s);
        const last = view.getUint16(ends + 2 * s);
        const delta = view.getUint16(deltas + 2 * s);
        const rangeOffset = view.getUint16(rangeOffsets + 2 * s);
        for (let c = first; c <= last && c !== 0xffff; c++) {
          let glyph = 0;
          if (rangeOffset === 0) glyph = (c + delta) & 0xffff;
          else {
            const indexed = view.getUint16(rangeOffsets + 2 * s + rangeOffset + 2 * (c - first));
            if (indexed !== 0) glyph = (indexed + delta) & 0xffff;
          }
          if (glyph !== 0) map.set(c, glyph);
        }
      }
    } else {
      throw new Error("the font has no Unicode character map");
    }
    this.#cmap = map;
    return map;
  }

  /** The glyph id of a code point; 0 (`.notdef`) when the font lacks it. */
  glyphIdOf(codePoint: number): number {
    return this.#characterMap().get(codePoint) ?? 0;
  }

  /** Whether the font has a glyph for `codePoint`. */
  hasGlyphForCodePoint(codePoint: number): boolean {
    return this.glyphIdOf(codePoint) !== 0;
  }

  /** The advance width of a glyph, in font units. */
  advanceWidthOf(glyphId: number): number {
    const hmtx = this.#table("hmtx").offset;
    return this.#view.getUint16(hmtx + 4 * Math.min(glyphId, this.#numberOfHMetrics - 1));
  }

  /** The left side bearing of a glyph, in font units. */
  leftSideBearingOf(glyphId: number): number {
    const hmtx = this.#table("hmtx").offset;
    if (glyphId < this.#numberOfHMetrics) return this.#view.getInt16(hmtx + 4 * glyphId + 2);
    return this.#view.getInt16(hmtx + 4 * this.#numberOfHMetrics + 2 * (glyphId - this.#numberOfHMetrics));
  }

  /**
   * One glyph per code point of `text`, by the character map alone (no shaping, no kerning).
   * A default-ignorable character (soft hyphen, zero-width space, bidi marks...) prints as
   * the space glyph, as shaping engines (HarfBuzz, fontkit) hide it.
   */
  layout(text: string): { glyphs: TrueTypeGlyph[] } {
    const glyphs: TrueTypeGlyph[] = [];
    for (const char of text) {
      let codePoint = char.codePointAt(0) ?? 0;
      if (isDefaultIgnorable(codePoint)) codePoint = 0x20;
      const id = this.glyphIdOf(codePoint);
      glyphs.push({ id, advanceWidth: this.advanceWidthOf(id), codePoints: [codePoint] });
    }
    return { glyphs };
  }

  /** The outline data of a glyph, as stored in 'glyf' (empty for a glyph without contours). */
  glyphData(glyphId: number): Uint8Array {
    if (glyphId < 0 || glyphId >= this.#numGlyphs) throw new Error(`no glyph ${glyphId} in the font`);
    const loca = this.#table("loca").offset;
    const view = this.#view;
    const [start, end] = this.#longLoca
      ? [view.getUint32(loca + 4 * glyphId), view.getUint32(loca + 4 * glyphId + 4)]
      : [view.getUint16(loca + 2 * glyphId) * 2, view.getUint16(loca + 2 * glyphId + 2) * 2];
    const glyf = this.#table("glyf");
    if (end < start || end > glyf.length) throw new Error(`glyph ${glyphId} lies outside the glyf table`);
    return this.bytes.subarray(glyf.offset + start, glyf.offset + end);
  }

  /** A copy of a whole table. */
  tableBytes(tag: string): Uint8Array {
    const table = this.#table(tag);
    return this.bytes.slice(table.offset, table.offset + table.length);
  }

  /** A new, empty subset of this font. */
  createSubset(): TrueTypeSubset {
    return new TrueTypeSubset(this);
  }
}

/** What pdf-lib reads a subset's bytes from: a stream-like emitter of one chunk. */
export interface SubsetStream {
  /** Registers a listener; data and end are emitted after the current task's listeners are on. */
  on(event: "data" | "end" | "error", listener: (bytes: Uint8Array) => void): SubsetStream;
}

/** The glyphs of a font that one PDF uses, renumbered from 1 (0 is `.notdef`). */
export class TrueTypeSubset {
  readonly #font: TrueTypeFont;
  readonly #glyphIds: number[] = [0];
  readonly #newIds = new Map<number, number>([[0, 0]]);

  /** A subset of `font` holding `.notdef` only. */
  constructor(font: TrueTypeFont) {
    this.#font = font;
  }

  /** Adds a glyph (if new) and returns its id in the subset. */
  includeGlyph(glyph: number | { id: number }): number {
    const id = typeof glyph === "number" ? glyph : glyph.id;
    let newId = this.#newIds.get(id);
    if (newId === undefined) {
      newId = this.#glyphIds.length;
      this.#glyphIds.push(id);
      this.#newIds.set(id, newId);
    }
    return newId;
  }

  /** The subset as a TrueType file: glyf, loca, hmtx, hhea, maxp and head (what a PDF's FontFile2 needs). */
  encode(): Uint8Array {
    const font = this.#font;
    const outlines: Uint8Array[] = [];
    // Components of composite glyphs join the subset while it is walked.
    for (let i = 0; i < this.#glyphIds.length; i++) outlines.push(this.#outline(this.#glyphIds[i]!));
    const count = outlines.length;
    const glyf = new Uint8Array(outlines.reduce((sum, data) => sum + padded(data.length), 0));
    const loca = new DataView(new ArrayBuffer(4 * (count + 1)));
    const hmtx = new DataView(new ArrayBuffer(4 * count));
    let offset = 0;
    outlines.forEach((data, i) => {
      loca.setUint32(4 * i, offset);
      glyf.set(data, offset);
      offset += padded(data.length);
      const id = this.#glyphIds[i]!;
      hmtx.setUint16(4 * i, font.advanceWidthOf(id));
      hmtx.setInt16(4 * i + 2, font.leftSideBearingOf(id));
    });
    loca.setUint32(4 * count, offset);
    const head = font.tableBytes("head");
    const headView = new DataView(head.buffer);
    headView.setUint32(8, 0);
    headView.setInt16(50, 1);
    const hhea = font.tableBytes("hhea");
    new DataView(hhea.buffer).setUint16(34, count);
    const maxp = font.tableBytes("maxp");
    new DataView(maxp.buffer).setUint16(4, count);
    const file = sfnt([
      ["glyf", glyf],
      ["head", head],
      ["hhea", hhea],
      ["hmtx", new Uint8Array(hmtx.buffer)],
      ["loca", new Uint8Array(loca.buffer)],
      ["maxp", maxp],
    ]);
    const headOffset = new DataView(file.buffer).getUint32(12 + 16 * 1 + 8);
    new DataView(file.buffer).setUint32(headOffset + 8, (0xb1b0afba - checksum(file)) >>> 0);
    return file;
  }

  /** pdf-lib's way to read the bytes: one `data` then `end`, after its listeners are registered. */
  encodeStream(): SubsetStream {
    const listeners: { data: ((bytes: Uint8Array) => void)[]; end: ((bytes: Uint8Array) => void)[]; error: ((bytes: Uint8Array) => void)[] } = { data: [], end: [], error: [] };
    const stream: SubsetStream = {
      on(event, listener) {
        listeners[event].push(listener);
        return stream;
      },
    };
    queueMicrotask(() => {
      const bytes = this.encode();
      for (const listener of listeners.data) listener(bytes);
      for (const listener of listeners.end) listener(new Uint8Array(0));
    });
    return stream;
  }

  /** A glyph's outline, with the ids of a composite glyph's components renumbered into the subset. */
  #outline(glyphId: number): Uint8Array {
    const data = this.#font.glyphData(glyphId);
    if (data.length < 10) return data;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (view.getInt16(0) >= 0) return data;
    const copy = data.slice();
    const out = new DataView(copy.buffer);
    let at = 10;
    let flags: number;
    do {
      flags = view.getUint16(at);
      out.setUint16(at + 2, this.includeGlyph(view.getUint16(at + 2)));
      at += 4 + ((flags & ARG_1_AND_2_ARE_WORDS) !== 0 ? 4 : 2);
      if ((flags & WE_HAVE_A_SCALE) !== 0) at += 2;
      else if ((flags & WE_HAVE_AN_X_AND_Y_SCALE) !== 0) at += 4;
      else if ((flags & WE_HAVE_A_TWO_BY_TWO) !== 0) at += 8;
    } while ((flags & MORE_COMPONENTS) !== 0);
    return copy;
  }
}

/** Unicode's Default_Ignorable_Code_Point, less U+115F, U+1160, U+3164 and U+FFA0 (as HarfBuzz does). */
export function isDefaultIgnorable(c: number): boolean {
  return c === 0x00ad || c === 0x034f || c === 0x061c || (c >= 0x17b4 && c <= 0x17b5) || (c >= 0x180b && c <= 0x180e) ||
    (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2060 && c <= 0x206f) ||
    (c >= 0xfe00 && c <= 0xfe0f) || c === 0xfeff || (c >= 0xfff0 && c <= 0xfff8) ||
    (c >= 0x1bca0 && c <= 0x1bca3) || (c >= 0x1d173 && c <= 0x1d17a) || (c >= 0xe0000 && c <= 0xe0fff);
}

const padded = (length: number): number => (length + 3) & ~3;

/** The TrueType checksum: the sum of big-endian 32-bit words, the last one zero-padded. */
function checksum(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let sum = 0;
  const whole = bytes.length & ~3;
  for (let at = 0; at < whole; at += 4) sum = (sum + view.getUint32(at)) >>> 0;
  if (whole < bytes.length) {
    let last = 0;
    for (let at = whole; at < whole + 4; at++) last = (last << 8) | (bytes[at] ?? 0);
    sum = (sum + (last >>> 0)) >>> 0;
  }
  return sum;
}

/** An sfnt file of `tables`, given sorted by tag, each 4-byte aligned. */
function sfnt(tables: readonly (readonly [string, Uint8Array])[]): Uint8Array {
  const count = tables.length;
  const power = 2 ** Math.floor(Math.log2(count));
  let offset = 12 + 16 * count;
  const size = tables.reduce((sum, [, data]) => sum + padded(data.length), offset);
  const file = new Uint8Array(size);
  const view = new DataView(file.buffer);
  view.setUint32(0, 0x00010000);
  view.setUint16(4, count);
  view.setUint16(6, power * 16);
  view.setUint16(8, Math.log2(power));
  view.setUint16(10, count * 16 - power * 16);
  tables.forEach(([tag, data], i) => {
    const record = 12 + 16 * i;
    for (let c = 0; c < 4; c++) file[record + c] = tag.charCodeAt(c);
    view.setUint32(record + 4, checksum(data));
    view.setUint32(record + 8, offset);
    view.setUint32(record + 12, data.length);
    file.set(data, offset);
    offset += padded(data.length);
  });
  return file;
}
