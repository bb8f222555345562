/**
 * @module
 * Redis down or not answering, as the service says it: a 500 whose body names the store (the
 * contract's "a store down, and its body says so") instead of "Internal server error", and one
 * log line when the connection is lost and one when it is back, instead of ioredis' stack
 * trace per reconnect attempt ("Unhandled error event") when nobody listens for its errors.
 */
import type { Redis } from "ioredis";
import { ServiceError } from "../../../core/errors.ts";

// ioredis' own errors for a connection that is down, closed, refused or too slow.
const CONNECTION_FAILURE = /Connection is closed|Command timed out|max retries per request|Stream isn't writeable|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EPIPE/i;

/** The error as the service answers it: a connection failure becomes the 500 naming the store; anything else passes as it is. */
export function asRedisOutage(err: unknown): unknown {
  if (err instanceof ServiceError || !(err instanceof Error)) return err;
  return CONNECTION_FAILURE.test(`${err.name} ${err.message}`) ? ServiceError.storeNotAnswering("Redis") : err;
}

/** Each of `stores` with every method's failure passed through {@link asRedisOutage} (thrown or rejected). */
export function answeringOutages<T extends Record<string, object>>(stores: T): T {
  return Object.fromEntries(Object.entries(stores).map(([name, store]) => [name, answering(store)])) as T;
}

function answering<T extends object>(target: T): T {
  // One wrapper per method, made on its first call: the stores' methods are called per request.
  const wrappers = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== "function") return value;
      let wrapper = wrappers.get(property);
      if (wrapper === undefined) {
        wrapper = (...args: unknown[]) => {
          let result: unknown;
          try {
            result = Reflect.apply(value, object, args);
          } catch (err) {
            throw asRedisOutage(err);
          }
          return result instanceof Promise ? result.catch((err: unknown) => Promise.reject(asRedisOutage(err))) : result;
        };
        wrappers.set(property, wrapper);
      }
      return wrapper;
    },
  });
}

/** Logs the connection's loss once (with the reason) and its return once, for `client`. */
export function logRedisOutages(client: Redis, log: (line: string) => void = (line) => console.error(line)): void {
  let down = false;
  client.on("error", (err: unknown) => {
    if (down) return;
    down = true;
    log(`redis: connection lost (${err instanceof Error ? err.message : String(err)}); requests answer 500 until it is back`);
  });
  client.on("ready", () => {
    if (!down) return;
    down = false;
    log("redis: connection back");
  });
}
