/**
 * @module
 * The memory that decoding report images may hold at once in one process or isolate. A PNG
 * of a few hundred kilobytes can decode to hundreds of megabytes (16-bit RGBA, all zeros,
 * compresses a thousandfold), and the PDF worker is open to anyone: without a shared bound,
 * eight such requests at once took a server past 2 GB. Each decode reserves its estimated
 * peak first and waits, in arrival order, until the reservations in flight leave room; a
 * wait longer than `maxWaitMs` is a 503 with Retry-After, and a reservation older than
 * `maxHoldMs` is given back (a request cancelled mid-render, as workerd may, never runs its
 * `finally`: without this its bytes would be lost to the isolate for good).
 */
import { ServiceError } from "../../errors.ts";

/** Options of a {@link DecodeBudget}. */
export interface DecodeBudgetOptions {
  /** Longest wait for room, in ms, before the render is refused (503). Default 30 s. */
  maxWaitMs?: number;
  /** Age, in ms, after which a reservation counts as given back. Default 120 s. */
  maxHoldMs?: number;
  /** The time in ms; default `Date.now`. */
  now?: () => number;
  /** The 503's message when the wait is too long; default the PDF worker's. */
  busyMessage?: string;
}

interface Grant {
  bytes: number;
  at: number;
}

interface Waiter {
  bytes: number;
  grant: (granted: Grant) => void;
}

/** Reservations of a shared number of bytes, granted first come, first served. */
export class DecodeBudget {
  readonly #held = new Set<Grant>();
  readonly #waiting: Waiter[] = [];
  readonly #maxWaitMs: number;
  readonly #maxHoldMs: number;
  readonly #now: () => number;
  readonly #busyMessage: string;

  /** `total`: the bytes all decodes in flight may hold together. */
  constructor(readonly total: number, options: DecodeBudgetOptions = {}) {
    this.#maxWaitMs = options.maxWaitMs ?? 30_000;
    this.#maxHoldMs = options.maxHoldMs ?? 120_000;
    this.#now = options.now ?? Date.now;
    this.#busyMessage = options.busyMessage ?? "The PDF worker is decoding other large images; try again shortly";
  }

  /** Runs `task` once `bytes` (at most {@link DecodeBudget.total}) are reserved for it; gives them back when it settles. */
  async run<T>(bytes: number, task: () => Promise<T>): Promise<T> {
    const granted = await this.#reserve(Math.min(bytes, this.total));
    try {
      return await task();
    } finally {
      this.#held.delete(granted);
      this.#grantWaiting();
    }
  }

  /** Bytes not reserved now. */
  get free(): number {
    this.#expire();
    let held = 0;
    for (const grant of this.#held) held += grant.bytes;
    return this.total - held;
  }

  #reserve(bytes: number): Promise<Grant> {
    // Behind anyone waiting, even when this one would fit: a large decode is never starved by small ones.
    if (this.#waiting.length === 0 && bytes <= this.free) return Promise.resolve(this.#take(bytes));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        bytes,
        grant: (granted) => {
          clearTimeout(timer);
          resolve(granted);
        },
      };
      const timer = setTimeout(() => {
        this.#grantWaiting();
        const at = this.#waiting.indexOf(waiter);
        if (at === -1) return; // granted just now
        this.#waiting.splice(at, 1);
        reject(ServiceError.busy(this.#busyMessage, Math.ceil(this.#maxWaitMs / 1000)));
        // Those behind it may fit now.
        this.#grantWaiting();
      }, this.#maxWaitMs);
      this.#waiting.push(waiter);
    });
  }

  #take(bytes: number): Grant {
    const grant = { bytes, at: this.#now() };
    this.#held.add(grant);
    return grant;
  }

  /** Forgets reservations held longer than maxHoldMs. */
  #expire(): void {
    const oldest = this.#now() - this.#maxHoldMs;
    for (const grant of this.#held) if (grant.at < oldest) this.#held.delete(grant);
  }

  #grantWaiting(): void {
    for (let next = this.#waiting[0]; next !== undefined && next.bytes <= this.free; next = this.#waiting[0]) {
      this.#waiting.shift();
      next.grant(this.#take(next.bytes));
    }
  }
}
