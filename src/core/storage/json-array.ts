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

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The closing bytes every canonical array ends with. */
export const JSON_ARRAY_TAIL = "\n]";

/** Serializes items in the canonical one-per-line form. */
export function encodeJsonArray(items: readonly unknown[]): Uint8Array {
  if (items.length === 0) return encoder.encode("[]");
  return encoder.encode(`[\n${items.map((item) => JSON.stringify(item)).join(",\n")}${JSON_ARRAY_TAIL}`);
}

/** The bytes that append one item to a non-empty canonical array, written over its tail. */
export function encodeAppendedItem(item: unknown): Uint8Array {
  return encoder.encode(`,\n${JSON.stringify(item)}${JSON_ARRAY_TAIL}`);
}

/** The result of reading a stored array. */
export interface ParsedJsonArray {
  items: unknown[];
  /** True when the stored bytes were not a valid array and complete lines were recovered. */
  recovered: boolean;
  /** True when the bytes are exactly the canonical form (safe to append in place). */
  canonical: boolean;
}

/**
 * Parses a stored array. A file torn by a crash mid-append (its last line cut) gives every
 * complete item before the tear, so a crash loses at most the entry being written.
 */
export function parseJsonArray(bytes: Uint8Array | string): ParsedJsonArray {
  const text = typeof bytes === "string" ? bytes : decoder.decode(bytes);
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(value)) {
      const canonical = value.length > 0 && text === decoder.decode(encodeJsonArray(value));
      return { items: value, recovered: false, canonical };
    }
    if (value !== null && typeof value === "object") return { items: [value], recovered: true, canonical: false };
  } catch {
    // Fall through to line recovery.
  }
  const items: unknown[] = [];
  for (const rawLine of text.split("\n")) {
    const line = rawLine.trim().replace(/^\[/, "").replace(/,$/, "").replace(/\]$/, "").trim();
    if (line === "") continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value !== null && typeof value === "object" && !Array.isArray(value)) items.push(value);
    } catch {
      // A torn or foreign line: skipped.
    }
  }
  return { items, recovered: true, canonical: false };
}
