import { createRedisBlobStore, createRedisKvStore } from "../../src/adapters/server/redis/redis-store.ts";
import { redisForSuite } from "../helpers/redis-server.ts";
import { blobStoreSuite, kvStoreSuite } from "./suite.ts";
import { encryptedKvStore, Keyring } from "../../src/core/encryption/mod.ts";
import { dataKey } from "../helpers/encryption.ts";

const { client, prefix: fresh } = redisForSuite();

blobStoreSuite("Redis", () => createRedisBlobStore({ client: client(), prefix: fresh("t") }), {
  // Two clients: two connections, as two server processes would have.
  makePair: async () => {
    const prefix = fresh("pair");
    return [createRedisBlobStore({ client: client(), prefix }), createRedisBlobStore({ client: client(), prefix })];
  },
});
kvStoreSuite("Redis", () => createRedisKvStore({ client: client(), prefix: fresh("kv") }), {
  compareAndSet: true,
  // Two clients: two connections, as two server processes would have.
  makePair: async () => {
    const prefix = fresh("kvpair");
    return [createRedisKvStore({ client: client(), prefix }), createRedisKvStore({ client: client(), prefix })];
  },
});

// Encrypted, the compare-and-set is made on the sealed strings: two processes with the same keys.
kvStoreSuite("Redis, encrypted", () => encryptedKvStore(createRedisKvStore({ client: client(), prefix: fresh("kvenc") }), new Keyring([dataKey("k1")])), {
  compareAndSet: true,
  makePair: async () => {
    const prefix = fresh("kvencpair");
    const key = dataKey("k1");
    return [
      encryptedKvStore(createRedisKvStore({ client: client(), prefix }), new Keyring([key])),
      encryptedKvStore(createRedisKvStore({ client: client(), prefix }), new Keyring([key])),
    ];
  },
});
