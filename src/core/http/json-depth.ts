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
 * The offset of the first `[` or `{` that nests deeper than `limit`, or -1 when the text never
 * does. Malformed text is scanned all the same (a parser reports its other faults).
 */
export function jsonDepthOverflow(text: string, limit: number = MAX_JSON_DEPTH): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++; // the escaped character cannot end the string
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
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
