import { ServiceError } from "../errors.ts";

/** A caller waiting for a key: woken when the lock is handed to it. */
interface Waiter {
  wake(): void;
}

/** A busy key: in the map while a caller holds it or it was handed to a waiter that has not taken it yet. */
interface Busy {
  /** The waiter the last release handed the key to, until it takes it. */
  handedTo: Waiter | undefined;
  /** Waiters in arrival order. */
  queue: Waiter[];
}

/** How often a waiter looks at the lock again on its own (see {@link KeyedMutex}). */
const RECHECK_MS = 1000;
/** How many looks a waiter takes before it gives up with 503 (about 30 s). */
const MAX_RECHECKS = 30;

/**
 * Serializes work per key inside one process: the second caller for a key starts when the
 * first has finished, callers for other keys run freely. The map holds only busy keys.
 *
 * A waiter waits on a promise of its own that the releasing caller resolves, never on a
 * promise another caller made: workerd drops a continuation queued on a promise of a request
 * that has ended, and cancels as hung a request that waits with no I/O or timer of its own.
 * So a waiter also keeps a timer: it keeps the request alive, and when the key was handed to a
 * waiter that never took it (that request is gone), the next waiter takes it on its second look.
 * The timer settles a promise apart from the wake's: under load workerd sometimes never runs
 * the continuation of a promise another request resolved (the releasing request ended first),
 * and a waiter whose one promise was settled that way waited forever, canceled as hung; now its
 * timer's look finds the key handed to it (or taken meanwhile, and gets back in line).
 * A caller that cannot get the key within about 30 s is answered 503 with Retry-After.
 */
export class KeyedMutex {
  readonly #busy = new Map<string, Busy>();

  /** Runs `task` after every earlier task of the same key has settled (or refuses with 503 after about 30 s of waiting). */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let busy = this.#busy.get(key);
    if (busy === undefined) {
      busy = { handedTo: undefined, queue: [] };
      this.#busy.set(key, busy);
    } else {
      busy = await this.#wait(key, busy);
    }
    try {
      return await task();
    } finally {
      this.#release(key, busy);
    }
  }

  /** Waits in `busy`'s line until the key is this caller's; answers the record of the key it holds. */
  async #wait(key: string, busy: Busy): Promise<Busy> {
    const me: Waiter = { wake: () => {} };
    busy.queue.push(me);
    let suspect: Waiter | undefined;
    for (let looks = 1; ; looks++) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      // Two promises: the wake's (settled by another request) and the timer's (settled by this one's own event).
      const looked = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), RECHECK_MS)));
      const woken = await Promise.race([new Promise<boolean>((resolve) => (me.wake = () => resolve(true))), looked]);
      clearTimeout(timer);
      me.wake = () => {};
      if (busy.handedTo === me) {
        busy.handedTo = undefined;
        return busy;
      }
      const now = this.#busy.get(key);
      if (now !== busy) {
        // The key was freed while this waiter was out of line (handed it, it was taken as gone): it is free, or another caller's.
        if (now === undefined) {
          const mine: Busy = { handedTo: undefined, queue: [] };
          this.#busy.set(key, mine);
          return mine;
        }
        leave(busy, me);
        busy = now;
        busy.queue.unshift(me);
        continue;
      }
      // Woken, but a later waiter took the key meanwhile, or handed it and taken as gone before this look: back to the head of the line.
      if (woken || !busy.queue.includes(me)) {
        if (!busy.queue.includes(me)) busy.queue.unshift(me);
        continue;
      }
      // Handed to the same waiter a whole period ago and still not taken: its request is gone.
      if (busy.handedTo !== undefined && busy.handedTo === suspect) {
        busy.handedTo = undefined;
        leave(busy, me);
        return busy;
      }
      suspect = busy.handedTo;
      if (looks >= MAX_RECHECKS) {
        leave(busy, me);
        throw ServiceError.busy("Another request is still changing this record; try again shortly", 1);
      }
    }
  }

  #release(key: string, busy: Busy): void {
    const next = busy.queue.shift();
    if (next === undefined) {
      // Only the record this caller holds: a waiter that found the key freed may hold a newer one.
      if (this.#busy.get(key) === busy) this.#busy.delete(key);
      return;
    }
    busy.handedTo = next;
    next.wake();
  }
}

function leave(busy: Busy, waiter: Waiter): void {
  const at = busy.queue.indexOf(waiter);
  if (at !== -1) busy.queue.splice(at, 1);
}
