/**
 * @module
 * RFC 8785 JSON Canonicalization Scheme (JCS): object members sorted by the UTF-16 code units
 * of their names, no whitespace, numbers and strings as ECMAScript's JSON.stringify writes
 * them. Any runtime that implements JCS gets the same bytes, so hashes over it can be
 * recomputed anywhere (docs/storage.md#audit-chain).
 */

import { MAX_JSON_DEPTH } from "./json-depth.ts";

// Deeper than anything the service accepts (MAX_JSON_DEPTH), far within every runtime's stack, so
// a hostile stored value fails the same way everywhere instead of by stack size.
const MAX_CANONICAL_DEPTH = 2 * MAX_JSON_DEPTH;

/**
 * The RFC 8785 canonical form of a JSON value; throws on values JSON cannot hold (NaN, Infinity,
 * functions) and on nesting deeper than twice the service's JSON depth limit. `omit` names a
 * member of the top-level object to leave out (an entry's own hash).
 */
export function canonicalJson(value: unknown, omit?: string): string {
  if (omit !== undefined && value !== null && typeof value === "object" && !Array.isArray(value)) {
    return canonicalObject(value as Record<string, unknown>, omit, 1);
  }
  return canonical(value, 1);
}

// Member names as JSON writes them, with the colon: the same few names recur in every entry.
// Bounded (short names, the first thousand seen), so hostile names cannot grow it.
const quotedNames = new Map<string, string>();
const MAX_QUOTED_NAMES = 1_024;
const MAX_QUOTED_NAME_LENGTH = 64;

function quotedName(name: string): string {
  let quoted = quotedNames.get(name);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(name)}:`;
    if (quotedNames.size < MAX_QUOTED_NAMES && name.length <= MAX_QUOTED_NAME_LENGTH) quotedNames.set(name, quoted);
  }
  return quoted;
}

// A string JSON writes as it is between quotes: no quote, backslash, control character or surrogate.
// deno-lint-ignore no-control-regex
const PLAIN_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * A string as JSON.stringify writes it. Most are written between quotes as they are, without a
 * call to JSON.stringify, whose cost per call (a stringifier set up each time) outweighed the
 * writing of an audit entry's short strings.
 */
export function quoted(value: string): string {
  return PLAIN_STRING.test(value) ? `"${value}"` : JSON.stringify(value);
}

/** Sorts names in place by UTF-16 code units (RFC 8785 section 3.2.3): an insertion sort for the few members of an entry's objects. */
function sortNames(names: string[]): string[] {
  if (names.length > 16) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!;
    let j = i - 1;
    for (; j >= 0 && names[j]! > name; j--) names[j + 1] = names[j]!;
    names[j + 1] = name;
  }
  return names;
}

function canonicalObject(record: Record<string, unknown>, omit: string | undefined, depth: number): string {
  const names = sortNames(Object.keys(record));
  let out = "{";
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const member = record[name];
    if (member === undefined || name === omit) continue;
    if (out.length > 1) out += ",";
    out += quotedName(name);
    out += typeof member === "string" ? quoted(member) : canonical(member, depth + 1);
  }
  return out + "}";
}

function canonical(value: unknown, depth: number): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("JSON cannot hold a non-finite number");
      // ECMAScript's Number serialization is the one RFC 8785 specifies (-0 is written 0), and what JSON.stringify writes.
      return String(value);
    case "string":
      return quoted(value);
    case "object": {
      if (depth > MAX_CANONICAL_DEPTH) throw new RangeError(`JSON nested deeper than ${MAX_CANONICAL_DEPTH} levels`);
      if (!Array.isArray(value)) return canonicalObject(value as Record<string, unknown>, undefined, depth);
      let out = "[";
      for (let i = 0; i < value.length; i++) {
        if (i > 0) out += ",";
        out += canonical(value[i] ?? null, depth + 1);
      }
      return out + "]";
    }
    default:
      throw new TypeError(`JSON cannot hold a ${typeof value}`);
  }
}
