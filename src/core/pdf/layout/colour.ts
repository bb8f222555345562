/**
 * @module
 * Colours of the report (docs/report.md "Colours"): `#RGB`, `#RRGGBB` and CSS colour
 * names, turned into pdf-lib colours, and their luminance (which decides whether a case/item
 * label sits on a dark or a light background).
 *
 * @example
 * ```ts
 * const yellow = parseColour("#FFDE21"); // { r: 1, g: 0.87, b: 0.13 }
 * relativeLuminance(yellow) >= 0.5;       // true: the label gets a dark background
 * ```
 */
import { rgb, type RGB } from "pdf-lib";
import { ColorSchema, CSS_NAMED_COLORS } from "../../schemas/annotation.ts";
import { ServiceError } from "../../errors.ts";
import { CASE_LABEL } from "./report-style.ts";

/** A colour as three channels from 0 to 1 (sRGB). */
export interface Rgb {
  /** Red, 0 to 1. */
  r: number;
  /** Green, 0 to 1. */
  g: number;
  /** Blue, 0 to 1. */
  b: number;
}

/** The channels of `#rgb`, `#rrggbb` or a CSS colour name (any case), or null for anything else. */
export function tryParseColour(value: string): Rgb | null {
  const text = value.trim().toLowerCase();
  // The request schema decides what is a colour: a hex code, or a name the table holds as its own.
  if (!ColorSchema.safeParse(text).success) return null;
  const hex = CSS_NAMED_COLORS[text] ?? text;
  const digits = hex.length === 4 ? [...hex.slice(1)].map((d) => d + d).join("") : hex.slice(1);
  const channel = (i: number) => parseInt(digits.slice(i * 2, i * 2 + 2), 16) / 255;
  return { r: channel(0), g: channel(1), b: channel(2) };
}

/**
 * The channels of a colour; a value that is no colour is a 400 naming `field` (requests are
 * validated first, so this only fires for callers that skipped validation).
 */
export function parseColour(value: string, field = "colour"): Rgb {
  const parsed = tryParseColour(value);
  if (parsed === null) {
    throw ServiceError.validation(`Invalid ${field}: expected #rgb, #rrggbb or a CSS colour name, got "${value}"`, { field });
  }
  return parsed;
}

/** The pdf-lib colour of the channels. */
export function pdfColour(colour: Rgb): RGB {
  return rgb(colour.r, colour.g, colour.b);
}

const linear = (channel: number): number => (channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4);

/** WCAG relative luminance, 0 (black) to 1 (white). */
export function relativeLuminance(colour: Rgb): number {
  return 0.2126 * linear(colour.r) + 0.7152 * linear(colour.g) + 0.0722 * linear(colour.b);
}

/** True when the report calls the colour dark (luminance below `CASE_LABEL.darkBelowLuminance`, docs/report.md "Page layout"). */
export function isDark(colour: Rgb): boolean {
  return relativeLuminance(colour) < CASE_LABEL.darkBelowLuminance;
}
