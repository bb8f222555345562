/**
 * The watcher `serve` starts under Deno and Bun (src/adapters/server/memory-reclaim.ts): it
 * collects once the watched figure grew by its threshold since the last collection, counts from a
 * collection the runtime made itself, and never runs without cause. Its effect on a real server is
 * in tests/adapters/server/exchange-memory.test.ts (Deno and Bun held to the bound).
 */
import { describe, expect, it } from "vitest";
import { reclaimArrayBuffersOnDeno, reclaimMemory, reclaimOnBun, v8Collector } from "../../../src/adapters/server/memory-reclaim.ts";

const MIB = 1024 * 1024;
const tick = () => new Promise((resolve) => setTimeout(resolve, 120));

describe("memory reclaim", () => {
  it("collects once the figure grew by the threshold, then counts from the figure after the collection", async () => {
    let figure = 10 * MIB;
    let collections = 0;
    const stop = reclaimMemory({ every: 8 * MIB, measure: () => figure, collect: () => {
      collections++;
      figure = 12 * MIB; // what the collection left
    } });
    try {
      figure = 17 * MIB; // +7: below the threshold
      await tick();
      expect(collections).toBe(0);
      figure = 19 * MIB; // +9
      await tick();
      expect(collections).toBe(1);
      figure = 19 * MIB; // +7 from what the collection left
      await tick();
      expect(collections).toBe(1);
      // The runtime collected by itself down to 4 MiB: +9 from there is a collection again.
      figure = 4 * MIB;
      await tick();
      figure = 13 * MIB;
      await tick();
      expect(collections).toBe(2);
    } finally {
      stop();
    }
  });

  it("stops quietly when the figure cannot be read, and watches nothing without a collector", async () => {
    let reads = 0;
    const stop = reclaimMemory({ every: MIB, measure: () => {
      reads++;
      if (reads > 1) throw new Error("no figure");
      return 0;
    }, collect: () => {} });
    await tick();
    await tick();
    expect(reads).toBe(2);
    stop();
    let read = false;
    reclaimMemory({ measure: () => (read = true, 0), collect: undefined })();
    expect(read).toBe(false);
  });

  it("this runtime's collector is there where serve uses it: V8's on Node and Deno, Bun.gc on Bun", async () => {
    const bun = (globalThis as { Bun?: unknown }).Bun !== undefined;
    expect(v8Collector() === undefined).toBe(bun);
    // Both starters run and stop on every runtime (each does nothing where its collector is missing).
    const stops = [reclaimArrayBuffersOnDeno(), reclaimOnBun()];
    await tick();
    for (const stop of stops) stop();
  });
});
