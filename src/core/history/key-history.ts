/**
 * @module
 * The histories of data keys (docs/storage.md#record-history): every write and delete of a key
 * through {@link KeyHistories} keeps the version it replaces, and the versions form a hash chain.
 *
 * A write is ordered by the key's head (one small object holding the newest version's record and
 * bytes), replaced with the store's lossless `update` (a per-key lock in one process, the
 * backend's compare-and-swap across processes). Before the head moves on, the version it named is
 * made sure to be in the two append-only arrays (records, contents); after it moved, the new one
 * is appended there, and the key's value is set to what the head names. So N acknowledged writes
 * are N versions on every backend, and a PUT appends to its history instead of rewriting it.
 */
import type { BlobStore, Bytes, Clock } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import { KeyedMutex } from "../storage/keyed-mutex.ts";
import { forgetJsonText, parseJsonArray, useJsonText } from "../storage/json-array.ts";
import { sha256Hex } from "../encoding/digest.ts";
import { canonicalJson } from "../encoding/canonical-json.ts";
import { sameBytes } from "../encoding/same-bytes.ts";
import { type HistoryKeys, historyKeys } from "./history-keys.ts";
import {
  bytesOf,
  contentsOf,
  EMPTY_SHA256,
  isVersionRecord,
  plainRecord,
  recordHash,
  type VersionContents,
  type VersionRecord,
} from "./version-record.ts";
import { verifyVersions } from "./verify-history.ts";
import type { HistoryVerification } from "./verify-history.ts";

/** What `GET /data/{key}?history` answers. */
export interface KeyHistory {
  /** The data key. */
  key: string;
  /** Every version kept, oldest first. */
  versions: VersionRecord[];
  /** The version the key reads as now; null when the newest is a deletion mark (or none is recorded). */
  current: number | null;
}

/** The current version of a key: what a review pins. */
export interface CurrentVersion {
  /** Its number. */
  version: number;
  /** Hex SHA-256 of its bytes. */
  sha256: string;
  /** Its record. */
  record: VersionRecord;
}

/** Options of {@link createKeyHistories}. */
export interface KeyHistoriesOptions {
  /** Dates each version (`writtenAt`). */
  clock: Clock;
  /** Hex SHA-256 of a text, synchronous (a runtime's native one: the `auditHash` port); default web crypto's. */
  hash?: ((text: string) => string) | undefined;
  /** Hex SHA-256 of bytes, synchronous (the runtime's native one under `serve`), for values up to 1 MiB; default and above, web crypto's, whose every call is a trip to a worker thread. */
  digest?: ((bytes: Uint8Array) => string) | undefined;
}

/** Reads and writes data keys so that each keeps its history. */
export interface KeyHistories {
  /**
   * Stores `bytes` as the key's new version (a PUT) and sets the key's value to them; answers
   * the version's record. A value stored before the key had a history becomes version 1 first.
   */
  write(key: string, bytes: Uint8Array, writtenBy: string): Promise<VersionRecord>;
  /**
   * Stores `change(current)` as the key's new version, where `current` is the newest version's
   * bytes (null when none, or a deletion mark), so that a concurrent write is never lost between
   * the read and the write (a confirmation added to annotations). `change` may run more than once
   * (a conflict across processes) and must only compute. Answers the version's record and bytes.
   */
  update(key: string, change: (current: Bytes | null) => Uint8Array | Promise<Uint8Array>, writtenBy: string): Promise<{ record: VersionRecord; bytes: Uint8Array }>;
  /**
   * Records a deletion mark (a DELETE) and removes the key's value; answers the mark's record,
   * or null when the key holds nothing to delete (never stored, or already deleted).
   */
  remove(key: string, writtenBy: string): Promise<VersionRecord | null>;
  /** The key's versions, oldest first; null when the key never existed (no history and no value). */
  list(key: string): Promise<KeyHistory | null>;
  /**
   * Version `version`'s bytes exactly as they were stored; null for a deletion mark or a
   * version the key does not have. Throws an integrity failure (500) when the stored bytes
   * do not match their record's `sha256`.
   */
  read(key: string, version: number): Promise<Bytes | null>;
  /**
   * The key's value, checked against the version its head names as current (a `GET`): served
   * when it is that version, when the key has no history, or within {@link SETTLING_MS} of the
   * head's write (a write settling); past that, an earlier version of the key put back in the
   * store is refused (integrity failure, 500). A value written around the history
   * (`DATA_HISTORY=off`) matches no version and is served as before; a missing one reads as missing.
   */
  readCurrent(key: string): Promise<Bytes | null>;
  /** Checks every version's bytes and the chain of records; names the first bad version. */
  verify(key: string): Promise<HistoryVerification>;
  /** The key's current version (number, sha256, record); null when it has no history or reads as deleted. */
  current(key: string): Promise<CurrentVersion | null>;
  /**
   * Gives a key stored before history was kept its version 1 (its stored value, `writtenBy`
   * `"before-history"`) when it has no history yet; answers the current version as {@link current}.
   */
  adopt(key: string): Promise<CurrentVersion | null>;
}

/** The stored head of a key's history. */
interface Head {
  format: typeof HEAD_FORMAT;
  key: string;
  /** The newest version's record. */
  record: VersionRecord;
  /** Its hash (the next record's `previous`). */
  hash: string;
  /** Its contents, so that it is never lost between the head's write and the arrays' appends. */
  contents: VersionContents;
}

const HEAD_FORMAT = "forensic-annotation/history-head@1";

/** A move of the head: the new head and its stored bytes. */
interface Step {
  head: Head;
  bytes: Uint8Array;
  /** The sole-writer store's mark of the head's write (`soleWriter.lastWrite`), when it has one. */
  written?: number | undefined;
}
/** The `writtenBy` of a value found stored without a history. */
export const BEFORE_HISTORY = "before-history";
const encoder = new TextEncoder();
/** Thrown inside an update that has nothing to write. */
const NOTHING = new Error("nothing to write");

/**
 * How long after its head was written a value that is not the head's version is taken for a
 * write still settling in another process, or one that failed before its value (the value is
 * written last), and served as it is. Past it, a value that is an earlier version of the key is
 * refused: put back in the store (docs/storage.md#record-history).
 */
export const SETTLING_MS = 60_000;

/** The largest value hashed by the synchronous `digest` (about 2 ms on the main thread); larger ones by web crypto. */
const SYNC_DIGEST_BYTES = 1024 * 1024;

/** The largest value, and the most bytes of values, kept as found current (a few hundred documents). */
const MAX_CHECKED_VALUE = 64 * 1024;
const MAX_CHECKED_BYTES = 4 * 1024 * 1024;

/** Keys whose arrays this process knows hold the head's version, by key: the head hash appended last. */
const MAX_KNOWN = 4_096;

function parseHead(bytes: Uint8Array, key: string): Head {
  let head: unknown;
  try {
    head = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    head = undefined;
  }
  const h = head as Partial<Head> | undefined;
  if (h === undefined || h === null || h.format !== HEAD_FORMAT || !isVersionRecord(h.record) || typeof h.hash !== "string" || typeof h.contents !== "object" || h.contents === null) {
    throw ServiceError.integrity(`The history of ${key} cannot be read: its head is not a history head`, { key });
  }
  if (h.key !== key) throw ServiceError.integrity(`The history of ${key} cannot be read: its head is the history of another key`, { key });
  return h as Head;
}

/**
 * A head's stored bytes: `JSON.stringify(head)`, with its record's and contents' texts made once
 * and lent to the appends of the same objects (json-array.ts), which would make them again
 * (on Node 20 serializing a document costs about 5 us a kilobyte).
 */
function encodeHead(head: Head): Uint8Array {
  const recordText = JSON.stringify(head.record);
  const contentsText = JSON.stringify(head.contents);
  useJsonText(head.record, recordText);
  useJsonText(head.contents, contentsText);
  return encoder.encode(`{"format":${JSON.stringify(head.format)},"key":${JSON.stringify(head.key)},"record":${recordText},"hash":${JSON.stringify(head.hash)},"contents":${contentsText}}`);
}

/** Creates the histories of the data keys of `data` (the data store, encrypted or not). */
export function createKeyHistories(data: BlobStore, options: KeyHistoriesOptions): KeyHistories {
  const { clock } = options;
  const hashText = options.hash;
  // The synchronous hash blocks the event loop: a large document (up to MAX_JSON_BYTES) goes to web crypto's worker thread.
  const digestOf = (bytes: Uint8Array): string | Promise<string> => (options.digest === undefined || bytes.length > SYNC_DIGEST_BYTES ? sha256Hex(bytes) : options.digest(bytes));
  const hashOf = (record: VersionRecord): string | Promise<string> => (hashText === undefined ? recordHash(record) : hashText(canonicalJson(record)));
  // One lock per key for every history over a store one process holds (a service and a data
  // worker mounted beside it share it), so that no other writer moves the head under a write.
  const writes = data.soleWriter ?? new KeyedMutex();
  // The head this process last wrote or read, per key, with its bytes: the next write of the key
  // parses the stored head again only when another process changed it.
  const parsed = new Map<string, { bytes: Uint8Array; head: Head }>();
  const headOf = (stored: Uint8Array, key: string): Head => {
    const known = parsed.get(key);
    if (known !== undefined && sameBytes(known.bytes, stored)) return known.head;
    return parseHead(stored, key);
  };
  const keep = (key: string, bytes: Uint8Array, head: Head): Uint8Array => {
    parsed.delete(key);
    if (parsed.size >= MAX_KNOWN) parsed.delete(parsed.keys().next().value ?? key);
    parsed.set(key, { bytes, head });
    return bytes;
  };
  /** Whether the stored head is still `mine` (the bytes this process wrote last, or a head naming the same record). */
  const headIsMine = (stored: Uint8Array | null, mine: Head): boolean => {
    if (stored === null) return false;
    const known = parsed.get(mine.key);
    if (known !== undefined && known.head === mine && sameBytes(known.bytes, stored)) return true;
    try {
      return parseHead(stored, mine.key).hash === mine.hash;
    } catch {
      return false;
    }
  };
  // The head hash this process last saw appended to both arrays, per key: skips the check.
  const appended = new Map<string, string>();

  const readHead = async (keys: HistoryKeys, key: string): Promise<Head | null> => {
    const stored = await data.get(keys.head);
    return stored === null ? null : headOf(stored, key);
  };

  /** Makes sure both arrays hold the version the head names (appends given its index write nothing when they do). */
  const ensureAppended = async (keys: HistoryKeys, key: string, head: Head): Promise<void> => {
    if (appended.get(key) === head.hash) return;
    const index = head.record.version - 1;
    await data.appendToJsonArray(keys.contents, head.contents, index);
    await data.appendToJsonArray(keys.versions, head.record, index);
    if (appended.size >= MAX_KNOWN) appended.clear();
    appended.set(key, head.hash);
  };

  const headFor = async (key: string, record: VersionRecord, contents: VersionContents): Promise<Head> => ({
    format: HEAD_FORMAT,
    key,
    record,
    hash: await hashOf(record),
    contents,
  });

  /** The head of a value stored before its key had a history: version 1, as it is. */
  const adoptedHead = async (key: string, stored: Uint8Array): Promise<Head> => {
    const record: VersionRecord = {
      version: 1,
      sha256: await digestOf(stored),
      size: stored.length,
      writtenAt: clock.now().toISOString(),
      writtenBy: BEFORE_HISTORY,
      deleted: false,
      previous: null,
    };
    return await headFor(key, record, contentsOf(1, stored));
  };

  /**
   * Moves the head to a new version made by `next` from the head before it (null: none), and
   * answers the step (null when `next` answered null: nothing to record). A value stored without
   * a history becomes version 1 first, in a step of its own.
   */
  const advance = async (keys: HistoryKeys, key: string, next: (prior: Head | null) => Promise<Head | null>): Promise<Step | null> => {
    for (;;) {
      let adopted = false;
      let step: Step | null = null;
      const written = await data.update(keys.head, async (stored) => {
        adopted = false;
        step = null;
        const prior = stored === null ? null : headOf(stored, key);
        if (prior === null) {
          const value = await data.get(key);
          if (value !== null) {
            adopted = true;
            return encoder.encode(JSON.stringify(await adoptedHead(key, value)));
          }
        } else {
          await ensureAppended(keys, key, prior);
        }
        const made = await next(prior);
        if (made === null) throw NOTHING;
        const bytes = keep(key, encodeHead(made), made);
        step = { head: made, bytes };
        return bytes;
      }, { inPlace: true }).then(() => true, (err: unknown) => {
        if (err === NOTHING) return false;
        throw err;
      });
      if (!written) return null;
      if (adopted) continue; // the stored value is version 1 now; record this write after it
      return step === null ? null : { ...(step as Step), written: data.soleWriter?.lastWrite?.(keys.head) };
    }
  };

  /**
   * Sets the key's value to what its head names now: the bytes under the value's own
   * compare-and-swap with the head read inside it, so a writer overtaken by a newer version
   * (another process) writes that one's bytes, never its own older ones; a deletion mark
   * removes the value. The value's write is the last store call: a failure before it leaves the
   * value as it was.
   */
  const settle = async (keys: HistoryKeys, key: string, mine: Head, written: number | undefined, mineBytes?: Uint8Array): Promise<void> => {
    const { soleWriter } = data;
    // The store wrote the head nothing since this write moved it (its mark unchanged): no read back.
    const unchanged = written !== undefined && soleWriter?.lastWrite?.(keys.head) === written;
    if (soleWriter !== undefined && (unchanged || headIsMine(await data.get(keys.head), mine))) {
      // No other process writes the store, and every history over it writes the key under the
      // store's lock: the head is still mine (a restore may have replaced it: then as below).
      if (mine.record.deleted) await data.delete(key);
      else await data.put(key, mineBytes ?? bytesOf(mine.contents) ?? new Uint8Array());
      return;
    }
    let deleted = mine.record.deleted;
    if (!deleted) {
      await data.update(key, async () => {
        const now = (await readHead(keys, key)) ?? mine;
        if (now.record.deleted) {
          deleted = true;
          throw NOTHING;
        }
        return now.hash === mine.hash && mineBytes !== undefined ? mineBytes : bytesOf(now.contents) ?? new Uint8Array();
      }).catch((err: unknown) => {
        if (err !== NOTHING) throw err;
      });
    }
    if (deleted) await data.delete(key);
  };

  /**
   * Completes a step: the version into the arrays, then the value. A failure leaves the value as
   * it was and the version in the head, which the key's next write stores in the arrays (as after
   * a crash between the two); that version then reads as written though its request failed.
   */
  const complete = async (keys: HistoryKeys, key: string, step: Step, bytes?: Uint8Array): Promise<void> => {
    try {
      await ensureAppended(keys, key, step.head);
    } finally {
      forgetJsonText(step.head.record);
      forgetJsonText(step.head.contents);
    }
    await settle(keys, key, step.head, step.written, bytes);
  };

  const newRecord = async (prior: Head | null, bytes: Uint8Array | null, writtenBy: string, digest?: string): Promise<VersionRecord> => ({
    version: (prior?.record.version ?? 0) + 1,
    sha256: bytes === null ? EMPTY_SHA256 : digest ?? await digestOf(bytes),
    size: bytes?.length ?? 0,
    writtenAt: clock.now().toISOString(),
    writtenBy,
    deleted: bytes === null,
    previous: prior?.hash ?? null,
  });

  // Values this process found to be their head's version, and when: the same bytes read again
  // within SETTLING_MS are served without reading the head (a tolerance reads allow anyway).
  const checked = new Map<string, { value: Uint8Array; at: number }>();
  let checkedBytes = 0;
  const forgetChecked = (key: string) => {
    const known = checked.get(key);
    if (known === undefined) return;
    checked.delete(key);
    checkedBytes -= known.value.length;
  };
  const rememberChecked = (key: string, value: Uint8Array) => {
    forgetChecked(key);
    if (value.length > MAX_CHECKED_VALUE) return;
    checked.set(key, { value, at: clock.now().getTime() });
    checkedBytes += value.length;
    for (const old of checked.keys()) {
      if (checkedBytes <= MAX_CHECKED_BYTES) break;
      forgetChecked(old);
    }
  };

  /** A new version whose bytes `change` makes from the newest version's. */
  const writeWith = (key: string, change: (current: Bytes | null) => Uint8Array | Promise<Uint8Array>, writtenBy: string, fixed?: { bytes: Uint8Array; digest: string }) => {
    const keys = historyKeys(key);
    return writes.run(key, async () => {
      forgetChecked(key);
      let bytes: Uint8Array = new Uint8Array();
      const step = (await advance(keys, key, async (prior) => {
        // A plain write's bytes do not depend on the version before: hashed once, outside the swap.
        bytes = fixed?.bytes ?? await change(prior === null || prior.record.deleted ? null : bytesOf(prior.contents));
        const record = await newRecord(prior, bytes, writtenBy, fixed?.digest);
        return await headFor(key, record, contentsOf(record.version, bytes));
      }))!;
      await complete(keys, key, step, bytes);
      return { record: plainRecord(step.head.record), bytes };
    });
  };

  const current = async (key: string): Promise<CurrentVersion | null> => {
    const head = await readHead(historyKeys(key), key);
    if (head === null || head.record.deleted) return null;
    return { version: head.record.version, sha256: head.record.sha256, record: plainRecord(head.record) };
  };

  /** The stored records and contents, with the head's version added when its appends have not landed yet. */
  const stored = async (keys: HistoryKeys, key: string) => {
    const head = await readHead(keys, key);
    const [versionsBytes, contentsBytes] = await Promise.all([data.get(keys.versions), data.get(keys.contents)]);
    const records = versionsBytes === null ? [] : parseJsonArray(versionsBytes).items;
    const contents = contentsBytes === null ? [] : parseJsonArray(contentsBytes).items;
    return { head, records, contents };
  };

  /** Whether the stored value is the version the head names (a deletion mark: no value). */
  const isHeadVersion = (head: Head, value: Bytes | null): boolean => {
    if (head.record.deleted) return value === null;
    if (value === null || value.length !== head.record.size) return false;
    const bytes = bytesOf(head.contents);
    return bytes !== null && sameBytes(value, bytes);
  };

  const readCurrent = async (key: string): Promise<Bytes | null> => {
    const keys = historyKeys(key);
    const known = checked.get(key);
    let value: Bytes | null;
    let head: Head | null;
    if (known !== undefined && clock.now().getTime() - known.at < SETTLING_MS) {
      value = await data.get(key);
      if (value !== null && sameBytes(value, known.value)) return value;
      head = await readHead(keys, key);
    } else {
      [value, head] = await Promise.all([data.get(key), readHead(keys, key)]);
    }
    if (head !== null && value !== null && isHeadVersion(head, value)) rememberChecked(key, value);
    if (head === null || value === null || isHeadVersion(head, value)) return value;
    // A write of this process may be settling: read again after it, the head first, so that the
    // value read is never older than the head read (a write sets the value after its head).
    await writes.run(key, () => Promise.resolve());
    const now = await readHead(keys, key);
    const again = await data.get(key);
    if (now === null || again === null || isHeadVersion(now, again)) return again;
    // Another process's write settling, or one that failed before its value: the value as it is.
    if (clock.now().getTime() - Date.parse(now.record.writtenAt) < SETTLING_MS) return again;
    const digest = await digestOf(again);
    const { records } = await stored(keys, key);
    const earlier = records.find((record) => isVersionRecord(record) && !record.deleted && record.version < now.record.version && record.sha256 === digest && record.size === again.length);
    if (earlier !== undefined) {
      const { version } = earlier as VersionRecord;
      throw ServiceError.integrity(
        `Stored object ${key} failed its integrity check: it is version ${version}, and its history names version ${now.record.version} as current (an older version was put back in the store, or the write of version ${now.record.version} failed before its value: write the document again)`,
        { key, version, current: now.record.version },
      );
    }
    // Written around the history (DATA_HISTORY=off): no version of it, served as before.
    return again;
  };

  return {
    readCurrent,
    async write(key, bytes, writtenBy) {
      const digest = await digestOf(bytes);
      return (await writeWith(key, () => bytes, writtenBy, { bytes, digest })).record;
    },
    update(key, change, writtenBy) {
      return writeWith(key, change, writtenBy);
    },
    remove(key, writtenBy) {
      const keys = historyKeys(key);
      return writes.run(key, async () => {
        forgetChecked(key);
        const step = await advance(keys, key, async (prior) => {
          // Nothing to delete: never stored, or its newest version is already a deletion mark.
          if (prior === null || prior.record.deleted) return null;
          const record = await newRecord(prior, null, writtenBy);
          return await headFor(key, record, { v: record.version, deleted: true });
        });
        if (step === null) {
          // Already a deletion mark (or never stored): a value written around the history (DATA_HISTORY=off) still goes.
          const last = await readHead(keys, key);
          return (await data.delete(key)) && last !== null ? plainRecord(last.record) : null;
        }
        await complete(keys, key, step);
        return plainRecord(step.head.record);
      });
    },
    async list(key) {
      const keys = historyKeys(key);
      const { head, records } = await stored(keys, key);
      if (head === null) return (await data.has(key)) ? { key, versions: [], current: null } : null;
      const versions = records.filter(isVersionRecord).map(plainRecord).slice(0, head.record.version);
      if (versions.length < head.record.version) versions.push(plainRecord(head.record));
      return { key, versions, current: head.record.deleted ? null : head.record.version };
    },
    async read(key, version) {
      if (!Number.isSafeInteger(version) || version < 1) return null;
      const keys = historyKeys(key);
      const head = await readHead(keys, key);
      if (head === null || version > head.record.version) return null;
      let record: unknown = head.record;
      let contents: unknown = head.contents;
      if (version < head.record.version) {
        const found = await stored(keys, key);
        record = found.records[version - 1];
        contents = found.contents[version - 1];
      }
      if (!isVersionRecord(record) || record.version !== version) {
        throw ServiceError.integrity(`The history of ${key} is damaged at version ${version}: its record is missing or out of place`, { key, version });
      }
      // A deletion mark, or a version whose bytes retention removed (its record stays).
      if (record.deleted || (version < head.record.version && (contents as { pruned?: unknown } | null)?.pruned === true)) return null;
      const bytes = bytesOf(contents);
      if (bytes === null || (contents as { v?: unknown }).v !== version || bytes.length !== record.size || (await digestOf(bytes)) !== record.sha256) {
        throw ServiceError.integrity(`Version ${version} of ${key} failed its integrity check: its stored bytes are not the ones its record names`, { key, version });
      }
      return bytes;
    },
    async verify(key) {
      const keys = historyKeys(key);
      const { head, records, contents } = await stored(keys, key);
      const value = await data.get(key);
      return await verifyVersions({ head: head === null ? null : { record: head.record, hash: head.hash, contents: head.contents }, records, contents, value });
    },
    current,
    async adopt(key) {
      const keys = historyKeys(key);
      await writes.run(key, async () => {
        await data.update(keys.head, async (stored) => {
          // Already a history, or nothing stored to adopt: nothing to write.
          if (stored !== null) throw NOTHING;
          const value = await data.get(key);
          if (value === null) throw NOTHING;
          return encoder.encode(JSON.stringify(await adoptedHead(key, value)));
        }, { inPlace: true }).catch((err: unknown) => {
          if (err !== NOTHING) throw err;
        });
        const head = await readHead(keys, key);
        if (head !== null) await ensureAppended(keys, key, head);
      });
      return await current(key);
    },
  };
}
