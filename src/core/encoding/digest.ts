/**
 * @module
 * SHA-256 with web crypto, as hex: lower case in manifests, upper case in CSV comment lines
 * and confirmation exports (docs/exchange.md).
 */

import { bytesToHex } from "./hex.ts";

const encoder = new TextEncoder();

/** Lower-case hex SHA-256 of bytes, or of the UTF-8 of a string. */
export async function sha256Hex(input: Uint8Array | string): Promise<string> {
  const bytes = typeof input === "string" ? encoder.encode(input) : input;
  // web crypto wants an ArrayBuffer-backed view; a SharedArrayBuffer one is copied first.
  const view = bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
  return bytesToHex(await crypto.subtle.digest("SHA-256", view));
}

/** Compares two hex digests without regard to letter case. */
export function sameDigest(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
