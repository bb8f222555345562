import { createRedisBlobStore, createRedisKvStore } from "../../src/adapters/server/redis/redis-store.ts";
import { redisForSuite } from "../helpers/redis-server.ts";
import { blobStoreSuite, kvStoreSuite } from "./suite.ts";

const { client, prefix: fresh } = redisForSuite();

blobStoreSuite("Redis", () => createRedisBlobStore({ client: client(), prefix: fresh("t") }), {
  // Two clients: two connections, as two server processes would have.
  makePair: async () => {
    const prefix = fresh("pair");
    return [createRedisBlobStore({ client: client(), prefix }), createRedisBlobStore({ client: client(), prefix })];
  },
});
kvStoreSuite("Redis", () => createRedisKvStore({ client: client(), prefix: fresh("kv") }));
