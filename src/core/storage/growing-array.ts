/**
 * @module
 * A canonical JSON array (json-array.ts) held in a buffer with room to grow, for a store
 * that keeps the very bytes it is given (unstorage's memory driver): an append writes
 * `,\n{item}\n]` over the closing `\n]` in place and hands back a longer view of the same
 * buffer, so it copies only the new item (and the whole array only when the buffer
 * doubles), whatever the array already holds.
 */
import type { Bytes } from "../ports.ts";
import { encodeAppendedItem, encodeJsonArray } from "./json-array.ts";

const MIN_CAPACITY = 4_096;

/** A non-empty canonical JSON array that grows in place. */
export class GrowingJsonArray {
  #buffer: Bytes;
  #length: number;
  #count: number;
  #view: Bytes;

  /** Starts from the canonical bytes of `items` (at least one). */
  constructor(items: readonly unknown[]) {
    const bytes = encodeJsonArray(items);
    this.#buffer = new Uint8Array(Math.max(MIN_CAPACITY, 2 * bytes.length));
    this.#buffer.set(bytes);
    this.#length = bytes.length;
    this.#count = items.length;
    this.#view = this.#buffer.subarray(0, this.#length);
  }

  /** The items it holds. */
  get count(): number {
    return this.#count;
  }

  /** The array's bytes: a view of the buffer, valid until the next append writes over its tail. */
  get view(): Bytes {
    return this.#view;
  }

  /** Appends one item and answers the new view. */
  append(item: unknown): Bytes {
    const appended = encodeAppendedItem(item);
    const at = this.#length - 2; // over the closing "\n]"
    const length = at + appended.length;
    if (length > this.#buffer.length) {
      const grown = new Uint8Array(Math.max(2 * this.#buffer.length, 2 * length));
      grown.set(this.#buffer.subarray(0, at));
      this.#buffer = grown;
    }
    this.#buffer.set(appended, at);
    this.#length = length;
    this.#count++;
    this.#view = this.#buffer.subarray(0, length);
    return this.#view;
  }
}
