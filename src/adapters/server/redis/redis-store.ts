/**
 * @module
 * Stores on Redis, lossless across processes. unstorage's Redis driver keeps bytes as
 * base64 text and offers no compare-and-swap, so this talks to Redis (ioredis) directly:
 * each blob is a hash `{d: bytes, v: version}` and a conditional write is one Lua script
 * that checks the version and writes atomically, so any number of server processes can
 * append to one audit day without losing an entry. A streamed write is appended to a staged
 * key piece by piece, then moved into the blob by one script.
 */
import type { Redis } from "ioredis";
import type { BlobStore, KvStore } from "../../../core/ports.ts";
import { createVersionedBlobStore, type VersionedBackend } from "../../../core/storage/versioned-store.ts";
import { piecesOf } from "../../../core/storage/byte-stream.ts";

// KEYS[1] the blob; ARGV[1] expected version ("" = must be absent); ARGV[2] the bytes.
const PUT_IF = `
local current = redis.call('HGET', KEYS[1], 'v')
if (ARGV[1] == '' and current) or (ARGV[1] ~= '' and current ~= ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'd', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'v', 1)
return 1`;

const PUT = `
redis.call('HSET', KEYS[1], 'd', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'v', 1)
return 1`;

// KEYS[1] the blob; KEYS[2] a staged upload, whose bytes become the blob's in one step.
const PUT_STAGED = `
local data = redis.call('GET', KEYS[2])
if not data then return redis.error_reply('the staged upload expired before it was stored') end
redis.call('HSET', KEYS[1], 'd', data)
redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('DEL', KEYS[2])
return 1`;

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
  return {
    async get(key) {
      const [data, version] = await client.hmgetBuffer(full(key), "d", "v");
      if (!data || !version) return null;
      return { bytes: new Uint8Array(data), version: version.toString() };
    },
    async put(key, value) {
      await client.eval(PUT, 1, full(key), Buffer.from(value));
    },
    async putStream(key, size, body) {
      // Appended piece by piece to a staged key outside every store's prefix (never listed),
      // then moved into the blob by one script: this process holds one piece at a time.
      const staged = `fa-staged-upload:${crypto.randomUUID()}`;
      try {
        await client.set(staged, "", "EX", STAGED_SECONDS);
        for await (const piece of piecesOf(body, size)) await client.append(staged, Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength));
        await client.eval(PUT_STAGED, 2, full(key), staged);
      } finally {
        await client.del(staged);
      }
    },
    async putIf(key, value, expected) {
      return (await client.eval(PUT_IF, 1, full(key), expected ?? "", Buffer.from(value))) === 1;
    },
    async delete(key) {
      return (await client.del(full(key))) > 0;
    },
    async has(key) {
      return (await client.exists(full(key))) > 0;
    },
    async list(keyPrefix) {
      const keys = await scanKeys(client, `${escapeGlob(full(keyPrefix))}*`);
      return keys.map((key) => key.slice(prefix.length));
    },
  };
}

/** A lossless `BlobStore` on Redis. */
export function createRedisBlobStore(options: RedisStoreOptions): BlobStore {
  return createVersionedBlobStore(redisBackend(options));
}

/** A `KvStore` on Redis (plain string values). */
export function createRedisKvStore({ client, prefix }: RedisStoreOptions): KvStore {
  return {
    get: (key) => client.get(`${prefix}${key}`),
    put: async (key, value) => {
      await client.set(`${prefix}${key}`, value);
    },
    delete: async (key) => (await client.del(`${prefix}${key}`)) > 0,
    list: async (keyPrefix) =>
      (await scanKeys(client, `${escapeGlob(`${prefix}${keyPrefix}`)}*`)).map((key) => key.slice(prefix.length)).sort(),
  };
}
