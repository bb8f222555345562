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
 * How long a key may stay contended before a write gives up, besides the attempts: a process
 * whose own queue of writes keeps winning holds another process's write off while the queue
 * lasts (32 writers over two stores on Deno KV: about 8 s on a 2-core machine), and a count of
 * attempts alone gave up within the first 5 s.
 */
export const CONTENDED_MS = 20_000;

/**
 * Runs `attempt` until it answers something other than {@link CONFLICT}, pausing after each
 * conflict; gives up with {@link ContentionError} naming `key` once it tried `maxAttempts` times
 * and the key stayed contended for {@link CONTENDED_MS}.
 */
export async function retryOnConflict<T>(key: string, maxAttempts: number, attempt: () => Promise<T | typeof CONFLICT>): Promise<T> {
  const started = Date.now();
  for (let tried = 1; ; tried++) {
    const result = await attempt();
    if (result !== CONFLICT) return result;
    if (tried >= maxAttempts && Date.now() - started >= CONTENDED_MS) throw new ContentionError(key, tried);
    await pauseAfterConflict(tried - 1);
  }
}
