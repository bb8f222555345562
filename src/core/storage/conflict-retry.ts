/**
 * @module
 * The retry loop of every compare-and-set in the stores: try, pause a little after a
 * conflicting write, try again, and give up as an internal failure when a key stays contended.
 */

/** Thrown when a key stays contended after every retry: an internal failure, answered as a 500. */
export class ContentionError extends Error {
  /** Names the contended key and how many conditional writes were tried. */
  constructor(key: string, attempts: number) {
    super(`gave up updating ${key} after ${attempts} conflicting attempts`);
    this.name = "ContentionError";
  }
}

/** The short random pause after the `attempt`th conflicting conditional write (up to 200 ms). */
export const pauseAfterConflict = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.min(200, 2 ** Math.min(attempt, 7)) * Math.random()));

/** What a try answers when another write won: the loop pauses and tries again. */
export const CONFLICT: unique symbol = Symbol("conflict");

/**
 * Runs `attempt` until it answers something other than {@link CONFLICT}, pausing after each
 * conflict, at most `maxAttempts` times; then throws {@link ContentionError} naming `key`.
 */
export async function retryOnConflict<T>(key: string, maxAttempts: number, attempt: () => Promise<T | typeof CONFLICT>): Promise<T> {
  for (let tried = 0; tried < maxAttempts; tried++) {
    const result = await attempt();
    if (result !== CONFLICT) return result;
    await pauseAfterConflict(tried);
  }
  throw new ContentionError(key, maxAttempts);
}
