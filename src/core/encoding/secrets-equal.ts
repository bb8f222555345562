/**
 * @module
 * Comparing a presented secret with a configured one in constant time.
 */

/**
 * Compares two secrets in constant time for a given expected secret: every UTF-16 code unit
 * of the expected one is compared whatever the given one holds, and a length difference
 * counts as a mismatch without an early exit. Synchronous and without encoding either string,
 * so a check costs no hashing round trip and no allocation.
 */
export function secretsEqual(given: string, expected: string): boolean {
  let diff = given.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) {
    diff |= (given.length === 0 ? 0 : given.charCodeAt(i % given.length)) ^ expected.charCodeAt(i);
  }
  return diff === 0;
}
