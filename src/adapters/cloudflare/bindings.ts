/**
 * @module
 * The parts of the Workers runtime's KV and R2 bindings this adapter uses, typed here so
 * the package needs no Workers type package (the real bindings satisfy these shapes).
 */

/** An R2 object's metadata. */
export interface R2ObjectLike {
  key: string;
  etag: string;
}

/** An R2 object with its body. */
export interface R2ObjectBodyLike extends R2ObjectLike {
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** The subset of `R2Bucket` used here. */
export interface R2BucketLike {
  get(key: string): Promise<R2ObjectBodyLike | null>;
  head(key: string): Promise<R2ObjectLike | null>;
  put(
    key: string,
    value: ArrayBuffer | ArrayBufferView | string | ReadableStream | null,
    options?: { onlyIf?: { etagMatches?: string; etagDoesNotMatch?: string } | Headers },
  ): Promise<R2ObjectLike | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<{
    objects: R2ObjectLike[];
    truncated: boolean;
    cursor?: string;
  }>;
}

/** The subset of `KVNamespace` used here. */
export interface KVNamespaceLike {
  get(key: string, type: "text"): Promise<string | null>;
  put(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  list(options?: { prefix?: string; cursor?: string }): Promise<{
    keys: { name: string }[];
    list_complete: boolean;
    cursor?: string;
  }>;
}
