/**
 * The watcher `serve` starts under Deno (src/adapters/deno/array-buffer-reclaim.ts): it collects
 * once the bytes outside V8's heap grew by its threshold since the last collection, counts from
 * a collection V8 made itself, and never runs without cause. Its effect on a real server is in
 * tests/adapters/server/exchange-memory.test.ts (Deno held to the bound).
 */
import { describe, expect, it } from "vitest";
import { reclaimArrayBuffers } from "../../../src/adapters/deno/array-buffer-reclaim.ts";

const MIB = 1024 * 1024;
const tick = () => new Promise((resolve) => setTimeout(resolve, 120));

describe("array buffer reclaim", () => {
  it("collects once the figure grew by the threshold, then counts from the figure after the collection", async () => {
    let external = 10 * MIB;
    let collections = 0;
    const stop = reclaimArrayBuffers({ every: 8 * MIB, external: () => external, collect: () => {
      collections++;
      external = 12 * MIB; // what the collection left
    } });
    try {
      external = 17 * MIB; // +7: below the threshold
      await tick();
      expect(collections).toBe(0);
      external = 19 * MIB; // +9
      await tick();
      expect(collections).toBe(1);
      external = 19 * MIB; // +7 from what the collection left
      await tick();
      expect(collections).toBe(1);
      // V8 collected by itself down to 4 MiB: +8 from there is a collection again.
      external = 4 * MIB;
      await tick();
      external = 13 * MIB;
      await tick();
      expect(collections).toBe(2);
    } finally {
      stop();
    }
  });

  it("stops quietly when the figure cannot be read, and the real collector is there on this runtime", async () => {
    let reads = 0;
    const stop = reclaimArrayBuffers({ every: MIB, external: () => {
      reads++;
      if (reads > 1) throw new Error("no figure");
      return 0;
    }, collect: () => {} });
    await tick();
    await tick();
    expect(reads).toBe(2);
    stop();
    // Without a replacement it uses node:v8's collector, exposed at run time (Node, Deno; Bun refuses it, and nothing runs).
    const stopReal = reclaimArrayBuffers({ every: 1 });
    await tick();
    stopReal();
  });
});
