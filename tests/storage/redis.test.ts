import { afterAll, beforeAll } from "vitest";
import { Redis } from "ioredis";
import { createRedisBlobStore, createRedisKvStore } from "../../src/adapters/node/redis-store.ts";
import { startRedis, type RedisServer } from "../helpers/redis-server.ts";
import { blobStoreSuite, kvStoreSuite } from "./suite.ts";

let server: RedisServer;
const clients: Redis[] = [];
let n = 0;
const client = () => {
  const c = new Redis(server.url);
  clients.push(c);
  return c;
};
beforeAll(async () => {
  server = await startRedis();
}, 20_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.quit()));
  await server?.stop();
});

blobStoreSuite("Redis", () => createRedisBlobStore({ client: client(), prefix: `t${n++}:` }), {
  // Two clients: two connections, as two server processes would have.
  makePair: async () => {
    const prefix = `pair${n++}:`;
    return [createRedisBlobStore({ client: client(), prefix }), createRedisBlobStore({ client: client(), prefix })];
  },
});
kvStoreSuite("Redis", () => createRedisKvStore({ client: client(), prefix: `kv${n++}:` }));
