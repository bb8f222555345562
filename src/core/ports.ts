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
  update(key: string, change: (current: Bytes | null) => Uint8Array | Promise<Uint8Array>): Promise<Uint8Array>;
  /**
   * Appends one item to the JSON array stored at `key` (created when absent) and returns
   * the number of items after the append. Concurrent appends never lose an item.
   */
  appendToJsonArray(key: string, item: unknown): Promise<number>;
}

/** String storage for small records (user records, keyed by user id). */
export interface KvStore {
  get(key: string): Promise<string | null>;
  put(key: string, value: string): Promise<void>;
  /** Removes a key; true when it existed. */
  delete(key: string): Promise<boolean>;
  /** Keys that start with `prefix`. */
  list(prefix: string): Promise<string[]>;
}

/** One plain-text message (the account-deletion mails). */
export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  /** Plain text; transports that send HTML escape it. */
  text: string;
}

/** Sends mail; a rejected promise means the message was not accepted for delivery. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** An uploaded image as the image worker receives it. */
export interface ImageUpload {
  /** The bytes, streamed so a large image is not copied needlessly. */
  body: ReadableStream<Uint8Array> | Uint8Array;
  filename: string;
  /** Size in bytes when known. */
  size?: number;
}

/** The stored facts of one hosted image. */
export interface HostedImage {
  id: string;
  filename: string;
  /** ISO 8601 upload time. */
  uploaded: string;
  /** Delivery URLs, one per variant. */
  variants: string[];
}

/** Hosts images (the image worker itself, or Cloudflare Images). */
export interface ImageHost {
  upload(image: ImageUpload): Promise<HostedImage>;
  /** Removes an image; false when it did not exist. */
  delete(imageId: string): Promise<boolean>;
  /** A time-limited signed URL for a delivery URL of this host. */
  signedUrl(deliveryUrl: string): Promise<string>;
  /** For hosts that serve bytes themselves: answers a request for a signed delivery URL. */
  serve?(request: Request): Promise<Response>;
}

/** The answer of a CAPTCHA verification service (Turnstile's siteverify shape). */
export interface CaptchaOutcome {
  success: boolean;
  "error-codes": string[];
  challenge_ts?: string;
  hostname?: string;
}

/** Verifies a CAPTCHA token with the external service. */
export interface CaptchaVerifier {
  verify(token: string, remoteIp: string | undefined): Promise<CaptchaOutcome>;
}

/** The time; a port so tests control it. */
export interface Clock {
  now(): Date;
}

/** The system clock. */
export const systemClock: Clock = { now: () => new Date() };
