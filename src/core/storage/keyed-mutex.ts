/**
 * Serializes work per key inside one process: the second caller for a key starts when the
 * first has finished, callers for other keys run freely. The map holds only busy keys.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every earlier task of the same key has settled. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.then(() => undefined, () => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
