/**
 * @module
 * The parts of the Workers runtime's KV and R2 bindings this adapter uses, typed here so
 * the package needs no Workers type package (the real bindings satisfy these shapes).
 */

/** An R2 object's metadata. */
export interface R2ObjectLike {
  /** The object key, e.g. `u1/C-1/data.json`. */
  key: string;
  /** The object's etag, the version conditional writes name. */
  etag: string;
}

/** An R2 object with its body. */
export interface R2ObjectBodyLike extends R2ObjectLike {
  /** Reads the whole body. */
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** The subset of `R2Bucket` used here. */
export interface R2BucketLike {
  /** The object with its body, or null when absent. */
  get(key: string): Promise<R2ObjectBodyLike | null>;
  /** The object's metadata, or null when absent. */
  head(key: string): Promise<R2ObjectLike | null>;
  /** Writes an object; with `onlyIf`, null when the condition failed. */
  put(
    key: string,
    value: ArrayBuffer | ArrayBufferView | string | ReadableStream | null,
    options?: { onlyIf?: { etagMatches?: string; etagDoesNotMatch?: string } | Headers },
  ): Promise<R2ObjectLike | null>;
  /** Removes one or more objects. */
  delete(keys: string | string[]): Promise<void>;
  /** One page of the objects under a prefix. */
  list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<{
    objects: R2ObjectLike[];
    truncated: boolean;
    cursor?: string;
  }>;
}

/** The subset of `KVNamespace` used here. */
export interface KVNamespaceLike {
  /** The value as text, or null when absent. */
  get(key: string, type: "text"): Promise<string | null>;
  /** Writes a value. */
  put(key: string, value: string): Promise<void>;
  /** Removes a key. */
  delete(key: string): Promise<void>;
  /** One page of the keys under a prefix. */
  list(options?: { prefix?: string; cursor?: string }): Promise<{
    keys: { name: string }[];
    list_complete: boolean;
    cursor?: string;
  }>;
}
