/**
 * @module
 * The memory that decoding report images may hold at once in one process or isolate. A PNG
 * of a few hundred kilobytes can decode to hundreds of megabytes (16-bit RGBA, all zeros,
 * compresses a thousandfold), and the PDF worker is open to anyone: without a shared bound,
 * eight such requests at once took a server past 2 GB. Each decode reserves its estimated
 * peak first and waits, in arrival order, until the reservations in flight leave room.
 */

/** Reservations of a shared number of bytes, granted first come, first served. */
export class DecodeBudget {
  #free: number;
  readonly #waiting: { bytes: number; grant: () => void }[] = [];

  /** `total`: the bytes all decodes in flight may hold together. */
  constructor(readonly total: number) {
    this.#free = total;
  }

  /** Runs `task` once `bytes` (at most {@link DecodeBudget.total}) are reserved for it; frees them when it settles. */
  async run<T>(bytes: number, task: () => Promise<T>): Promise<T> {
    const reserved = Math.min(bytes, this.total);
    await this.#reserve(reserved);
    try {
      return await task();
    } finally {
      this.#release(reserved);
    }
  }

  /** Bytes not reserved now. */
  get free(): number {
    return this.#free;
  }

  #reserve(bytes: number): Promise<void> {
    // Behind anyone waiting, even when this one would fit: a large decode is never starved by small ones.
    if (this.#waiting.length === 0 && bytes <= this.#free) {
      this.#free -= bytes;
      return Promise.resolve();
    }
    return new Promise((grant) => this.#waiting.push({ bytes, grant }));
  }

  #release(bytes: number): void {
    this.#free += bytes;
    for (let next = this.#waiting[0]; next !== undefined && next.bytes <= this.#free; next = this.#waiting[0]) {
      this.#waiting.shift();
      this.#free -= next.bytes;
      next.grant();
    }
  }
}
