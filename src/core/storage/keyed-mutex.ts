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
      await this.#wait(busy);
    }
    try {
      return await task();
    } finally {
      this.#release(key, busy);
    }
  }

  async #wait(busy: Busy): Promise<void> {
    const me: Waiter = { wake: () => {} };
    busy.queue.push(me);
    let suspect: Waiter | undefined;
    for (let looks = 1; ; looks++) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const woken = await new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), RECHECK_MS);
        // The waker only resolves: the timer is this request's own pending event in workerd until the
        // waiter runs again (cleared by the waker, another request, it could look hung meanwhile).
        me.wake = () => resolve(true);
      });
      clearTimeout(timer);
      if (busy.handedTo === me) {
        busy.handedTo = undefined;
        return;
      }
      // Woken, but a later waiter took the key meanwhile: back to the head of the queue.
      if (woken) {
        busy.queue.unshift(me);
        continue;
      }
      // Handed to the same waiter a whole period ago and still not taken: its request is gone.
      if (busy.handedTo !== undefined && busy.handedTo === suspect) {
        busy.handedTo = undefined;
        leave(busy, me);
        return;
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
      this.#busy.delete(key);
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
