/**
 * @module
 * Stores on Redis, lossless across processes. unstorage's Redis driver keeps bytes as
 * base64 text and offers no compare-and-swap, so this talks to Redis (ioredis) directly:
 * each blob is a hash `{d: bytes, v: version}` and a conditional write is one Lua script
 * that checks the version and writes atomically, so any number of server processes can
 * append to one audit day without losing an entry. A streamed write is appended to a staged
 * key piece by piece, then moved into the blob by one script.
 *
 * A JSON array that takes appends (an audit day) keeps its bytes in a string beside the hash,
 * `{key}#d` (`#` never occurs in a key), and the hash holds its item count `n` and length
 * `l` instead of `d`: an append is one script that writes the new item over the closing `\n]`
 * with `SETRANGE`, so it moves the item's bytes, not the day's.
 *
 * User records stay plain strings (existing data reads as it is); their compare-and-set
 * compares the whole string in one script.
 */
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { BlobStore, KvStore } from "../../../core/ports.ts";
import { createVersionedBlobStore, type VersionedBackend } from "../../../core/storage/versioned-store.ts";
import { piecesOf } from "../../../core/storage/byte-stream.ts";
import { encodeAppendedItem, encodeJsonArray, parseJsonArray } from "../../../core/storage/json-array.ts";

// Every whole-value write: the bytes into the hash, any appendable form beside it dropped.
// KEYS[1] the blob, KEYS[2] its appendable bytes; `bytes` names the value written.
const writeInline = (bytes: string): string => `
redis.call('HSET', KEYS[1], 'd', ${bytes})
redis.call('HDEL', KEYS[1], 'n', 'l')
redis.call('DEL', KEYS[2])
redis.call('HINCRBY', KEYS[1], 'v', 1)
return 1`;

// ARGV[1] expected version ("" = must be absent).
const VERSION_CHECK = `
local current = redis.call('HGET', KEYS[1], 'v')
if (ARGV[1] == '' and current) or (ARGV[1] ~= '' and current ~= ARGV[1]) then return 0 end`;

// KEYS[1] the blob, KEYS[2] its appendable bytes: the bytes wherever they are, and the version.
const GET = `
local d, v = unpack(redis.call('HMGET', KEYS[1], 'd', 'v'))
if not v then return nil end
if not d then d = redis.call('GET', KEYS[2]) end
if not d then return nil end
return {d, v}`;

// ARGV[1] expected version; ARGV[2] the bytes.
const PUT_IF = `${VERSION_CHECK}${writeInline("ARGV[2]")}`;

// ARGV[1] the bytes.
const PUT = writeInline("ARGV[1]");

// KEYS[3] a staged upload, whose bytes become the blob's in one step.
const PUT_STAGED = `
local data = redis.call('GET', KEYS[3])
if not data then return redis.error_reply('the staged upload expired before it was stored') end
redis.call('DEL', KEYS[3])${writeInline("data")}`;

// ARGV[1] the item as appended over "\n]" (",\n{item}\n]"), ARGV[2] the index it is meant for
// ("" = any). A new day is the same bytes with "[" for the ",": the item is sent once. Answers
// the new count, -2 - the count when the array already holds more items than ARGV[2] (nothing
// written), or -1 when the value is not in the appendable form (written whole, or its bytes changed behind the count's
// back): the caller then converts it.
const APPEND = `
local n, l, d = unpack(redis.call('HMGET', KEYS[1], 'n', 'l', 'd'))
if not n then
  if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
  redis.call('SET', KEYS[2], '[' .. string.sub(ARGV[1], 2))
  redis.call('HSET', KEYS[1], 'n', 1, 'l', #ARGV[1])
  redis.call('HINCRBY', KEYS[1], 'v', 1)
  return 1
end
if d then return -1 end
n = tonumber(n)
local len = redis.call('STRLEN', KEYS[2])
if len ~= tonumber(l) or len < 2 or redis.call('GETRANGE', KEYS[2], len - 2, len - 1) ~= '\\n]' then return -1 end
if ARGV[2] ~= '' and n > tonumber(ARGV[2]) then return -2 - n end
redis.call('SETRANGE', KEYS[2], len - 2, ARGV[1])
redis.call('HSET', KEYS[1], 'n', n + 1, 'l', len - 2 + #ARGV[1])
redis.call('HINCRBY', KEYS[1], 'v', 1)
return n + 1`;

// ARGV[1] expected version; ARGV[2] the whole array, ARGV[3] its count: stored in the appendable form.
const CONVERT_IF = `${VERSION_CHECK}
redis.call('SET', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[1], 'd')
redis.call('HSET', KEYS[1], 'n', ARGV[3], 'l', #ARGV[2])
redis.call('HINCRBY', KEYS[1], 'v', 1)
return 1`;

// A user record's compare-and-set, on the plain string: ARGV[1] "1" when a value is expected
// ("0": the key must be absent), ARGV[2] that value, ARGV[3] the new one.
const REPLACE_IF = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '0' then
  if current then return 0 end
elseif current ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[3])
return 1`;

const scriptShas = new Map<string, string>();

/** Runs a script by its SHA-1 (EVALSHA), sending its text only when Redis does not hold it yet. */
async function runScript(client: Redis, script: string, keys: string[], args: (string | Buffer)[] = []): Promise<unknown> {
  let sha = scriptShas.get(script);
  if (sha === undefined) scriptShas.set(script, sha = createHash("sha1").update(script).digest("hex"));
  try {
    return await client.callBuffer("EVALSHA", [sha, keys.length, ...keys, ...args]);
  } catch (err) {
    // NOSCRIPT: the script did not run (a new or flushed server), so sending it whole is safe.
    if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
    return client.callBuffer("EVAL", [script, keys.length, ...keys, ...args]);
  }
}

/** How long a staged upload may wait for its last piece before Redis drops it (a crashed writer's). */
const STAGED_SECONDS = 3600;

/** Options of {@link createRedisBlobStore} and {@link createRedisKvStore}. */
export interface RedisStoreOptions {
  /** The client (shared by every store of a process). */
  client: Redis;
  /** Prefix of every key of this store, e.g. `fa:data:`. */
  prefix: string;
}

async function scanKeys(client: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await client.scan(cursor, "MATCH", pattern, "COUNT", 500);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== "0");
  return keys;
}

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, "\\$&");

/** The compare-and-swap backend over Redis hashes. */
export function redisBackend({ client, prefix }: RedisStoreOptions): VersionedBackend {
  const full = (key: string) => `${prefix}${key}`;
  const appendable = (key: string) => `${prefix}${key}#d`;
  const bytesOf = (value: Uint8Array) => Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const backend: VersionedBackend = {
    async get(key) {
      const reply = (await runScript(client, GET, [full(key), appendable(key)])) as [Buffer, Buffer] | null;
      if (reply === null) return null;
      return { bytes: new Uint8Array(reply[0]), version: reply[1].toString() };
    },
    async put(key, value) {
      await runScript(client, PUT, [full(key), appendable(key)], [bytesOf(value)]);
    },
    async putStream(key, size, body) {
      // Appended piece by piece to a staged key outside every store's prefix (never listed),
      // then moved into the blob by one script: this process holds one piece at a time.
      const staged = `fa-staged-upload:${crypto.randomUUID()}`;
      try {
        await client.set(staged, "", "EX", STAGED_SECONDS);
        for await (const piece of piecesOf(body, size)) await client.append(staged, bytesOf(piece));
        await runScript(client, PUT_STAGED, [full(key), appendable(key), staged]);
      } finally {
        await client.del(staged);
      }
    },
    async putIf(key, value, expected) {
      return (await runScript(client, PUT_IF, [full(key), appendable(key)], [expected ?? "", bytesOf(value)])) === 1;
    },
    async appendToJsonArray(key, item, atIndex, skipped) {
      const count = await runScript(client, APPEND, [full(key), appendable(key)], [
        bytesOf(encodeAppendedItem(item)), atIndex === undefined ? "" : String(atIndex),
      ]) as number;
      if (count >= 0) return count;
      // -2 - n: the array held n items, more than atIndex: nothing written.
      if (count <= -3) {
        skipped?.();
        return -2 - count;
      }
      // Written whole or changed behind the count's back: parsed and stored in the appendable form once.
      const current = await backend.get(key);
      const items = current === null ? [] : parseJsonArray(current.bytes).items;
      if (atIndex !== undefined && items.length > atIndex) {
        skipped?.();
        return items.length;
      }
      items.push(item);
      const converted = await runScript(client, CONVERT_IF, [full(key), appendable(key)], [
        current?.version ?? "", bytesOf(encodeJsonArray(items)), String(items.length),
      ]);
      return converted === 1 ? items.length : null;
    },
    async delete(key) {
      return (await client.del(full(key), appendable(key))) > 0;
    },
    async has(key) {
      return (await client.exists(full(key))) > 0;
    },
    async list(keyPrefix) {
      const keys = await scanKeys(client, `${escapeGlob(full(keyPrefix))}*`);
      // The appendable bytes beside a blob are not a key of their own.
      return keys.filter((key) => !key.endsWith("#d")).map((key) => key.slice(prefix.length));
    },
  };
  return backend;
}

/** A lossless `BlobStore` on Redis. */
export function createRedisBlobStore(options: RedisStoreOptions): BlobStore {
  return createVersionedBlobStore(redisBackend(options));
}

/**
 * A `KvStore` on Redis (plain string values), with a compare-and-set as one Lua script: a user
 * record's read-change-write is lossless across processes.
 */
export function createRedisKvStore({ client, prefix }: RedisStoreOptions): KvStore {
  return {
    get: (key) => client.get(`${prefix}${key}`),
    put: async (key, value) => {
      await client.set(`${prefix}${key}`, value);
    },
    replaceIf: async (key, expected, value) =>
      (await runScript(client, REPLACE_IF, [`${prefix}${key}`], [expected === null ? "0" : "1", expected ?? "", value])) === 1,
    delete: async (key) => (await client.del(`${prefix}${key}`)) > 0,
    list: async (keyPrefix) =>
      (await scanKeys(client, `${escapeGlob(`${prefix}${keyPrefix}`)}*`)).map((key) => key.slice(prefix.length)).sort(),
  };
}
