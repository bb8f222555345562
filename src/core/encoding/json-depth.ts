/**
 * @module
 * How deeply JSON text nests, measured on the text before it is parsed. Parsers, validators
 * and `JSON.stringify` recurse once per level, so text nested thousands of levels deep (a few
 * KB) can be parsed, stored and then never served again. A linear scan that counts `[` and
 * `{` outside strings (honouring backslash escapes) refuses it before it becomes objects.
 *
 * @example
 * ```ts
 * if (jsonDepthOverflow(text) !== -1) throw ServiceError.validation(tooDeepMessage("Request body"));
 * ```
 */

/** The deepest nesting accepted: the document itself is level 1, each array or object inside it one more. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * True when the text holds at most `limit` `[` and `{` in all (inside strings or not), so no
 * nesting can go deeper: counted by `indexOf` jumps, not by a look at every character.
 */
function fewOpeners(text: string, limit: number): boolean {
  let count = 0;
  for (let i = text.indexOf("{"); i !== -1; i = text.indexOf("{", i + 1)) if (++count > limit) return false;
  for (let i = text.indexOf("["); i !== -1; i = text.indexOf("[", i + 1)) if (++count > limit) return false;
  return true;
}

/** The offset of the quote that closes the string opened at `open`: one after an even run of backslashes. */
function closingQuote(text: string, open: number): number {
  let end = open;
  for (;;) {
    end = text.indexOf('"', end + 1);
    if (end === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
  }
}

/**
 * The offset of the first `[` or `{` that nests deeper than `limit`, or -1 when the text never
 * does. Malformed text is scanned all the same (a parser reports its other faults).
 */
export function jsonDepthOverflow(text: string, limit: number = MAX_JSON_DEPTH): number {
  if (fewOpeners(text, limit)) return -1;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = closingQuote(text, i);
      if (i === -1) return -1; // an unclosed string: the rest is its text
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return i;
    } else if ((code === CLOSE_BRACKET || code === CLOSE_BRACE) && depth > 0) {
      depth--;
    }
  }
  return -1;
}

/** The sentence that says `what` nests too deeply, the same wherever JSON is refused for it. */
export function tooDeepMessage(what: string, limit: number = MAX_JSON_DEPTH): string {
  return `${what} is nested deeper than ${limit} levels of arrays and objects`;
}
