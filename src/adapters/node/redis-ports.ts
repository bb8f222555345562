/**
 * @module
 * The ports on one Redis server (STORAGE=redis): each store under its own key prefix, and the
 * rate-limit counters.
 */
import { Redis } from "ioredis";
import { systemClock } from "../../core/ports.ts";
import type { ServicePorts } from "../../core/service.ts";
import { createRedisBlobStore, createRedisKvStore } from "./redis-store.ts";
import { createRedisRateLimiter } from "./redis-rate-limiter.ts";

/** Ports on Redis at `url`, and a way to close the connection. */
export function createRedisPorts(url: string): { ports: ServicePorts; close(): Promise<void> } {
  const client = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 3 });
  return {
    ports: {
      data: createRedisBlobStore({ client, prefix: "fa:data:" }),
      audit: createRedisBlobStore({ client, prefix: "fa:audit:" }),
      images: createRedisBlobStore({ client, prefix: "fa:images:" }),
      users: createRedisKvStore({ client, prefix: "fa:users:" }),
      clock: systemClock,
      // Rate-limit counts shared by every process on this Redis.
      rateLimiter: createRedisRateLimiter(client, { prefix: "fa:rl:" }),
    },
    close: async () => {
      await client.quit();
    },
  };
}
