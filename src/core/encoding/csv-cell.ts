/**
 * @module
 * One CSV field as every CSV the service writes it (the audit export, the case CSV): double-quoted
 * with quotes doubled, and text a spreadsheet would run as a formula (starting `=`, `+`, `-`, `@`,
 * a tab or a carriage return) prefixed with `'`, so Excel and LibreOffice Calc show it as text.
 *
 * @example
 * ```ts
 * csvCell("=1+1"); // "\"'=1+1\""
 * ```
 */

// OWASP "CSV injection": the characters a spreadsheet reads as the start of a formula (`=`, `+`,
// `-`, `@`, tab, CR), and `'` too, so that taking the mark off gives a text's own `'` back.
const MARKED = /^[=+\-@\t\r']/;

/** Text as a quoted CSV field, a formula-like start neutralised with `'`; numbers as they are, quoted. */
export function csvCell(value: string | number): string {
  const text = typeof value === "string" && MARKED.test(value) ? `'${value}` : String(value);
  return `"${text.replaceAll('"', '""')}"`;
}

/** A field's text as {@link csvCell} was given it: the `'` it put before a formula-like start taken off. */
export function csvCellText(field: string): string {
  return field.startsWith("'") && MARKED.test(field.slice(1)) ? field.slice(1) : field;
}
