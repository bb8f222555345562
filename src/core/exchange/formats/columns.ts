/**
 * @module
 * Tables of the exports as columns: each column is its header and how a value of the row
 * source becomes its cell, so the header row and every data row come from one list and
 * cannot drift apart. The cell conventions are the v1.0 client's (docs/exchange.md "CSV"):
 * absent is empty, flags are `Yes`/`No`, a missing fact is `N/A`, a missing count is 0.
 */

/** One cell: text, a number, or empty. */
export type TableCell = string | number;
/** One row of cells. */
export type TableRow = TableCell[];

/** A column of a table over row sources of type `T`: its header, and the cell of a source. */
export interface Column<T> {
  /** The header row's text for this column. */
  header: string;
  /** The cell of this column in the row of `source`. */
  value: (source: T) => TableCell;
}

/** The header row of `columns`, in their order. */
export function headerRow<T>(columns: readonly Column<T>[]): string[] {
  return columns.map((column) => column.header);
}

/** The data row of `source`: one cell per column, in their order. */
export function valueRow<T>(columns: readonly Column<T>[], source: T): TableRow {
  return columns.map((column) => column.value(source));
}

/** A value as cell text: absent is empty. */
export const text = (value: unknown): string => typeof value === "string" ? value : value === undefined || value === null ? "" : String(value);
/** A number stays a number (a numeric XLSX cell); anything else is cell text. */
export const cell = (value: unknown): TableCell => typeof value === "number" ? value : text(value);
/** The client writes `Yes` only for `true`. */
export const yesNo = (value: unknown): string => value === true ? "Yes" : "No";
/** The client writes `N/A` for an empty or absent fact. */
export const orNotAvailable = (value: unknown): string => text(value) === "" ? "N/A" : text(value);
/** The client writes 0 for an absent count. */
export const countOf = (value: unknown): number => typeof value === "number" && Number.isFinite(value) ? value : 0;
