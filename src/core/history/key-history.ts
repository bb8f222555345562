/**
 * @module
 * The histories of data keys (docs/storage.md#record-history): every write and delete of a key
 * through {@link KeyHistories} keeps the version it replaces, and the versions form a hash chain.
 *
 * Each version is one item of the key's log (history-log.ts), appended at its place, then the
 * key's value is set to it. On a store one process holds (files under the data folder's lock,
 * memory) the process's lock for the key orders the writes and the newest version is kept in
 * memory (newest-versions.ts): a version is one append. On a store several processes share
 * (Redis, S3/R2, Deno KV, Workers) a write is ordered by the key's head (one small object
 * holding the newest version's record and bytes), replaced with the store's lossless `update`
 * (the backend's compare-and-swap); before the head moves on, the version it named is made sure
 * to be in the log, after it moved the new one is appended, and the value is set to what the
 * head names. So N acknowledged writes are N versions on every backend, and a PUT appends to
 * its history instead of rewriting it.
 */
import type { BlobStore, Bytes, Clock } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import { KeyedMutex } from "../storage/keyed-mutex.ts";
import { sha256Hex } from "../encoding/digest.ts";
import { sameBytes } from "../encoding/same-bytes.ts";
import { type HistoryKeys, historyKeys } from "./history-keys.ts";
import { type LogItem, logItemOf, mergeArraysIntoLog, readStoredVersions, type StoredVersions } from "./history-log.ts";
import { type NewestVersions, newestVersionsOf } from "./newest-versions.ts";
import {
  bytesOf,
  canonicalRecordJson,
  contentsOf,
  EMPTY_SHA256,
  isVersionRecord,
  plainRecord,
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

/** The newest version of a key's history: stored as its head on a shared store, kept in memory on a store one process holds. */
interface Head {
  format: typeof HEAD_FORMAT;
  key: string;
  /** The newest version's record. */
  record: VersionRecord;
  /** Its hash (the next record's `previous`). */
  hash: string;
  /** Its contents, so that it is never lost between the head's write and the log's append. */
  contents: VersionContents;
}

const HEAD_FORMAT = "forensic-annotation/history-head@1";

/** A recorded version, its value not set yet. */
interface Step {
  head: Head;
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

/** Keys whose log this process knows holds the head's version, by key: the head hash appended last. */
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

// The texts of a head's record and contents, made once for its stored bytes and lent to its log item.
const headTexts = new WeakMap<Head, { record: string; contents: string }>();

/**
 * A head's stored bytes: `JSON.stringify(head)`, with its record's and contents' texts made once
 * and lent to the log's append of the same version (on Node 20 serializing a document costs
 * about 5 us a kilobyte).
 */
function encodeHead(head: Head): Uint8Array {
  const texts = { record: JSON.stringify(head.record), contents: JSON.stringify(head.contents) };
  headTexts.set(head, texts);
  return encoder.encode(`{"format":${JSON.stringify(head.format)},"key":${JSON.stringify(head.key)},"record":${texts.record},"hash":${JSON.stringify(head.hash)},"contents":${texts.contents}}`);
}

/** The log item of a head's version. */
const itemOf = (head: Head): LogItem => logItemOf(head.record, head.contents, headTexts.get(head));

/** Creates the histories of the data keys of `data` (the data store, encrypted or not). */
export function createKeyHistories(data: BlobStore, options: KeyHistoriesOptions): KeyHistories {
  const { clock } = options;
  const hashText = options.hash;
  // The synchronous hash blocks the event loop: a large document (up to MAX_JSON_BYTES) goes to web crypto's worker thread.
  const digestOf = (bytes: Uint8Array): string | Promise<string> => (options.digest === undefined || bytes.length > SYNC_DIGEST_BYTES ? sha256Hex(bytes) : options.digest(bytes));
  // Every record hashed here holds only its own fields (built here, or plainRecord of a stored one).
  const hashOf = (record: VersionRecord): string | Promise<string> => {
    const text = canonicalRecordJson(record);
    return hashText === undefined ? sha256Hex(text) : hashText(text);
  };
  // One lock per key for every history over a store one process holds (a service and a data
  // worker mounted beside it share it), so that no other writer moves the head under a write.
  const writes = data.soleWriter ?? new KeyedMutex();
  // On a store one process holds and that tells its writes: the newest versions in memory, no stored head.
  const newest = newestVersionsOf(data);
  /** The head of the newest version kept in memory for `key`, when there is one. */
  const keptHead = (key: string): Head | undefined => {
    const kept = newest?.get(key);
    return kept === undefined ? undefined : { format: HEAD_FORMAT, key, ...kept };
  };

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
  // The head hash this process last saw appended to the log, per key: skips the append.
  const appended = new Map<string, string>();
  // Keys this process found with a log, or with no arrays of an earlier release to merge.
  const logged = new Set<string>();

  const readHead = async (keys: HistoryKeys, key: string): Promise<Head | null> => {
    const stored = await data.get(keys.head);
    return stored === null ? null : headOf(stored, key);
  };

  /** Merges the arrays of an earlier release into the log, once per key and process, before anything is appended to it. */
  const ensureLog = async (keys: HistoryKeys, key: string, head: Head | null): Promise<void> => {
    if (logged.has(key)) return;
    if (!(await data.has(keys.log)) && ((await data.has(keys.versions)) || (await data.has(keys.contents)))) {
      await mergeArraysIntoLog(data, keys, head === null ? undefined : itemOf(head));
    }
    if (logged.size >= MAX_KNOWN) logged.clear();
    logged.add(key);
  };

  /** Makes sure the log holds the version the head names (an append given its index writes nothing when it does). */
  const ensureAppended = async (keys: HistoryKeys, key: string, head: Head): Promise<void> => {
    if (appended.get(key) === head.hash) return;
    await data.appendToJsonArray(keys.log, itemOf(head), head.record.version - 1);
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

  /** The head of the newest stored version (the log's last item); null when none; an integrity failure when it is damaged. */
  const lastOf = async (key: string, stored: StoredVersions): Promise<Head | null> => {
    const count = stored.records.length;
    if (count === 0) return null;
    const record = stored.records[count - 1];
    const contents = stored.contents[count - 1] as { v?: unknown } | null | undefined;
    if (!isVersionRecord(record) || record.version !== count || contents === null || typeof contents !== "object" || contents.v !== count) {
      throw ServiceError.integrity(`The history of ${key} is damaged at version ${count}: its record or its bytes are missing or out of place (GET /data/{key}?history&verify=true names the first bad version)`, { key, version: count });
    }
    return await headFor(key, plainRecord(record), contents as VersionContents);
  };

  /**
   * [Under the key's lock, on a store one process holds, its newest versions `kept`] The newest version: kept in memory,
   * else read from the log. A history written where the store was shared (a stored head) or
   * by an earlier release (two arrays) is made a log first, and its stored head removed: here
   * the log is the only record. With `adopt`, a value stored before its key had a history
   * becomes version 1.
   */
  const soleNewest = async (kept: NewestVersions, keys: HistoryKeys, key: string, adopt: boolean): Promise<Head | null> => {
    const inMemory = keptHead(key);
    if (inMemory !== undefined) return inMemory;
    for (let attempt = 1; ; attempt++) {
      let changes = kept.changes;
      const storedHead = await readHead(keys, key);
      let stored = await mergeArraysIntoLog(data, keys, storedHead === null ? undefined : itemOf(storedHead));
      if (storedHead !== null) {
        if (stored.records.length === storedHead.record.version - 1) await data.appendToJsonArray(keys.log, itemOf(storedHead), storedHead.record.version - 1);
        await data.delete(keys.head);
      }
      // A history key written meanwhile (these merges, a restore): the log read again, kept only if nothing writes one now.
      if (kept.changes !== changes || storedHead !== null) {
        changes = kept.changes;
        stored = await readStoredVersions(data, keys);
      }
      let head = await lastOf(key, stored);
      if (head === null && adopt) {
        const value = await data.get(key);
        if (value !== null) {
          head = await adoptedHead(key, value);
          if (!(await appendNew(keys, head))) {
            if (attempt < 3) continue;
            throw ServiceError.integrity(`The history of ${key} changed while its stored value was being recorded as version 1`, { key });
          }
        }
      }
      if (head !== null && kept.changes === changes) kept.set(key, { record: head.record, hash: head.hash, contents: head.contents });
      return head;
    }
  };

  /** Appends `head`'s version at its place in the log; false when the place was taken (the log is not what was kept). */
  const appendNew = async (keys: HistoryKeys, head: Head): Promise<boolean> => {
    let skipped = false;
    const count = await data.appendToJsonArray(keys.log, itemOf(head), head.record.version - 1, { skipped: () => (skipped = true) });
    if (skipped) return false;
    if (count !== head.record.version) {
      throw ServiceError.integrity(`The history of ${head.key} is damaged: version ${head.record.version} was appended as item ${count} of its log`, { key: head.key, version: head.record.version });
    }
    return true;
  };

  /**
   * Records a new version made by `next` from the newest before it (null: none), and answers
   * the step (null when `next` answered null: nothing to record). A value stored without a
   * history becomes version 1 first, in a step of its own.
   */
  const advance = async (keys: HistoryKeys, key: string, next: (prior: Head | null) => Promise<Head | null>): Promise<Step | null> => {
    if (newest !== undefined) {
      // One process holds the store and this one the key's lock: the kept newest version is the log's last item.
      for (let attempt = 1; ; attempt++) {
        const made = await next(await soleNewest(newest, keys, key, true));
        if (made === null) return null;
        const changes = newest.changes;
        let done = false;
        try {
          done = await appendNew(keys, made);
        } finally {
          // Kept only once appended, and when nothing replaced a history key meanwhile (a restore): else read from the log again.
          if (done && newest.changes === changes) newest.set(key, { record: made.record, hash: made.hash, contents: made.contents });
          else newest.forget(key);
        }
        if (done) return { head: made };
        if (attempt >= 3) throw ServiceError.integrity(`The history of ${key} changed under its writes three times: its log is written by something else`, { key });
      }
    }
    for (;;) {
      let adopted = false;
      let step: Step | null = null;
      const written = await data.update(keys.head, async (stored) => {
        adopted = false;
        step = null;
        const prior = stored === null ? null : headOf(stored, key);
        await ensureLog(keys, key, prior);
        if (prior === null) {
          // A log without a head: written where one process held the store (then moved here), its last item the newest.
          const last = await lastOf(key, await readStoredVersions(data, keys));
          const value = last === null ? await data.get(key) : null;
          if (last !== null || value !== null) {
            adopted = true;
            const head = last ?? await adoptedHead(key, value!);
            return keep(key, encodeHead(head), head);
          }
        } else {
          await ensureAppended(keys, key, prior);
        }
        const made = await next(prior);
        if (made === null) throw NOTHING;
        const bytes = keep(key, encodeHead(made), made);
        step = { head: made };
        return bytes;
      }, { inPlace: true }).then(() => true, (err: unknown) => {
        if (err === NOTHING) return false;
        throw err;
      });
      if (!written) return null;
      if (adopted) continue; // the newest version is in the head now; record this write after it
      return step;
    }
  };

  /**
   * Sets the key's value to what its head names now: the bytes under the value's own
   * compare-and-swap with the head read inside it, so a writer overtaken by a newer version
   * (another process) writes that one's bytes, never its own older ones; a deletion mark
   * removes the value. The value's write is the last store call: a failure before it leaves the
   * value as it was.
   */
  const settle = async (keys: HistoryKeys, key: string, mine: Head, mineBytes?: Uint8Array): Promise<void> => {
    if (newest !== undefined) {
      // The version kept is still this write's unless the log was replaced meanwhile (a restore): then the log's newest.
      const now = newest.get(key)?.hash === mine.hash ? mine : (await soleNewest(newest, keys, key, false)) ?? mine;
      if (now.record.deleted) await data.delete(key);
      else await data.put(key, now === mine && mineBytes !== undefined ? mineBytes : bytesOf(now.contents) ?? new Uint8Array());
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
   * Completes a step: the version into the log (where the head ordered it), then the value. A
   * failure leaves the value as it was and the version recorded, which the key's next write
   * completes (as after a crash between the two); that version then reads as written though
   * its request failed.
   */
  const complete = async (keys: HistoryKeys, key: string, step: Step, bytes?: Uint8Array): Promise<void> => {
    if (newest === undefined) await ensureAppended(keys, key, step.head);
    await settle(keys, key, step.head, bytes);
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

  /**
   * The newest version as a reader sees it: kept in memory (read from the log under the key's
   * lock when not), or the stored head; null when the key has no history.
   */
  const newestNow = async (keys: HistoryKeys, key: string): Promise<Head | null> => {
    if (newest === undefined) return await readHead(keys, key);
    return keptHead(key) ?? (await writes.run(key, () => soleNewest(newest, keys, key, false)));
  };

  /** The newest version without reading the log, as a reader sees it unlocked: kept in memory, else the stored head; null when neither is. */
  const headWithoutLog = async (keys: HistoryKeys, key: string): Promise<Head | null> => keptHead(key) ?? (await readHead(keys, key));

  /** The newest version a log holds (its last item), null when it holds none or that item is damaged (a reader's view: verify names the damage). */
  const logNewest = (key: string, versions: StoredVersions): Promise<Head | null> => lastOf(key, versions).catch(() => null);

  /**
   * What is stored of a key's history, read without its lock (a reader may run inside a write's
   * `change`): the newest version (kept, the stored head, else the log's last item) and the
   * records and contents.
   */
  const stored = async (keys: HistoryKeys, key: string) => {
    const storedHead = await headWithoutLog(keys, key);
    const versions = await readStoredVersions(data, keys);
    const head = storedHead ?? (await logNewest(key, versions));
    return { head, storedHead, records: versions.records, contents: versions.contents };
  };

  const current = async (key: string): Promise<CurrentVersion | null> => {
    const keys = historyKeys(key);
    // The log is read only for a history with neither a kept version nor a stored head (one written where one process held the store).
    const head = (await headWithoutLog(keys, key)) ?? (await logNewest(key, await readStoredVersions(data, keys)));
    if (head === null || head.record.deleted) return null;
    return { version: head.record.version, sha256: head.record.sha256, record: plainRecord(head.record) };
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
      head = await newestNow(keys, key);
    } else {
      [value, head] = await Promise.all([data.get(key), newestNow(keys, key)]);
    }
    if (head !== null && value !== null && isHeadVersion(head, value)) rememberChecked(key, value);
    if (head === null || value === null || isHeadVersion(head, value)) return value;
    // A write of this process may be settling: read again after it, the head first, so that the
    // value read is never older than the head read (a write sets the value after its head).
    await writes.run(key, () => Promise.resolve());
    const now = await newestNow(keys, key);
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
          // Nothing to delete: never stored (a value stored without a history is adopted first), or already a deletion mark with no value.
          if (prior === null) return null;
          // A value after a deletion mark (written around the history, DATA_HISTORY=off, or put back by a write
          // another process's DELETE overtook) goes as a deletion of its own: answering the mark before would
          // acknowledge one version twice.
          if (prior.record.deleted && !(await data.has(key))) return null;
          const record = await newRecord(prior, null, writtenBy);
          return await headFor(key, record, { v: record.version, deleted: true });
        });
        // No value is removed without a version: one that appeared since the check is a newer write's.
        if (step === null) return null;
        await complete(keys, key, step);
        return plainRecord(step.head.record);
      });
    },
    async list(key) {
      const keys = historyKeys(key);
      const { head, records } = await stored(keys, key);
      if (head === null) return records.length === 0 && !(await data.has(key)) ? null : { key, versions: records.filter(isVersionRecord).map(plainRecord), current: null };
      const versions = records.filter(isVersionRecord).map(plainRecord).slice(0, head.record.version);
      if (versions.length < head.record.version) versions.push(plainRecord(head.record));
      return { key, versions, current: head.record.deleted ? null : head.record.version };
    },
    async read(key, version) {
      if (!Number.isSafeInteger(version) || version < 1) return null;
      const keys = historyKeys(key);
      const found = await stored(keys, key);
      const { head } = found;
      if (head === null || version > head.record.version) return null;
      let record: unknown = head.record;
      let contents: unknown = head.contents;
      if (version < head.record.version) {
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
      const { storedHead, records, contents } = await stored(keys, key);
      const value = await data.get(key);
      return await verifyVersions({ head: storedHead === null ? null : { record: storedHead.record, hash: storedHead.hash, contents: storedHead.contents }, records, contents, value });
    },
    current,
    async adopt(key) {
      const keys = historyKeys(key);
      await writes.run(key, async () => {
        if (newest !== undefined) {
          await soleNewest(newest, keys, key, true);
          return;
        }
        await data.update(keys.head, async (stored) => {
          // Already a history, or nothing stored to adopt: nothing to write.
          if (stored !== null) throw NOTHING;
          await ensureLog(keys, key, null);
          const head = (await lastOf(key, await readStoredVersions(data, keys))) ?? await (async () => {
            const value = await data.get(key);
            if (value === null) throw NOTHING;
            return await adoptedHead(key, value);
          })();
          return keep(key, encodeHead(head), head);
        }, { inPlace: true }).catch((err: unknown) => {
          if (err !== NOTHING) throw err;
        });
        const head = await readHead(keys, key);
        if (head !== null) {
          await ensureLog(keys, key, head);
          await ensureAppended(keys, key, head);
        }
      });
      return await current(key);
    },
  };
}
