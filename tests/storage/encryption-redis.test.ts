import { describe } from "vitest";
import type { Redis } from "ioredis";
import { createRedisBlobStore, createRedisKvStore } from "../../src/adapters/server/redis/redis-store.ts";
import { systemClock } from "../../src/core/ports.ts";
import { redisForSuite } from "../helpers/redis-server.ts";
import { encryptionSuite } from "./encryption-suite.ts";

const { client, prefix: fresh } = redisForSuite();

/** Every value Redis holds under a prefix: the blob hashes' fields and the plain strings. */
async function valuesUnder(redis: Redis, prefix: string): Promise<Uint8Array[]> {
  const values: Uint8Array[] = [];
  for (const key of await redis.keys(`${prefix}*`)) {
    if ((await redis.type(key)) === "hash") {
      for (const value of Object.values(await redis.hgetallBuffer(key))) values.push(new Uint8Array(value));
    } else {
      values.push(new Uint8Array((await redis.getBuffer(key))!));
    }
  }
  return values;
}

describe("encryption at rest on Redis (a real redis-server)", () => {
  const prefixes = new WeakMap<object, { redis: Redis; prefix: string }>();
  encryptionSuite("Redis", {
    ports: async () => {
      const redis = client();
      const prefix = fresh("enc");
      const ports = {
        data: createRedisBlobStore({ client: redis, prefix: `${prefix}data:` }),
        audit: createRedisBlobStore({ client: redis, prefix: `${prefix}audit:` }),
        images: createRedisBlobStore({ client: redis, prefix: `${prefix}images:` }),
        users: createRedisKvStore({ client: redis, prefix: `${prefix}users:` }),
        clock: systemClock,
      };
      prefixes.set(ports.data, { redis, prefix });
      return ports;
    },
    dump: async (ports) => {
      const { redis, prefix } = prefixes.get(ports.data)!;
      return valuesUnder(redis, prefix);
    },
  });
});
