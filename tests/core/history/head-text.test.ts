/**
 * A history head is written as `JSON.stringify` of what it holds (key-history.ts builds the text
 * from its record's and contents' texts, made once for the head and the arrays' appends).
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import { createKeyHistories, historyKeys } from "../../../src/core/history/mod.ts";
import { createBlobStore } from "../../../src/core/storage/unstorage-stores.ts";
import { parseJsonArray } from "../../../src/core/storage/json-array.ts";

const clock = { now: () => new Date("2026-12-02T13:20:00.000Z") };
const decoder = new TextDecoder();

describe("history head text", () => {
  it("is JSON.stringify of the head for text, binary and deleted versions, and the arrays hold the same record and contents", async () => {
    const store = createBlobStore(createStorage(), { soleWriter: true });
    const histories = createKeyHistories(store, { clock });
    const key = "u1/C-\u00e9/data.json";
    const versions: Uint8Array[] = [
      new TextEncoder().encode(JSON.stringify({ note: 'quote " backslash \\ line\nbreak \u2028 emoji \u{1F52B} nul \u0000' })),
      Uint8Array.from([0xff, 0xfe, 0x00, 0x80, 0x22, 0x5c]),
    ];
    for (const [i, bytes] of versions.entries()) {
      await histories.write(key, bytes, `writer-${i}"\\`);
      const text = decoder.decode((await store.get(historyKeys(key).head))!);
      const head = JSON.parse(text) as { record: unknown; contents: unknown; key: string };
      expect(text).toBe(JSON.stringify(head));
      expect(head.key).toBe(key);
      const records = parseJsonArray((await store.get(historyKeys(key).versions))!).items;
      const contents = parseJsonArray((await store.get(historyKeys(key).contents))!).items;
      expect(records.at(-1)).toEqual(head.record);
      expect(contents.at(-1)).toEqual(head.contents);
    }
    await histories.remove(key, "u1");
    const text = decoder.decode((await store.get(historyKeys(key).head))!);
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
    expect(JSON.parse(text).contents).toEqual({ v: 3, deleted: true });
    expect(await histories.read(key, 1)).toEqual(versions[0]);
    expect(await histories.read(key, 2)).toEqual(versions[1]);
    expect(await histories.verify(key)).toEqual({ valid: true });
  });
});
