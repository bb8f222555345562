/**
 * @module
 * The evidence warning a protected export starts with (docs/exchange.md#csv, "Single-case
 * JSON"), and how readers take it off before hashing or parsing: the rules of the v1.0
 * client's own reader. A JSON data file starts with a `/* ... *\/` block, a CSV with one quoted
 * `CASE DATA WARNING: ...` line and a blank line; what the hashes cover starts after it.
 */

/** The first line of a protected CSV, quoted as the v1.0 client writes it. */
export const CSV_WARNING_LINE =
  '"CASE DATA WARNING: This file contains evidence data for forensic examination. Any modification may compromise the integrity of the evidence. Handle according to your organization\'s chain of custody procedures."';

/** A leading comment block of a JSON data file and the whitespace after it. */
const JSON_BLOCK = /^\/\*[\s\S]*?\*\/\s*/;
/** The CSV warning line exactly as written, then one blank line. */
const CSV_BLOCK = new RegExp(`^${CSV_WARNING_LINE.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:\\r?\\n){2}`);
/** A reworded CSV warning: its first quoted field and the line ends after it (the client's fallback). */
const CSV_LOOSE_BLOCK = /^"CASE DATA WARNING:[^"]*"(?:\r?\n)+/;

/**
 * The text without a leading warning: a `/* ... *\/` block (JSON) or the `CASE DATA WARNING`
 * line and blank line (CSV), then any leading whitespace, as the v1.0 client strips them. A
 * byte-order mark is dropped first; text without a warning keeps everything but that.
 */
export function stripWarningBlock(text: string): string {
  const withoutBom = text.startsWith("\uFEFF") ? text.slice(1) : text;
  let stripped: string;
  if (JSON_BLOCK.test(withoutBom)) stripped = withoutBom.replace(JSON_BLOCK, "");
  else if (CSV_BLOCK.test(withoutBom)) stripped = withoutBom.replace(CSV_BLOCK, "");
  else if (CSV_LOOSE_BLOCK.test(withoutBom)) stripped = withoutBom.replace(CSV_LOOSE_BLOCK, "");
  else return withoutBom;
  return stripped.replace(/^\s+/, "");
}
