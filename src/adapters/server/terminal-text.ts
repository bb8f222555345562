/**
 * @module
 * Text from a package or a store, printed by a command: control characters shown as escapes, so
 * a hostile name cannot move the cursor, rewrite a line ("can import: yes") or retitle the terminal.
 */

// C0 (newlines included: one line stays one line), DEL and C1 (0x9b starts a sequence on some terminals).
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// What JSON.stringify leaves as it is: DEL and C1.
const UNESCAPED_IN_JSON = /[\u007f-\u009f]/g;

const hex = (char: string, width: number) => char.charCodeAt(0).toString(16).padStart(width, "0");

/** One line of text for a terminal: each control character as `\xHH`. */
export function terminalLine(text: string): string {
  return text.replace(CONTROL, (char) => `\\x${hex(char, 2)}`);
}

/** A value as indented JSON for a terminal: what JSON leaves raw (DEL, C1) escaped as `\u00HH`, still valid JSON. */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(UNESCAPED_IN_JSON, (char) => `\\u${hex(char, 4)}`);
}
