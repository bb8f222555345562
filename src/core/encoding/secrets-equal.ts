/**
 * @module
 * Comparing a presented secret with a configured one in constant time.
 */

const encoder = new TextEncoder();

/**
 * Compares two secrets in constant time for a given expected secret: every byte of the
 * expected one is compared whatever the given one holds, and a length difference counts as
 * a mismatch without an early exit. Synchronous, so a check costs no hashing round trip.
 */
export function secretsEqual(given: string, expected: string): boolean {
  const a = encoder.encode(given);
  const b = encoder.encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a.length === 0 ? 0 : a[i % a.length]!) ^ b[i]!;
  return diff === 0;
}
