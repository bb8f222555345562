/**
 * @module
 * The plaintexts of small objects a keyring opened lately, as a database with transparent
 * encryption keeps decrypted pages in its buffer pool (docs/storage.md#encryption-at-rest).
 * A read still fetches the stored bytes every time; a kept plaintext is used only when those
 * bytes are, byte for byte, the envelope it was opened from under the same store key and
 * kind: the same envelope, key and additional data give the same plaintext, already
 * authenticated. So an object swapped or altered in the store is still refused, and one
 * rewritten (or re-wrapped by a rotation) is opened anew.
 */
import type { Bytes } from "../ports.ts";
import { sameBytes } from "../encoding/same-bytes.ts";

/** Bytes of envelopes and plaintexts a keyring keeps by default (about a thousand 2 KB documents). */
export const OPENED_OBJECTS_BYTES = 4 * 1024 * 1024;

const NOTHING: Bytes = new Uint8Array(0);

/** One opened object: its envelope as stored and its plaintext, both copies of this cache's own. */
interface OpenedObject {
  /** Its store key. */
  readonly key: string;
  /** What the envelope was opened as (part of its additional data). */
  readonly kind: string;
  /** The envelope's bytes, as they were stored (emptied once dropped). */
  envelope: Bytes;
  /** Its plaintext (emptied once dropped). */
  plaintext: Bytes;
  /** What the entry counts against the bound: both arrays and the store key. */
  readonly size: number;
  /** Read since the eviction scan last passed it (a second chance instead of a move per hit, which costs a Map delete and set). */
  used: boolean;
  /** Dropped: left in the queue until the scan passes it. */
  gone: boolean;
}

/** Recently opened small objects of one keyring, the oldest not read since dropped first past a bound in bytes. */
export class OpenedObjects {
  /** The most bytes of envelopes, plaintexts and store keys held at once (0: nothing is kept). */
  readonly limit: number;
  readonly #entries = new Map<string, OpenedObject>();
  // Oldest first, from #head: a Map's own oldest entry is found by skipping every deleted one
  // before it (about 20k instructions a drop once the cache is full and churning).
  #queue: OpenedObject[] = [];
  #head = 0;
  #gone = 0;
  readonly #equal: (a: Uint8Array, b: Uint8Array) => boolean;
  #bytes = 0;

  /** Holds at most `limit` bytes (see {@link OpenedObjects.limit}); compares envelopes with `equal` (a runtime's native compare, else {@link sameBytes}). */
  constructor(limit: number = OPENED_OBJECTS_BYTES, equal: (a: Uint8Array, b: Uint8Array) => boolean = sameBytes) {
    if (!(Number.isSafeInteger(limit) && limit >= 0)) throw new RangeError("the bound of opened objects is a whole number of bytes, 0 or more");
    this.limit = limit;
    this.#equal = equal;
  }

  /** Bytes held now (envelopes, plaintexts and store keys); never more than {@link OpenedObjects.limit}. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Objects held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** A copy of the plaintext of `envelope`, when it is the very envelope last opened as `kind` under `key`; else undefined. */
  plaintextOf(kind: string, key: string, envelope: Uint8Array): Bytes | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.kind !== kind || entry.envelope.length !== envelope.length || !this.#equal(entry.envelope, envelope)) return undefined;
    entry.used = true;
    // A copy: a reader may change or hand off what it is given, and the kept one must not move.
    return entry.plaintext.slice();
  }

  /** Keeps copies of an envelope just opened (authenticated) and its plaintext, when they fit the bound. */
  keep(kind: string, key: string, envelope: Uint8Array, plaintext: Uint8Array): void {
    const size = envelope.length + plaintext.length + 2 * key.length;
    this.forget(key);
    // One object may take at most a sixteenth: a few large ones must not push out every document.
    if (size * 16 > this.limit) return;
    // The oldest read since the scan last passed it goes to the back; the oldest not read goes.
    while (this.#bytes + size > this.limit) {
      const entry = this.#queue[this.#head++]!;
      if (entry.gone) this.#gone--;
      else if (entry.used) {
        entry.used = false;
        this.#queue.push(entry);
      } else {
        this.forget(entry.key);
        // forget() counts it as dropped and still queued; the scan has just passed it.
        this.#gone--;
      }
    }
    const entry: OpenedObject = { key, kind, envelope: envelope.slice(), plaintext: plaintext.slice(), size, used: false, gone: false };
    this.#entries.set(key, entry);
    this.#queue.push(entry);
    this.#bytes += size;
    // Drops and passed slots at most as many as live entries (and a few): the queue stays in proportion.
    if (this.#head + this.#gone > this.#entries.size + 64) {
      this.#queue = this.#queue.slice(this.#head).filter((kept) => !kept.gone);
      this.#head = 0;
      this.#gone = 0;
    }
  }

  /** Drops what is kept for `key` (it was written or deleted through this process). */
  forget(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.size;
    entry.gone = true;
    entry.envelope = entry.plaintext = NOTHING;
    this.#gone++;
  }
}
