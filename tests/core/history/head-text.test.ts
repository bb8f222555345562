/**
 * A history head is written as `JSON.stringify` of what it holds, and a log item as
 * `JSON.stringify({record, contents})` (key-history.ts builds the texts from the record's and
 * contents' texts, made once for the head and the log's append). A store one process holds
 * keeps no head: its log's last item is the newest version.
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import { createKeyHistories, historyKeys } from "../../../src/core/history/mod.ts";
import { createBlobStore } from "../../../src/core/storage/unstorage-stores.ts";
import { jsonArrayLines, parseJsonArray } from "../../../src/core/storage/json-array.ts";

const clock = { now: () => new Date("2026-12-02T13:20:00.000Z") };
const decoder = new TextDecoder();

describe("history head and log text", () => {
  for (const soleWriter of [false, true]) {
    it(`is JSON.stringify of the head and of each log item for text, binary and deleted versions (${soleWriter ? "one process holds the store: no head" : "a shared store: a head"})`, async () => {
      const store = createBlobStore(createStorage(), { soleWriter });
      const histories = createKeyHistories(store, { clock });
      const key = "u1/C-\u00e9/data.json";
      const keys = historyKeys(key);
      const versions: Uint8Array[] = [
        new TextEncoder().encode(JSON.stringify({ note: 'quote " backslash \\ line\nbreak \u2028 emoji \u{1F52B} nul \u0000' })),
        Uint8Array.from([0xff, 0xfe, 0x00, 0x80, 0x22, 0x5c]),
      ];
      const lastItem = async () => {
        const log = (await store.get(keys.log))!;
        const lines = jsonArrayLines(log)!;
        const text = decoder.decode(lines.at(-1));
        expect(text).toBe(JSON.stringify(JSON.parse(text)));
        return parseJsonArray(log).items.at(-1) as { record: { version: number }; contents: unknown };
      };
      for (const [i, bytes] of versions.entries()) {
        await histories.write(key, bytes, `writer-${i}"\\`);
        const item = await lastItem();
        expect(item.record.version).toBe(i + 1);
        const stored = await store.get(keys.head);
        if (!soleWriter) {
          const text = decoder.decode(stored!);
          const head = JSON.parse(text) as { record: unknown; contents: unknown; key: string };
          expect(text).toBe(JSON.stringify(head));
          expect(head.key).toBe(key);
          expect(item).toEqual({ record: head.record, contents: head.contents });
        } else {
          expect(stored).toBeNull();
        }
      }
      await histories.remove(key, "u1");
      expect((await lastItem()).contents).toEqual({ v: 3, deleted: true });
      expect(await store.has(keys.versions)).toBe(false);
      expect(await store.has(keys.contents)).toBe(false);
      expect(await histories.read(key, 1)).toEqual(versions[0]);
      expect(await histories.read(key, 2)).toEqual(versions[1]);
      expect(await histories.verify(key)).toEqual({ valid: true });
    });
  }
});
