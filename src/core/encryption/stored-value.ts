/**
 * @module
 * What an encrypted store writes for a value, and how it reads any stored value back: a whole
 * envelope; an append-only JSON array (an audit day) as an array of sealed items, one
 * envelope per item, so an append stays one item whatever the day's size; a KV record as a
 * prefixed string. A value in none of these forms was written before encryption was turned
 * on and is served as it is, until its next write or `keys encrypt-all` seals it.
 */
import type { Bytes } from "../ports.ts";
import { decodeBase64Url, encodeBase64Url } from "../encoding/base64url.ts";
import { encodeJsonArray, parseCheckedJsonArray, parseJsonArray, startsArray, UnreadableJsonItem } from "../storage/json-array.ts";
import { ServiceError } from "../errors.ts";
import { isDamagedEnvelope, isEnvelope, open, rewrap, seal } from "./envelope.ts";
import type { Keyring } from "./keyring.ts";

/** The one field of a sealed array item: `{"fa-enc": "<base64url envelope>"}`. */
export const SEALED_ITEM_FIELD = "fa-enc";
/** The prefix of a sealed KV record. */
export const SEALED_RECORD_PREFIX = "fa-enc:";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A sealed array item as it is stored. */
type SealedItem = { [SEALED_ITEM_FIELD]: string };

/** Whether an array item is a sealed one as stored (e.g. one left sealed because it did not open). */
export function isSealedItem(item: unknown): item is SealedItem {
  if (item === null || typeof item !== "object" || Array.isArray(item) || item instanceof UnreadableJsonItem) return false;
  // Every audit entry read is asked: the field first, so a plain entry costs no array of its keys.
  if (typeof (item as Partial<SealedItem>)[SEALED_ITEM_FIELD] !== "string") return false;
  // The field is a string (above): a sealed item has no other member.
  const keys = Object.keys(item);
  return keys.length === 1 && keys[0] === SEALED_ITEM_FIELD;
}

const itemText = (item: unknown): string => (item instanceof UnreadableJsonItem ? item.raw : JSON.stringify(item));

// Which values are arrays, and so may be sealed item by item.
export { startsArray };

/** Seals one array item's JSON text under the array's key. */
export async function sealItem(keyring: Keyring, key: string, item: unknown): Promise<SealedItem> {
  return { [SEALED_ITEM_FIELD]: encodeBase64Url(await seal(keyring, "item", key, encoder.encode(itemText(item)))) };
}

async function openItem(keyring: Keyring, key: string, item: SealedItem): Promise<string> {
  const envelope = decodeBase64Url(item[SEALED_ITEM_FIELD]);
  if (envelope === null || !isEnvelope(envelope)) {
    throw ServiceError.integrity(`Stored object ${key} failed its integrity check: an item is not a valid envelope`, { key });
  }
  return decoder.decode(await open(keyring, "item", key, envelope));
}

/** One stored array item as a reader gets it: a sealed item opened and parsed, any other as it is. */
export async function openItemValue(keyring: Keyring, key: string, item: unknown): Promise<unknown> {
  return isSealedItem(item) ? parseJsonArray(`[${await openItem(keyring, key, item)}]`).items[0] : item;
}

/** Options of how values are sealed. */
export interface SealOptions {
  /**
   * The store holds append-only JSON arrays (the audit store): every array value is sealed
   * item by item, so appends to it stay appends. Elsewhere an array is sealed item by item
   * only when its bytes are canonical, so it reads back byte for byte.
   */
  appendLog?: boolean;
}

/** The bytes an encrypted store writes for `value` under `key`. */
export async function sealValue(keyring: Keyring, key: string, value: Uint8Array, options: SealOptions = {}): Promise<Bytes> {
  if (startsArray(value)) {
    const parsed = parseCheckedJsonArray(value);
    if (options.appendLog || (parsed.canonical && !parsed.recovered)) {
      // Nothing to hide in an empty array, and appends need it to stay an array.
      if (parsed.items.length === 0) return encodeJsonArray([]) as Bytes;
      const sealed = await Promise.all(parsed.items.map((item) => sealItem(keyring, key, item)));
      return encodeJsonArray(sealed) as Bytes;
    }
  }
  return seal(keyring, "object", key, value);
}

/** How {@link openValue} treats an array item that does not open. */
export interface OpenOptions {
  /**
   * Keep an item that fails its integrity check sealed, as stored, instead of refusing the
   * whole value: an append-only log (an audit day) still serves its other items, and its
   * reader reports that one as unreadable.
   */
  keepUnopenedItems?: boolean;
  /**
   * The store holds only sealed values (its canary says so): a value that is not sealed was
   * written by something other than this service, and is refused. An array's own brackets
   * stay plaintext, so a whole array (an empty one, or items sealed one by one) is left to its reader.
   */
  refusePlaintext?: boolean;
}

/** The refusal of a plaintext value in a store whose values are all sealed. */
const notSealed = (key: string, what = "object"): ServiceError =>
  ServiceError.integrity(
    `Stored ${what} ${key} failed its integrity check: it is not encrypted, though every ${what} of its store was (keys encrypt-all), so something other than this service wrote it`,
    { key },
  );

/** The plaintext of any stored value: opened envelopes and items, plaintext as it is. */
export async function openValue(keyring: Keyring | undefined, key: string, stored: Bytes, options: OpenOptions = {}): Promise<Bytes> {
  if (isEnvelope(stored)) {
    if (keyring === undefined) throw ServiceError.integrity(`Stored object ${key} is encrypted, and DATA_ENCRYPTION_KEYS is not set`, { key });
    return open(keyring, "object", key, stored);
  }
  if (isDamagedEnvelope(stored)) {
    throw ServiceError.integrity(`Stored object ${key} failed its integrity check: its encryption header's magic or version is altered`, { key });
  }
  if (!startsArray(stored)) {
    if (options.refusePlaintext) throw notSealed(key);
    return stored;
  }
  const text = decoder.decode(stored);
  if (!text.includes(`"${SEALED_ITEM_FIELD}"`)) return stored;
  const { items } = parseJsonArray(text);
  if (!items.some(isSealedItem)) return stored;
  if (keyring === undefined) throw ServiceError.integrity(`Stored object ${key} holds encrypted entries, and DATA_ENCRYPTION_KEYS is not set`, { key });
  // One item after another: ten thousand opens at once hold every buffer alive together,
  // and the garbage collector then costs more than the decryption.
  const texts: string[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (!isSealedItem(item)) {
      texts[i] = itemText(item);
      continue;
    }
    try {
      texts[i] = await openItem(keyring, key, item);
    } catch (err) {
      if (!options.keepUnopenedItems || !(err instanceof ServiceError && err.kind === "integrity-failed")) throw err;
      texts[i] = itemText(item);
    }
  }
  return encoder.encode(`[\n${texts.join(",\n")}\n]`);
}

/** Whether every part of a stored value is sealed (or there is nothing to seal). */
export function isSealed(stored: Uint8Array): boolean {
  if (isEnvelope(stored)) return true;
  if (!startsArray(stored)) return false;
  const parsed = parseJsonArray(stored);
  return !parsed.recovered && parsed.items.every(isSealedItem);
}

/**
 * The stored value with every data key re-wrapped under the keyring's current key (bodies
 * untouched); null when nothing was under another key, or the value is plaintext.
 */
export async function rewrapValue(keyring: Keyring, key: string, stored: Bytes): Promise<Bytes | null> {
  if (isEnvelope(stored)) return rewrap(keyring, key, stored);
  if (!startsArray(stored)) return null;
  const parsed = parseJsonArray(stored);
  if (!parsed.items.some(isSealedItem)) return null;
  let changed = false;
  const items = await Promise.all(parsed.items.map(async (item) => {
    if (!isSealedItem(item)) return item;
    const envelope = decodeBase64Url(item[SEALED_ITEM_FIELD]);
    if (envelope === null || !isEnvelope(envelope)) throw ServiceError.integrity(`Stored object ${key} failed its integrity check: an item is not a valid envelope`, { key });
    const rewrapped = await rewrap(keyring, key, envelope);
    if (rewrapped === null) return item;
    changed = true;
    return { [SEALED_ITEM_FIELD]: encodeBase64Url(rewrapped) };
  }));
  return changed ? (encodeJsonArray(items) as Bytes) : null;
}

/** A KV record as an encrypted store writes it. */
export async function sealRecord(keyring: Keyring, key: string, value: string): Promise<string> {
  return SEALED_RECORD_PREFIX + encodeBase64Url(await seal(keyring, "record", key, encoder.encode(value)));
}

/** The plaintext of a stored KV record; with `refusePlaintext` (its store holds only sealed records), a plaintext one is refused. */
export async function openRecord(keyring: Keyring | undefined, key: string, stored: string, refusePlaintext = false): Promise<string> {
  if (!stored.startsWith(SEALED_RECORD_PREFIX)) {
    if (refusePlaintext) throw notSealed(key, "record");
    return stored;
  }
  if (keyring === undefined) throw ServiceError.integrity(`Stored record ${key} is encrypted, and DATA_ENCRYPTION_KEYS is not set`, { key });
  const envelope = decodeBase64Url(stored.slice(SEALED_RECORD_PREFIX.length));
  if (envelope === null || !isEnvelope(envelope)) throw ServiceError.integrity(`Stored record ${key} failed its integrity check: not a valid envelope`, { key });
  return decoder.decode(await open(keyring, "record", key, envelope));
}

/** A stored KV record re-wrapped under the current key; null when it needs nothing. */
export async function rewrapRecord(keyring: Keyring, key: string, stored: string): Promise<string | null> {
  if (!stored.startsWith(SEALED_RECORD_PREFIX)) return null;
  const envelope = decodeBase64Url(stored.slice(SEALED_RECORD_PREFIX.length));
  if (envelope === null || !isEnvelope(envelope)) throw ServiceError.integrity(`Stored record ${key} failed its integrity check: not a valid envelope`, { key });
  const rewrapped = await rewrap(keyring, key, envelope);
  return rewrapped === null ? null : SEALED_RECORD_PREFIX + encodeBase64Url(rewrapped);
}
