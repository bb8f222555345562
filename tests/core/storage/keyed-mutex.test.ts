import { afterEach, describe, expect, it, vi } from "vitest";
import { Hono } from "hono";
import { KeyedMutex } from "../../../src/core/storage/keyed-mutex.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { errorResponse } from "../../../src/core/http/errors.ts";

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("KeyedMutex", () => {
  it("runs the tasks of one key one at a time, in arrival order, and other keys beside them", async () => {
    const mutex = new KeyedMutex();
    const order: string[] = [];
    let running = 0;
    let most = 0;
    const task = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      order.push(`${name} start`);
      for (let i = 0; i < 3; i++) await Promise.resolve();
      order.push(`${name} end`);
      running--;
      return name;
    };
    const first = deferred();
    const other = mutex.run("b", async () => "other");
    const results = await Promise.all([
      mutex.run("a", async () => {
        await first.promise;
        return "first";
      }),
      mutex.run("a", task("second")),
      mutex.run("a", task("third")),
      other.then((value) => {
        // The other key was not held up by key a's first task.
        first.resolve();
        return value;
      }),
    ]);
    expect(results).toEqual(["first", "second", "third", "other"]);
    expect(order).toEqual(["second start", "second end", "third start", "third end"]);
    expect(most).toBe(1);
  });

  it("releases the key when a task fails", async () => {
    const mutex = new KeyedMutex();
    const failed = mutex.run("a", async () => {
      throw new Error("store down");
    });
    const next = mutex.run("a", async () => "next");
    await expect(failed).rejects.toThrow("store down");
    await expect(next).resolves.toBe("next");
    await expect(mutex.run("a", async () => "again")).resolves.toBe("again");
  });

  it("answers a caller that cannot get the key for about 30 s with 503 and Retry-After, and keeps the key for its holder", async () => {
    vi.useFakeTimers();
    const mutex = new KeyedMutex();
    const holder = deferred();
    const held = mutex.run("a", () => holder.promise);
    const waiting = mutex.run("a", async () => "never");
    const refused = waiting.then(
      () => undefined,
      (err: unknown) => err,
    );
    await vi.advanceTimersByTimeAsync(31_000);
    const err = await refused;
    expect(err).toBeInstanceOf(ServiceError);
    const app = new Hono().get("/", () => {
      throw err;
    });
    app.onError(errorResponse);
    const answer = await app.request("/");
    expect(answer.status).toBe(503);
    expect(answer.headers.get("Retry-After")).toBe("1");
    // The holder still holds: a later caller runs once it is done.
    const later = mutex.run("a", async () => "later");
    holder.resolve();
    await held;
    await expect(later).resolves.toBe("later");
  });
});
