/**
 * @module
 * Text set into a width: wrapped at spaces, words longer than a line broken between
 * characters, and short texts shrunk before they wrap. Nothing is cut off: every character
 * of the input is on some line. Lines may be taken one at a time, each with its own width,
 * so that notes can continue on a page whose column is wider.
 */
import type { PDFFont } from "pdf-lib";
import { TEXT } from "./report-style.ts";

/** Text on one line: line breaks and tabs become spaces. */
export function singleLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, " ");
}

/**
 * Breaks text into lines, one call of {@link LineBreaker.next} per line. `\n` starts a new
 * line; runs of spaces inside a line are kept, the one space where a line wraps is dropped.
 */
export class LineBreaker {
  private readonly paragraphs: string[][];
  private readonly widths = new Map<string, number>();
  private readonly spaceWidth: number;
  private paragraph = 0;
  private word = 0;
  /** The rest of a word that was broken at the end of the previous line. */
  private pending: string | null = null;

  /** Prepares `text` for lines at `size` in `font`. */
  constructor(text: string, private readonly font: PDFFont, private readonly size: number) {
    this.paragraphs = text.split("\n").map((paragraph) => paragraph.split(" "));
    this.spaceWidth = this.width(" ");
  }

  /**
   * The width of a text as pdf-lib draws it: the sum of its characters' advances (pdf-lib
   * applies no kerning). Measured per character so that long texts cost linear time.
   */
  width(text: string): number {
    let total = 0;
    for (const char of text) {
      let advance = this.widths.get(char);
      if (advance === undefined) {
        advance = this.font.widthOfTextAtSize(char, this.size);
        this.widths.set(char, advance);
      }
      total += advance;
    }
    return total;
  }

  /** True while text is left. */
  hasMore(): boolean {
    return this.paragraph < this.paragraphs.length;
  }

  /** The next line, no wider than `maxWidth` (unless one character is), or null at the end. */
  next(maxWidth: number): string | null {
    const words = this.paragraphs[this.paragraph];
    if (words === undefined) return null;
    let line: string | null = null;
    let lineWidth = 0;
    for (;;) {
      const word = this.pending ?? words[this.word];
      if (word === undefined) {
        this.paragraph++;
        this.word = 0;
        return line ?? "";
      }
      const wordWidth = this.width(word);
      if (line !== null) {
        if (lineWidth + this.spaceWidth + wordWidth > maxWidth) return line;
        line += ` ${word}`;
        lineWidth += this.spaceWidth + wordWidth;
        this.word++;
        continue;
      }
      if (wordWidth > maxWidth) {
        const [head, rest] = this.split(word, maxWidth);
        if (this.pending === null) this.word++;
        this.pending = rest === "" ? null : rest;
        if (rest !== "") return head;
        line = head;
        lineWidth = this.width(head);
        continue;
      }
      if (this.pending === null) this.word++;
      this.pending = null;
      line = word;
      lineWidth = wordWidth;
    }
  }

  /** The longest head of `word` that fits (one character at least), and the rest. */
  private split(word: string, maxWidth: number): [string, string] {
    let head = "";
    let headWidth = 0;
    for (const char of word) {
      const advance = this.width(char);
      if (head !== "" && headWidth + advance > maxWidth) break;
      head += char;
      headWidth += advance;
    }
    return [head, word.slice(head.length)];
  }
}

/** All lines of `text` at `size` in `font`, none wider than `maxWidth`. */
export function wrapText(text: string, font: PDFFont, size: number, maxWidth: number): string[] {
  const breaker = new LineBreaker(text, font, size);
  const lines: string[] = [];
  for (let line = breaker.next(maxWidth); line !== null; line = breaker.next(maxWidth)) lines.push(line);
  return lines;
}

/** A text set into a box: the size chosen and its lines. */
export interface FittedText {
  /** The font size used. */
  size: number;
  /** The lines, each no wider than the box. */
  lines: string[];
}

/**
 * Sets `text` on one line at `size`, or smaller down to `minSize` so that it fits, or else
 * wraps it at `minSize`.
 */
export function fitText(text: string, font: PDFFont, size: number, minSize: number, maxWidth: number): FittedText {
  const line = singleLine(text);
  const natural = font.widthOfTextAtSize(line, size);
  if (natural <= maxWidth) return { size, lines: [line] };
  const steps = TEXT.shrinkStepsPerPoint;
  const shrunk = Math.max(minSize, Math.floor(((size * maxWidth) / natural) * steps) / steps);
  if (font.widthOfTextAtSize(line, shrunk) <= maxWidth) return { size: shrunk, lines: [line] };
  return { size: minSize, lines: wrapText(line, font, minSize, maxWidth) };
}
