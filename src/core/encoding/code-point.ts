/** A code point as Unicode writes it (`U+0007`), for messages that name a character that does not print. */
export function codePointName(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}
