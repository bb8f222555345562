/**
 * @module
 * RFC 8785 JSON Canonicalization Scheme (JCS): object members sorted by the UTF-16 code units
 * of their names, no whitespace, numbers and strings as ECMAScript's JSON.stringify writes
 * them. Any runtime that implements JCS gets the same bytes, so hashes over it can be
 * recomputed anywhere (docs/storage.md#audit-chain).
 */

/** The RFC 8785 canonical form of a JSON value; throws on values JSON cannot hold (NaN, Infinity, functions). */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("JSON cannot hold a non-finite number");
      // ECMAScript's Number serialization is the one RFC 8785 specifies (-0 is written 0).
      return JSON.stringify(value);
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
      const record = value as Record<string, unknown>;
      // The default sort compares UTF-16 code units, as RFC 8785 section 3.2.3 requires.
      const names = Object.keys(record).filter((name) => record[name] !== undefined).sort();
      return `{${names.map((name) => `${JSON.stringify(name)}:${canonicalJson(record[name])}`).join(",")}}`;
    }
    default:
      throw new TypeError(`JSON cannot hold a ${typeof value}`);
  }
}
