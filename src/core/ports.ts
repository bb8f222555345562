/**
 * @module
 * The ports: everything the core needs from the world, and nothing else. Adapters decide
 * what stands behind each one (files, Redis, R2, an SMTP server, Cloudflare Images...).
 */

/** Bytes backed by a plain `ArrayBuffer` (what `Response` and web crypto accept). */
export type Bytes = Uint8Array<ArrayBuffer>;

/** Byte storage keyed by `/`-separated keys (cases, annotations, audit days, images). */
export interface BlobStore {
  /** The stored bytes, or null when the key is absent. */
  get(key: string): Promise<Bytes | null>;
  /** Stores bytes; readers see the old or the new value, never a mix. */
  put(key: string, value: Uint8Array): Promise<void>;
  /** Removes a key; true when it existed. */
  delete(key: string): Promise<boolean>;
  /** True when the key exists. */
  has(key: string): Promise<boolean>;
  /** Keys that start with `prefix` (a `/`-ended folder or ""). */
  list(prefix: string): Promise<string[]>;
  /**
   * Replaces a key's value with `change(current)` so that concurrent updates of one key
   * never lose each other's work (serialized or compare-and-swap, per backend).
   */
  update(
    key: string,
    change: (current: Bytes | null) => Uint8Array | Promise<Uint8Array>,
    options?: {
      /**
       * The value is rewritten by every append (an audit head): a backend may write it in place,
       * keeping the value before it stored beside it until the next such update (the files store
       * writes two slots by turns). A function says so of the stored value being replaced (a
       * wrapping store: only when that value may stay). Without it, an update leaves nothing of
       * the value it replaced.
       */
      inPlace?: boolean | ((stored: Bytes) => boolean);
    },
  ): Promise<Uint8Array>;
  /**
   * Appends one item to the JSON array stored at `key` (created when absent) and returns
   * the number of items after the append. Concurrent appends never lose an item.
   * With `atIndex`, the item is meant to be item number `atIndex` (from 0): when the array
   * already holds more items than that, it was appended before, so nothing is written and
   * the current count is returned (an append that may be retried by several writers).
   * `item` is the plain value; a wrapping store (encryption) sees and passes it as such.
   * With `options.deferSync` on a store that has {@link BlobStore.syncJsonArray}, the append
   * may resolve before it is durable; it is durable once a later `syncJsonArray(key)` resolved.
   * The caller keeps a durable copy of the item until then (the audit head).
   */
  appendToJsonArray(
    key: string,
    item: unknown,
    atIndex?: number,
    options?: {
      /**
       * The caller holds a durable copy of the item until a later {@link BlobStore.syncJsonArray}
       * of the key resolved, so a store that has it may leave the append's flush to that call
       * instead of making it before the append resolves.
       */
      deferSync?: boolean;
      /**
       * Told, before the append resolves, that `atIndex` was given and the array already held
       * more items, so nothing was written: the caller can then check whose item has that place.
       */
      skipped?: () => void;
    },
  ): Promise<number>;
  /**
   * Makes every item appended to the JSON array at `key` durable. Present only on a store whose
   * appends with `deferSync` may resolve before they are (files with fsync).
   */
  syncJsonArray?(key: string): Promise<void>;
  /**
   * Item `index` (from 0) of the JSON array stored at `key`, as {@link BlobStore.get} would
   * give it, or undefined when the array holds no such item (or the key is absent), for a
   * store that can read it without the whole array (a day kept in blocks reads one block).
   * Without it, readers use {@link BlobStore.get}.
   */
  jsonArrayItem?(key: string, index: number): Promise<unknown>;
  /**
   * The stored bytes as a stream and their length, for a store that makes them piece by piece
   * (an encrypted store opens one chunk at a time); null when the key is absent. Without it,
   * readers use {@link BlobStore.get}.
   */
  getStream?(key: string): Promise<{ size: number; body: ReadableStream<Uint8Array> } | null>;
  /**
   * Stores the `size` bytes `body` yields, as {@link BlobStore.put} does (readers see the old
   * or the new value), holding no more of them at once than the backend needs: a file
   * written then renamed, an upload of known length, chunks behind a head; a backend that
   * can only write whole values joins them first. Rejects, storing nothing, when the body
   * fails or does not hold `size` bytes. Without it, writers use {@link BlobStore.put}.
   */
  putStream?(key: string, size: number, body: ReadableStream<Uint8Array>): Promise<void>;
  /**
   * Fills `into` with the stored bytes from `offset` on, making no buffer of its own (a
   * positional read of a file); answers how many it read (fewer only at the value's end), or
   * null when the key is absent. Only a store whose stored bytes are the value has it (never
   * an encrypting one). Without it, readers use {@link BlobStore.get}.
   */
  readInto?(key: string, offset: number, into: Uint8Array): Promise<number | null>;
  /**
   * Present on a store that one process holds (files, as `KvStore.replaceIf` assumes too;
   * memory): the per-key lock that every record history over this store takes, whichever code
   * made it, and word of the store's writes, so that a history keeps each key's newest version
   * in memory and writes a version as one append (core/history/key-history.ts). Wrapping stores
   * pass it on as it is.
   */
  readonly soleWriter?: {
    /** Runs `task` alone among the tasks of `key` (once those before it settled). */
    run<T>(key: string, task: () => Promise<T>): Promise<T>;
    /**
     * Calls `listener` with the key whenever the store starts or ends replacing or deleting a
     * key's value (put, putStream, update, delete; appends, which only add, are not told): a
     * record history drops what it kept in memory of that key's history then.
     */
    onWrite(listener: (key: string) => void): void;
  };
}

/** Options of {@link BlobStore.appendToJsonArray}. */
export type AppendOptions = NonNullable<Parameters<BlobStore["appendToJsonArray"]>[3]>;

/** Options of {@link BlobStore.update}. */
export type UpdateOptions = NonNullable<Parameters<BlobStore["update"]>[2]>;

/** String storage for small records (user records, keyed by user id). */
export interface KvStore {
  /** The stored string (a user record's JSON), or null when the key is absent. */
  get(key: string): Promise<string | null>;
  /** Stores a string under a key, replacing any previous value. */
  put(key: string, value: string): Promise<void>;
  /** Removes a key; true when it existed. */
  delete(key: string): Promise<boolean>;
  /** Keys that start with `prefix`. */
  list(prefix: string): Promise<string[]>;
  /**
   * Compare-and-set: stores `value` only if the stored string is exactly `expected` (or, with
   * `expected` null, only if the key is absent), as one atomic step of the backend; true when
   * written. Present where the backend has a compare-and-swap (Redis, S3, Deno KV) or one
   * process holds the store (memory, files); absent on Workers KV, which has none. User records
   * use it so that read-change-write stays lossless across processes.
   */
  replaceIf?(key: string, expected: string | null, value: string): Promise<boolean>;
}

/** One plain-text message (the account-deletion mails). */
export interface MailMessage {
  /** The sender (`MAIL_FROM`). */
  from: string;
  /** The one recipient: the user whose account is deleted, or `ADMIN_EMAIL`. */
  to: string;
  /** The subject line. */
  subject: string;
  /** Plain text; transports that send HTML escape it. */
  text: string;
}

/** Sends mail; a rejected promise means the message was not accepted for delivery. */
export interface Mailer {
  /** Hands one message to the transport (outbox file, SMTP or HTTP mail API). */
  send(message: MailMessage): Promise<void>;
}

/** An uploaded image as the image worker receives it. */
export interface ImageUpload {
  /** The image bytes, read once from the multipart body and never copied again by the host. */
  bytes: Bytes;
  /** The file name the client sent in the `file` form field (docs/api.md#image-worker). */
  filename: string;
  /** The media type decided from the bytes (never from the name). */
  contentType: string;
  /** Width in pixels, from the image's header (absent for images stored before it was read). */
  width?: number;
  /** Height in pixels, from the image's header. */
  height?: number;
  /** The user whose case will list the image, when known (identity mode). */
  owner?: string;
}

/** The stored facts of one hosted image. */
export interface HostedImage {
  /** The image id, as used in `DELETE /{imageId}` (docs/api.md#image-worker). */
  id: string;
  /** The file name given at upload. */
  filename: string;
  /** ISO 8601 upload time. */
  uploaded: string;
  /** Delivery URLs, one per variant. */
  variants: string[];
}

/** Hosts images (the image worker itself, or Cloudflare Images). */
export interface ImageHost {
  /** Stores an uploaded image and answers its id and delivery URLs (docs/api.md#image-worker, `POST /`). */
  upload(image: ImageUpload): Promise<HostedImage>;
  /**
   * As {@link ImageHost.upload}, the bytes written to the host's store as they come, for a host
   * that can (a case import streams each image from the spooled package); rejects, storing
   * nothing, when the stream errors. Without it, callers join the bytes and use `upload`.
   */
  uploadStream?(image: Omit<ImageUpload, "bytes"> & {
    /** Its length in bytes. */
    size: number;
    /** Its bytes; when the stream errors (or does not hold `size` bytes) nothing is stored. */
    body: ReadableStream<Uint8Array>;
  }): Promise<HostedImage>;
  /** Removes an image; false when it did not exist. */
  delete(imageId: string): Promise<boolean>;
  /** A time-limited signed URL for a delivery URL of this host. */
  signedUrl(deliveryUrl: string): Promise<string>;
  /**
   * The image id of a delivery URL of this host (400 for any other URL). With {@link ownerOf},
   * lets identity mode check who may sign the URL.
   */
  imageIdOf?(deliveryUrl: string): string;
  /** The user recorded at upload; undefined when none was recorded, null when the image does not exist. */
  ownerOf?(imageId: string): Promise<string | undefined | null>;
  /**
   * For hosts that serve bytes themselves: answers a request for `{delivery}/{imageId}/{variant}`
   * carrying `exp` and `sig` in `query` (403 when the signature is missing, bad or expired).
   */
  serve?(imageId: string, variant: string, query: URLSearchParams, ifNoneMatch: string | undefined): Promise<Response>;
}

/**
 * Builds the host for one request from the URL under which this worker delivers images
 * (`PUBLIC_URL`, or the request's origin, then the worker's mount and `/delivery`).
 */
export type ImageHostFactory = (deliveryBase: string) => ImageHost;

/** The answer of a CAPTCHA verification service (Turnstile's siteverify shape). */
export interface CaptchaOutcome {
  /** Whether the token passed; a failed check still answers 200 (docs/api.md#errors). */
  success: boolean;
  /** Why the token failed, as the verification service names it; empty on success. */
  "error-codes": string[];
  /** ISO 8601 time the challenge was solved. */
  challenge_ts?: string;
  /** The site host name the challenge was solved on. */
  hostname?: string;
}

/** Verifies a CAPTCHA token with the external service. */
export interface CaptchaVerifier {
  /** Checks a client's token, passing the client IP along when the adapter knows it (docs/api.md#captcha-worker). */
  verify(token: string, remoteIp: string | undefined): Promise<CaptchaOutcome>;
}

/** The time; a port so tests control it. */
export interface Clock {
  /** The current time (audit entries and audit days are dated by it, in UTC). */
  now(): Date;
}

/** The system clock. */
export const systemClock: Clock = { now: () => new Date() };
