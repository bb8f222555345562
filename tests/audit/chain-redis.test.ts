import { createRedisBlobStore } from "../../src/adapters/server/redis/redis-store.ts";
import { redisForSuite } from "../helpers/redis-server.ts";
import { auditChainSuite } from "./chain-suite.ts";

const { client, prefix: fresh } = redisForSuite();

// Tampering writes the blob's bytes in Redis directly, where they are (the hash field `d`, or
// for a day that took appends the string `{key}#d` beside it), as someone with access to the
// Redis server would; the second store is another connection, as another process.
auditChainSuite("Redis", () => {
  const prefix = fresh("chain");
  const raw = client();
  return {
    store: createRedisBlobStore({ client: client(), prefix }),
    other: createRedisBlobStore({ client: client(), prefix }),
    raw: {
      read: async (key) => {
        const data = (await raw.hgetBuffer(`${prefix}${key}`, "d")) ?? (await raw.getBuffer(`${prefix}${key}#d`));
        return data === null ? null : new Uint8Array(data);
      },
      write: async (key, bytes) => {
        if (await raw.exists(`${prefix}${key}#d`)) await raw.set(`${prefix}${key}#d`, Buffer.from(bytes));
        else {
          await raw.hset(`${prefix}${key}`, "d", Buffer.from(bytes));
          // A key written from nothing needs the version field every stored blob has.
          await raw.hsetnx(`${prefix}${key}`, "v", "1");
        }
      },
      remove: async (key) => {
        await raw.del(`${prefix}${key}`, `${prefix}${key}#d`);
      },
    },
  };
});
