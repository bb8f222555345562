/**
 * @module
 * Mail addresses as configured (`MAIL_FROM="Lab <no-reply@lab.example>"`, `ADMIN_EMAIL`) or
 * stored on a user record: parsed once, and refused when they could inject a header.
 */

/** One mailbox: an address and an optional display name. */
export interface Mailbox {
  /** The display name, if any (`Lab` in `Lab <no-reply@lab.example>`). */
  name?: string;
  /** The address itself. */
  email: string;
}

// Deliberately plain: one @, no spaces, no angle brackets, commas or quotes (control
// characters are refused before this is tried).
const ADDRESS = /^[^\s@<>,;"()\\]+@[^\s@<>,;"()\\]+\.[^\s@<>,;"()\\.]+$/u;

function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** Parses `addr` or `Name <addr>`; null when it is not one safe mailbox. */
export function parseMailbox(value: string): Mailbox | null {
  if (hasControlCharacter(value)) return null;
  const trimmed = value.trim();
  const named = /^(.*?)\s*<([^<>]+)>$/su.exec(trimmed);
  const email = (named ? named[2]! : trimmed).trim();
  if (!ADDRESS.test(email) && !/^[^\s@<>]+@localhost$/.test(email)) return null;
  const name = named?.[1]?.trim().replace(/^"(.*)"$/s, "$1");
  return name ? { name, email } : { email };
}
