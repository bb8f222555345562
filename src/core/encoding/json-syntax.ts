/**
 * @module
 * What is wrong with text that is not JSON, said the same way on every runtime: the first
 * fault, its line and column, and what was expected there. `JSON.parse` messages differ
 * between engines and name engine internals, so they are never shown to a client.
 * Only called on text whose nesting is already bounded (see `json-depth.ts`).
 */
import { ServiceError } from "../errors.ts";
import { codePointName } from "./code-point.ts";

/** The first syntax fault of a text. */
export interface JsonSyntaxFault {
  /** Offset of the fault in the text (UTF-16 code units). */
  position: number;
  /** 1-based line of the fault. */
  line: number;
  /** 1-based column of the fault. */
  column: number;
  /** What is wrong, e.g. `expected ':' after a property name, found '}'`. */
  problem: string;
}

class Fault extends ServiceError {
  constructor(readonly at: number, readonly problem: string) {
    super("invalid", problem);
  }
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const HEX4 = /[0-9a-fA-F]{4}/y;

function shown(text: string, at: number): string {
  if (at >= text.length) return "the end of the text";
  const char = text.codePointAt(at) ?? 0;
  if (char < 0x20 || char === 0x7f) return `control character ${codePointName(char)}`;
  return `'${String.fromCodePoint(char)}'`;
}

/** A small recursive-descent checker: depth is bounded by the caller, so recursion is safe. */
function check(text: string): void {
  let i = 0;
  const skip = (): void => {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++;
  };
  const fail = (expected: string): never => {
    throw new Fault(i, `expected ${expected}, found ${shown(text, i)}`);
  };
  const string = (): void => {
    const start = i;
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) throw new Fault(start, "a string is not closed (missing '\"')");
      const char = text[i]!;
      if (char === '"') {
        i++;
        return;
      }
      if (char === "\\") {
        const next = text[i + 1];
        if (next === "u") {
          HEX4.lastIndex = i + 2;
          if (!HEX4.test(text)) throw new Fault(i, "invalid \\u escape in a string (four hex digits expected)");
          i += 6;
        } else if (next !== undefined && ESCAPES.has(next)) {
          i += 2;
        } else {
          throw new Fault(i, `invalid escape in a string: \\${next ?? ""}`);
        }
        continue;
      }
      if (char.charCodeAt(0) < 0x20) throw new Fault(i, `${shown(text, i)} inside a string (must be escaped)`);
      i++;
    }
  };
  const value = (): void => {
    skip();
    const char = text[i];
    if (char === "{") {
      i++;
      skip();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        skip();
        if (text[i] !== '"') fail("a property name in double quotes");
        string();
        skip();
        if (text[i] !== ":") fail("':' after a property name");
        i++;
        value();
        skip();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return;
        }
        fail("',' or '}' in an object");
      }
    }
    if (char === "[") {
      i++;
      skip();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value();
        skip();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return;
        }
        fail("',' or ']' in an array");
      }
    }
    if (char === '"') return string();
    for (const word of ["true", "false", "null"]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    if (char !== undefined && /[-0-9]/.test(char) && NUMBER.test(text)) {
      i = NUMBER.lastIndex;
      return;
    }
    fail("a value (object, array, string, number, true, false or null)");
  };
  value();
  skip();
  if (i < text.length) throw new Fault(i, `unexpected ${shown(text, i)} after the JSON value`);
}

/** The first syntax fault of `text`, or undefined when it is valid JSON. */
export function jsonSyntaxFault(text: string): JsonSyntaxFault | undefined {
  try {
    check(text);
    return undefined;
  } catch (err) {
    if (!(err instanceof Fault)) throw err;
    const before = text.slice(0, err.at);
    const line = before.split("\n").length;
    const column = err.at - before.lastIndexOf("\n");
    return { position: err.at, line, column, problem: err.problem };
  }
}
