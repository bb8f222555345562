/** Every CSV field the service writes reads back as the text it was given, formula-like or not. */
import { describe, expect, it } from "vitest";
import { csvCell, csvCellText } from "../../../src/core/encoding/csv-cell.ts";

const unquoted = (field: string): string => field.slice(1, -1).replaceAll('""', '"');

describe("csvCell", () => {
  it("marks a formula-like start, and a text's own leading ' so that taking the mark off gives the text back", () => {
    for (const text of ["plain", "=1+1", "+cmd", "-2+3", "@SUM(1)", "\tx", "\rx", "'=1+1", "'abc", "''", "'", 'say "hi"']) {
      const field = unquoted(csvCell(text));
      expect(/^[=+\-@\t\r]/.test(field), text).toBe(false);
      expect(csvCellText(field), text).toBe(text);
    }
    expect(csvCell(42)).toBe('"42"');
  });
});
