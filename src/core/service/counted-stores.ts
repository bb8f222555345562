/**
 * @module
 * Stores that count their operations for `/metrics` (docs/operations.md#metrics):
 * `store_operations_total{store,op,result}`, `store_errors_total{store}`, and the audit store's
 * appends as `audit_appends_total{result}`. Wrapped only when metrics are on.
 */
import type { MetricsRegistry } from "../http/metrics.ts";

/** The counters every counted store shares. */
export interface StoreCounters {
  operation(store: string, op: string, ok: boolean): void;
}

/** Registers the store and audit counters. */
export function storeCounters(metrics: MetricsRegistry): StoreCounters {
  const operations = metrics.counter("store_operations_total", "Store operations, by store, operation and result.", ["store", "op", "result"]);
  const errors = metrics.counter("store_errors_total", "Store operations that failed, by store.", ["store"]);
  const appends = metrics.counter("audit_appends_total", "Audit appends, by result.", ["result"]);
  return {
    operation(store, op, ok) {
      const result = ok ? "ok" : "error";
      operations.inc({ store, op, result });
      if (!ok) errors.inc({ store });
      if (store === "audit" && op === "appendToJsonArray") appends.inc({ result });
    },
  };
}

/**
 * `store` with each method counted under `name`. A Proxy keeps every optional method present
 * or absent as it was (callers test `store.syncJsonArray !== undefined`) and its `this`.
 */
export function countedStore<T extends object>(store: T, name: string, counters: StoreCounters): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      let counted = wrapped.get(property);
      if (counted === undefined) {
        const op = String(property);
        const method = value as (...args: unknown[]) => unknown;
        counted = (...args: unknown[]): unknown => {
          let result: unknown;
          try {
            result = method.apply(target, args);
          } catch (err) {
            counters.operation(name, op, false);
            throw err;
          }
          if (result instanceof Promise) {
            return result.then((value: unknown) => {
              counters.operation(name, op, true);
              return value;
            }, (err: unknown) => {
              counters.operation(name, op, false);
              throw err;
            });
          }
          counters.operation(name, op, true);
          return result;
        };
        wrapped.set(property, counted);
      }
      return counted;
    },
  });
}
