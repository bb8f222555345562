/**
 * @module
 * Bytes as lower-case hex: digests, signatures and generated secrets.
 */

/** The two lower-case hex digits of every byte value. */
export const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Lower-case hex of `bytes`, two digits a byte. */
export function bytesToHex(bytes: Uint8Array | ArrayBuffer): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (let i = 0; i < view.length; i++) out += HEX[view[i]!];
  return out;
}
