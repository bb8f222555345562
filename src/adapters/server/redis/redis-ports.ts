/**
 * @module
 * The ports on one Redis server (STORAGE=redis): each store under its own key prefix, and the
 * rate-limit counters.
 */
import { Redis } from "ioredis";
import { systemClock } from "../../../core/ports.ts";
import type { ServicePorts } from "../../../core/service/service.ts";
import { createRedisBlobStore, createRedisKvStore } from "./redis-store.ts";
import { createRedisRateLimiter } from "./redis-rate-limiter.ts";
import { answeringOutages, logRedisOutages } from "./redis-outage.ts";

/** Ports on Redis at `url`, and a way to close the connection. */
export function createRedisPorts(url: string): { ports: ServicePorts; close(): Promise<void> } {
  const client = new Redis(url, {
    lazyConnect: false,
    // Redis down: a request fails within about a second instead of queueing through ioredis'
    // default backoff (up to ~8 s per command, and a request makes two with the rate limiter).
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 50, 250),
    connectTimeout: 2_000,
    // Redis reachable but not answering (paused, partitioned): fail the command, not hang the request.
    commandTimeout: 5_000,
    // A compare-and-swap resent after a reconnect may already have applied; resending it would append twice.
    autoResendUnfulfilledCommands: false,
  });
  logRedisOutages(client);
  return {
    ports: {
      ...answeringOutages({
        data: createRedisBlobStore({ client, prefix: "fa:data:" }),
        audit: createRedisBlobStore({ client, prefix: "fa:audit:" }),
        images: createRedisBlobStore({ client, prefix: "fa:images:" }),
        users: createRedisKvStore({ client, prefix: "fa:users:" }),
        // Rate-limit counts shared by every process on this Redis.
        rateLimiter: createRedisRateLimiter(client, { prefix: "fa:rl:" }),
      }),
      clock: systemClock,
    },
    close: async () => {
      await client.quit();
    },
  };
}
