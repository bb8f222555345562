/**
 * @module
 * The on-store form of an append-only JSON array (an audit day): one item per line,
 *
 *     [
 *     {...},
 *     {...}
 *     ]
 *
 * so a backend that can write in place appends `,\n{item}\n]` over the closing `\n]`
 * instead of rewriting the day, and a torn last line can be dropped without losing others.
 */

import { jsonDepthOverflow, MAX_JSON_DEPTH, tooDeepMessage } from "../encoding/json-depth.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The closing bytes every canonical array ends with. */
export const JSON_ARRAY_TAIL = "\n]";

/**
 * A stored item that cannot be served (nested too deeply, not JSON, not an object). It keeps
 * its stored text, so a rewrite of the array (a repair, an append elsewhere) loses nothing.
 */
export class UnreadableJsonItem {
  /** Keeps the stored text and why it cannot be served. */
  constructor(
    /** The item's text as stored (an item that spanned lines loses the whitespace outside its strings). */
    readonly raw: string,
    /** Why it cannot be served, e.g. "not valid JSON". */
    readonly reason: string,
  ) {}
}

// JSON texts of items their writer has already serialized (an audit entry, also written in its
// head), so an append does not serialize the item a second time. Weak: gone with the item.
const knownTexts = new WeakMap<object, string>();

/**
 * Declares `text` to be `JSON.stringify(item)`, for the appends of `item` until
 * {@link forgetJsonText}; the item must not change meanwhile.
 */
export function useJsonText(item: object, text: string): void {
  knownTexts.set(item, text);
}

/** Ends {@link useJsonText} for `item`. */
export function forgetJsonText(item: object): void {
  knownTexts.delete(item);
}

const itemText = (item: unknown): string => {
  if (item instanceof UnreadableJsonItem) return item.raw;
  return (item !== null && typeof item === "object" ? knownTexts.get(item) : undefined) ?? JSON.stringify(item);
};

/** Serializes items in the canonical one-per-line form; unreadable items are written back as stored. */
export function encodeJsonArray(items: readonly unknown[]): Uint8Array {
  if (items.length === 0) return encoder.encode("[]");
  return encoder.encode(`[\n${items.map(itemText).join(",\n")}${JSON_ARRAY_TAIL}`);
}

/** Whether the bytes' first non-blank character is `[` (a JSON array, rather than an object or an envelope). */
export function startsArray(bytes: Uint8Array): boolean {
  for (const byte of bytes) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
    return byte === 0x5b;
  }
  return false;
}

/** The bytes that append one item to a non-empty canonical array, written over its tail. */
export function encodeAppendedItem(item: unknown): Uint8Array {
  return encoder.encode(`,\n${itemText(item)}${JSON_ARRAY_TAIL}`);
}

/**
 * The items' bytes (views of `bytes`) when it is exactly in the one-item-per-line form
 * {@link encodeJsonArray} writes (`[` and `]` on lines of their own, each item but the last
 * followed by `,` and a line break), else undefined. No JSON string holds a raw line break,
 * and no byte of a multi-byte UTF-8 character is one, so in that form every break separates.
 */
export function jsonArrayLines(bytes: Uint8Array): Uint8Array[] | undefined {
  const end = bytes.length;
  if (end === 2 && bytes[0] === 0x5b && bytes[1] === 0x5d) return [];
  if (end < 5 || bytes[0] !== 0x5b || bytes[1] !== 0x0a || bytes[end - 2] !== 0x0a || bytes[end - 1] !== 0x5d) return undefined;
  const lines: Uint8Array[] = [];
  let start = 2;
  for (;;) {
    const brk = bytes.indexOf(0x0a, start);
    if (brk === end - 2) {
      if (brk === start) return undefined;
      lines.push(bytes.subarray(start, brk));
      return lines;
    }
    // Every line before the last ends with the comma that separates it from the next.
    if (brk - 1 <= start || bytes[brk - 1] !== 0x2c) return undefined;
    lines.push(bytes.subarray(start, brk - 1));
    start = brk + 1;
  }
}

/**
 * The UTF-8 of `before`, the items joined by commas, then `after`, in one array: a JSON answer
 * that carries stored items (`{"entries":[` … `]}`) built from their bytes.
 */
export function joinJsonItems(before: string, items: readonly Uint8Array[], after: string): Uint8Array<ArrayBuffer> {
  const head = encoder.encode(before);
  const tail = encoder.encode(after);
  let length = head.length + tail.length + Math.max(0, items.length - 1);
  for (const item of items) length += item.length;
  const out = new Uint8Array(length);
  out.set(head, 0);
  let offset = head.length;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out[offset++] = 0x2c;
    out.set(items[i]!, offset);
    offset += items[i]!.length;
  }
  out.set(tail, offset);
  return out;
}

/**
 * One item's text read as {@link parseJsonArray} reads an item of an array: the parsed object,
 * or an {@link UnreadableJsonItem} (too deep, not JSON, not an object).
 */
export function readJsonItem(text: string): unknown {
  return readItem(text);
}

/** The result of reading a stored array. */
export interface ParsedJsonArray {
  /** The items in stored order: parsed objects, or {@link UnreadableJsonItem} where one cannot be served. */
  items: unknown[];
  /** True when the stored bytes were not a complete array and complete lines were recovered. */
  recovered: boolean;
}

/** A stored array read by {@link parseCheckedJsonArray}: also whether its bytes are the canonical form. */
export interface CheckedJsonArray extends ParsedJsonArray {
  /** True when the bytes are exactly the canonical form (safe to append in place). */
  canonical: boolean;
}

const WHITESPACE = /\s/;

/** The text on one line: as stored, or without whitespace outside strings when it spans lines. */
function oneLine(text: string): string {
  if (!/[\r\n]/.test(text)) return text;
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      out += char;
      if (char === "\\" && i + 1 < text.length) out += text[++i];
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
      out += char;
    } else if (!WHITESPACE.test(char)) {
      out += char;
    }
  }
  return out;
}

/** One top-level item's text, and whether it nests deeper than {@link MAX_JSON_DEPTH}. */
interface ItemSlice {
  text: string;
  tooDeep: boolean;
}

/**
 * The top-level items of `text` when it is one complete array, else undefined (a torn file,
 * or text whose strings do not close). Linear: strings are skipped, nesting is counted.
 */
function splitArray(text: string): ItemSlice[] | undefined {
  let i = 0;
  while (i < text.length && WHITESPACE.test(text[i]!)) i++;
  if (text.charCodeAt(i) !== 0x5b) return undefined;
  const items: ItemSlice[] = [];
  let depth = 0;
  let deepest = 0;
  let inString = false;
  let start = i + 1;
  const cut = (end: number): void => {
    items.push({ text: text.slice(start, end).trim(), tooDeep: deepest - 1 > MAX_JSON_DEPTH });
    start = end + 1;
    deepest = 0;
  };
  for (; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i++; // a backslash: the next character cannot close the string
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > deepest) deepest = depth;
    } else if (code === 0x5d || code === 0x7d) {
      if (--depth === 0) {
        if (code !== 0x5d) return undefined;
        if (text.slice(start, i).trim() !== "" || items.length > 0) cut(i);
        return text.slice(i + 1).trim() === "" ? items : undefined;
      }
    } else if (code === 0x2c && depth === 1) {
      cut(i);
    }
  }
  return undefined;
}

/** The reason of an {@link UnreadableJsonItem} whose text is not JSON at all. */
export const NOT_JSON = "the entry is not valid JSON";

/** One stored item's text: the parsed object, or an {@link UnreadableJsonItem} saying why not. */
function readItem(slice: string, tooDeep = jsonDepthOverflow(slice, MAX_JSON_DEPTH) !== -1): unknown {
  if (tooDeep) return new UnreadableJsonItem(oneLine(slice), tooDeepMessage("the entry"));
  let value: unknown;
  try {
    value = JSON.parse(slice);
  } catch {
    return new UnreadableJsonItem(oneLine(slice), NOT_JSON);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return new UnreadableJsonItem(oneLine(slice), "the entry is not a JSON object");
  }
  return value;
}

/** The items when `text` is a JSON array of objects only, else undefined. */
function parsedArrayOfObjects(text: string): unknown[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value)) return undefined;
  return value.every((item) => item !== null && typeof item === "object" && !Array.isArray(item)) ? value : undefined;
}

/**
 * Parses a stored array without ever failing as a whole: each item is read on its own, and an
 * item that cannot be served comes back as an {@link UnreadableJsonItem} in its place. A file
 * torn by a crash mid-append (its last line cut) gives every line before the tear; the torn
 * last line itself was never acknowledged and is dropped.
 */
export function parseJsonArray(bytes: Uint8Array | string): ParsedJsonArray {
  return parseText(typeof bytes === "string" ? bytes : decoder.decode(bytes));
}

/**
 * {@link parseJsonArray}, and whether the bytes are exactly the canonical one-item-per-line
 * form: found by serialising the items again, which only a writer about to append in place
 * (or to seal item by item) needs, so reads do not pay for it.
 */
export function parseCheckedJsonArray(bytes: Uint8Array | string): CheckedJsonArray {
  const text = typeof bytes === "string" ? bytes : decoder.decode(bytes);
  const { items, recovered } = parseText(text);
  return { items, recovered, canonical: !recovered && items.length > 0 && text === decoder.decode(encodeJsonArray(items)) };
}

function parseText(text: string): ParsedJsonArray {
  // The common case at the speed of one parse: a whole array of objects, none too deep.
  if (jsonDepthOverflow(text, MAX_JSON_DEPTH + 1) === -1) {
    const whole = parsedArrayOfObjects(text);
    if (whole !== undefined) return { items: whole, recovered: false };
  }
  const slices = splitArray(text);
  if (slices !== undefined) {
    return { items: slices.filter((slice) => slice.text !== "").map((slice) => readItem(slice.text, slice.tooDeep)), recovered: false };
  }
  // A lone object (written by hand) is one entry.
  const trimmed = text.trim();
  if (trimmed.startsWith("{") && trimmed.endsWith("}")) {
    const item = readItem(trimmed);
    if (!(item instanceof UnreadableJsonItem)) return { items: [item], recovered: true };
  }
  const lines = text.split("\n").map((line) => line.trim().replace(/^\[/, "").replace(/\]$/, "").replace(/,$/, "").trim());
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const items = lines.filter((line) => line !== "").map((line) => readItem(line));
  // The last line of a file that does not end its array is the append a crash cut short.
  if (!trimmed.endsWith("]") && items[items.length - 1] instanceof UnreadableJsonItem) items.pop();
  return { items, recovered: true };
}
