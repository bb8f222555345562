/**
 * The storage-port suite: every BlobStore backend runs the same cases (ARCHITECTURE,
 * after unstorage's `testDriver`), each asserting that no concurrent append is lost.
 */
import { describe, expect, it } from "vitest";
import type { BlobStore, KvStore } from "../../src/core/ports.ts";
import { keyFromRawPath, MAX_KEY_BYTES, MAX_SEGMENT_BYTES, storageKeys } from "../../src/core/storage/keys.ts";
import { userRecords } from "../../src/core/users/user-records.ts";
import { historySuite } from "./history-suite.ts";
import { copiedStream } from "../../src/core/storage/byte-stream.ts";
import { sameBytes } from "../../src/core/encoding/same-bytes.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array | null) => (value === null ? null : new TextDecoder().decode(value));
const byteLength = (value: string) => new TextEncoder().encode(value).length;
/** Random bytes (getRandomValues fills at most 64 KiB a call). */
const randomBytes = (length: number): Uint8Array => {
  const out = new Uint8Array(length);
  for (let at = 0; at < length; at += 65_536) crypto.getRandomValues(out.subarray(at, Math.min(at + 65_536, length)));
  return out;
};
/** A data key as a request path brings it: each segment percent-encoded, then checked by the key rules. */
const dataKey = (...segments: string[]) => keyFromRawPath(segments.map(encodeURIComponent).join("/"));

// The longest names the key rules accept, in two-byte characters so that bytes, not characters, count.
const SEGMENT = `${"é".repeat(127)}x`; // 255 bytes
const LEAF = `${"é".repeat(125)}.json`; // 255 bytes, a document name
const DAY = "2026-11-22";

/** A stream of `value` cut into pieces of the given sizes (the rest in one last piece). */
function streamOf(value: Uint8Array, sizes: number[]): ReadableStream<Uint8Array> {
  const pieces: Uint8Array[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= value.length) break;
    pieces.push(value.slice(at, at + size));
    at += size;
  }
  if (at < value.length) pieces.push(value.slice(at));
  return new ReadableStream({
    pull(controller) {
      const piece = pieces.shift();
      if (piece === undefined) controller.close();
      else controller.enqueue(piece);
    },
  });
}

/** Keys at the limits of the key rules (storage/keys.ts), each built by them. */
export function longestKeys(): Record<string, string> {
  const keys = {
    /** Three 255-byte folders and the rest of 1000 bytes as the document name. */
    wide: dataKey(SEGMENT, SEGMENT, SEGMENT, `${"a".repeat(MAX_KEY_BYTES - 3 * (MAX_SEGMENT_BYTES + 1) - 5)}.json`),
    /** A 255-byte folder and a 255-byte document name. */
    longLeaf: dataKey(SEGMENT, LEAF),
    /** 497 one-byte folders: the most key parts (Deno KV counts bytes per part). */
    deep: dataKey(...Array.from({ length: 497 }, () => "a"), "x.json"),
    /** The audit day of a 255-byte user id: a 271-byte name. */
    auditDay: storageKeys.auditDay(SEGMENT, DAY),
    legacyAuditDay: storageKeys.legacyAuditDay(SEGMENT, DAY),
    /** A hosted image's metadata beside a 255-byte image id: a 260-byte name. */
    imageMetadata: `${storageKeys.image(SEGMENT)}.json`,
  };
  if (byteLength(keys.wide) !== MAX_KEY_BYTES || byteLength(keys.deep) !== MAX_KEY_BYTES) {
    throw new Error("the longest keys are not at the limit");
  }
  return keys;
}

/** Runs the BlobStore cases against `make()` (a fresh, empty store per call). */
export function blobStoreSuite(
  name: string,
  make: () => Promise<BlobStore> | BlobStore,
  options: {
    /** Two stores over one backend, as two processes or isolates would hold them. */
    makePair?: () => Promise<[BlobStore, BlobStore]>;
    /** Whether to run the record-history cases (default true; not for the audit store's blocks, which no data store uses). */
    history?: boolean;
    /** Whether the store reads ranges into the caller's buffer (`readInto`: the files store). */
    readInto?: boolean;
  } = {},
): void {
  describe(`BlobStore on ${name}`, () => {
    it.runIf(options.readInto === true)(`[${name}] readInto fills the caller's buffer with a range of the value, fewer bytes at its end, null for an absent key`, async () => {
      const store = await make();
      const image = randomBytes(200_000);
      await store.put("images/ranged", image);
      const into = new Uint8Array(50_000);
      expect(await store.readInto!("images/ranged", 70_000, into)).toBe(50_000);
      expect(into).toEqual(image.subarray(70_000, 120_000));
      expect(await store.readInto!("images/ranged", 190_000, into)).toBe(10_000);
      expect(into.subarray(0, 10_000)).toEqual(image.subarray(190_000));
      expect(await store.readInto!("images/ranged", 200_000, into)).toBe(0);
      expect(await store.readInto!("images/absent", 0, into)).toBeNull();
      // A document name that is a folder too (files store it under another name).
      await store.put("images/ranged/inner", bytes("x"));
      await store.put("images/ranged", image.subarray(0, 1000));
      expect(await store.readInto!("images/ranged", 10, into)).toBe(990);
      expect(into.subarray(0, 990)).toEqual(image.subarray(10, 1000));
    });

    it(`[${name}] put, get, has, delete keep /-separated keys as they are`, async () => {
      const store = await make();
      expect(await store.get("u1/C-1/data.json")).toBeNull();
      expect(await store.has("u1/C-1/data.json")).toBe(false);
      await store.put("u1/C-1/data.json", bytes('{"caseNumber":"C-1","note":"é ✓"}'));
      expect(text(await store.get("u1/C-1/data.json"))).toBe('{"caseNumber":"C-1","note":"é ✓"}');
      expect(await store.has("u1/C-1/data.json")).toBe(true);
      expect(await store.delete("u1/C-1/data.json")).toBe(true);
      expect(await store.delete("u1/C-1/data.json")).toBe(false);
      expect(await store.get("u1/C-1/data.json")).toBeNull();
    });

    it(`[${name}] stores binary bytes exactly`, async () => {
      const store = await make();
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      await store.put("images/bin", all);
      expect(Array.from((await store.get("images/bin"))!)).toEqual(Array.from(all));
    });

    it(`[${name}] putStream stores what the stream holds, whatever its pieces, and replaces the value whole`, async () => {
      const store = await make();
      const image = randomBytes(200_000);
      await store.put("images/streamed", bytes("old"));
      await store.putStream!("images/streamed", image.length, streamOf(image, [1, 70_000, 3, 65_536, 64_460]));
      expect(await store.get("images/streamed")).toEqual(image);
      // A document name that is a folder too (files store it under another name).
      await store.put("images/streamed/inner", bytes("x"));
      await store.putStream!("images/streamed", 3, streamOf(bytes("new"), [3]));
      expect(text(await store.get("images/streamed"))).toBe("new");
      expect(await store.list("images/")).toEqual(["images/streamed", "images/streamed/inner"]);
    });

    it(`[${name}] a putStream whose body fails or holds another length than announced stores nothing`, async () => {
      const store = await make();
      await store.put("images/kept", bytes("old"));
      const image = randomBytes(100_000);
      await expect(store.putStream!("images/kept", image.length + 10, streamOf(image, [50_000, 50_000]))).rejects.toThrow();
      await expect(store.putStream!("images/kept", image.length - 10, streamOf(image, [50_000, 50_000]))).rejects.toThrow();
      const failing = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(image.subarray(0, 50_000));
          controller.error(new Error("the client went away"));
        },
      });
      await expect(store.putStream!("images/kept", image.length, failing)).rejects.toThrow();
      await expect(store.putStream!("images/new", image.length, streamOf(image.subarray(0, 10), [10]))).rejects.toThrow();
      expect(text(await store.get("images/kept"))).toBe("old");
      expect(await store.has("images/new")).toBe(false);
      expect(await store.list("images/")).toEqual(["images/kept"]);
    });

    it(`[${name}] putStream of a byte stream (read into the store's own buffer where it can) stores its bytes, and the bytes given may be reused once it resolved`, async () => {
      const store = await make();
      const buffer = randomBytes(300_000);
      const first = buffer.slice();
      await store.putStream!("images/spooled.000000", buffer.length, copiedStream(buffer, 70_000));
      // The spool's buffer takes the next chunk at once.
      buffer.set(randomBytes(300_000));
      await store.putStream!("images/spooled.000001", 1000, copiedStream(buffer.subarray(0, 1000)));
      buffer.fill(0);
      expect(sameBytes((await store.get("images/spooled.000000"))!, first)).toBe(true);
      expect((await store.get("images/spooled.000001"))!.length).toBe(1000);
    });

    it(`[${name}] lists keys under a folder`, async () => {
      const store = await make();
      for (const key of ["u1/C-1/data.json", "u1/C-1/f1/data.json", "u1/C-2/data.json", "u2/C-1/data.json"]) {
        await store.put(key, bytes("{}"));
      }
      expect(await store.list("u1/")).toEqual(["u1/C-1/data.json", "u1/C-1/f1/data.json", "u1/C-2/data.json"]);
      expect(await store.list("u1/C-1/")).toEqual(["u1/C-1/data.json", "u1/C-1/f1/data.json"]);
      expect(await store.list("u3/")).toEqual([]);
    });

    it(`[${name}] lists keys holding characters XML escapes (' " & < >) as written, and a day under such a user reads whole`, async () => {
      // An S3 listing is XML: a server may escape ' as &#39; or &#x27; (numeric references), not only &apos;.
      const store = await make();
      const user = `o'k"a&b<c>`;
      const keys = [`${user}/C-1/data.json`, `${user}/a"'b/data.json`, `${user}/&amp;x/data.json`];
      for (const key of keys) await store.put(key, bytes("{}"));
      expect(await store.list(`${user}/`)).toEqual([...keys].sort());
      const day = `audit-trails/${user}-2026-11-28.json`;
      for (let n = 1; n <= 7; n++) await store.appendToJsonArray(day, { n });
      expect(await store.list("audit-trails/")).toEqual([day]);
      expect(JSON.parse(text(await store.get(day))!)).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => ({ n })));
    }, 60_000);

    it(`[${name}] stores every name the key rules accept: 255-byte segments, 1000-byte keys, a 255-byte user's audit day`, async () => {
      const store = await make();
      const keys = longestKeys();
      for (const [what, key] of Object.entries(keys)) {
        if (what === "auditDay") continue;
        await store.put(key, bytes(JSON.stringify({ what })));
        expect(await store.has(key), what).toBe(true);
        expect(text(await store.get(key)), what).toBe(JSON.stringify({ what }));
      }
      const counts = [];
      for (let n = 1; n <= 3; n++) counts.push(await store.appendToJsonArray(keys.auditDay!, { n }));
      expect(counts).toEqual([1, 2, 3]);
      expect(JSON.parse(text(await store.get(keys.auditDay!))!)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      // Listings give back the keys exactly as written.
      expect(await store.list(`${SEGMENT}/`)).toEqual([keys.wide, keys.longLeaf].sort());
      expect(await store.list("audit-trails/")).toEqual([keys.auditDay, keys.legacyAuditDay].sort());
      expect(await store.list("images/")).toEqual([keys.imageMetadata]);
      expect(await store.list("a/a/")).toEqual([keys.deep]);
      for (const [what, key] of Object.entries(keys)) {
        expect(await store.delete(key), what).toBe(true);
        expect(await store.get(key), what).toBeNull();
      }
      expect(await store.list("")).toEqual([]);
    }, 60_000);

    it(`[${name}] a document and a folder of the same name live side by side, written in either order`, async () => {
      const store = await make();
      for (const [first, second] of [["u1/x.json", "u1/x.json/y.json"], ["u1/d.json/y.json", "u1/d.json"]] as const) {
        await store.put(first, bytes(`{"at":"${first}"}`));
        await store.put(second, bytes(`{"at":"${second}"}`));
        expect(text(await store.get(first))).toBe(`{"at":"${first}"}`);
        expect(text(await store.get(second))).toBe(`{"at":"${second}"}`);
        expect(await store.has(first)).toBe(true);
        expect(await store.has(second)).toBe(true);
        // Rewritten once both exist, each keeps its own value.
        await store.put(first, bytes(`{"again":"${first}"}`));
        await store.put(second, bytes(`{"again":"${second}"}`));
        expect(text(await store.get(first))).toBe(`{"again":"${first}"}`);
        expect(text(await store.get(second))).toBe(`{"again":"${second}"}`);
      }
      expect(await store.list("u1/")).toEqual(["u1/d.json", "u1/d.json/y.json", "u1/x.json", "u1/x.json/y.json"]);
      // Deleting either one leaves the other.
      expect(await store.delete("u1/x.json")).toBe(true);
      expect(text(await store.get("u1/x.json/y.json"))).toBe(`{"again":"u1/x.json/y.json"}`);
      expect(await store.delete("u1/d.json/y.json")).toBe(true);
      expect(text(await store.get("u1/d.json"))).toBe(`{"again":"u1/d.json"}`);
      expect(await store.list("u1/")).toEqual(["u1/d.json", "u1/x.json/y.json"]);
      expect(await store.delete("u1/d.json")).toBe(true);
      expect(await store.delete("u1/x.json/y.json")).toBe(true);
      expect(await store.list("u1/")).toEqual([]);
      // An audit day and a document beside a folder of its name take appends too.
      await store.put("u2/day.json/y.json", bytes("{}"));
      expect(await store.appendToJsonArray("u2/day.json", { n: 1 })).toBe(1);
      expect(await store.appendToJsonArray("u2/day.json", { n: 2 })).toBe(2);
      expect(JSON.parse(text(await store.get("u2/day.json"))!)).toEqual([{ n: 1 }, { n: 2 }]);
    }, 60_000);

    it(`[${name}] concurrent updates of one key lose nothing`, async () => {
      const store = await make();
      await Promise.all(
        Array.from({ length: 40 }, () =>
          store.update("counter.json", (current) => bytes(String(Number(text(current) ?? "0") + 1)))
        ),
      );
      expect(text(await store.get("counter.json"))).toBe("40");
    }, 60_000);

    it(`[${name}] 8 writers x 16 concurrent appends to one day: 0 lost, counts 1..128 once each`, async () => {
      const store = await make();
      const key = "audit-trails/u1-2026-11-22.json";
      const counts = await Promise.all(
        Array.from({ length: 8 }, (_, writer) =>
          Promise.all(Array.from({ length: 16 }, (_, i) => store.appendToJsonArray(key, { writer, i })))
        ),
      );
      expect(counts.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 128 }, (_, i) => i + 1));
      const items = JSON.parse(text(await store.get(key))!) as { writer: number; i: number }[];
      expect(items).toHaveLength(128);
      expect(new Set(items.map((item) => `${item.writer}:${item.i}`)).size).toBe(128);
    }, 60_000);

    if (options.history !== false) historySuite(name, make, options.makePair);

    if (options.makePair) {
      const makePair = options.makePair;
      it(`[${name}] appends from two processes' stores over one backend: 0 lost`, async () => {
        const [a, b] = await makePair();
        const key = "audit-trails/u1-2026-11-23.json";
        const counts = await Promise.all(
          Array.from({ length: 64 }, (_, i) => (i % 2 === 0 ? a : b).appendToJsonArray(key, { i })),
        );
        expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
        const items = JSON.parse(text(await a.get(key))!) as { i: number }[];
        expect(items.map((item) => item.i).sort((x, y) => x - y)).toEqual(Array.from({ length: 64 }, (_, i) => i));
      }, 60_000);
    }
  });
}

/** Runs the KvStore cases against `make()`. */
/** Options of {@link kvStoreSuite}. */
export interface KvStoreSuiteOptions {
  /** Whether the backend offers `replaceIf` (a compare-and-swap, or one process holding the store). */
  compareAndSet: boolean;
  /** Two stores over the same keys with no lock in common, as two server processes have. */
  makePair?: () => Promise<[KvStore, KvStore]>;
}

/**
 * 100 concurrent case additions to one user record, alternating between two stores over the
 * same keys (two processes' worth): every case is kept.
 */
export async function expectNoLostRecordUpdates([first, second]: [KvStore, KvStore], additions = 100): Promise<void> {
  const records = [userRecords(first), userRecords(second)];
  const createdAt = "2026-11-22T12:00:00.000Z";
  await records[0]!.update("u1", () => ({
    next: { uid: "u1", email: null, firstName: "A", lastName: "B", company: "Lab", permitted: true, cases: [], createdAt },
    result: undefined,
  }));
  let runs = 0;
  await Promise.all(Array.from({ length: additions }, (_, i) =>
    records[i % 2]!.update("u1", (current) => {
      runs++;
      return { next: { ...current!, cases: [...current!.cases, { caseNumber: `C-${i}`, createdAt }] }, result: undefined };
    })));
  const kept = (await records[1]!.get("u1"))!.cases.map((assignment) => assignment.caseNumber);
  expect(kept.length).toBe(additions);
  expect(new Set(kept)).toEqual(new Set(Array.from({ length: additions }, (_, i) => `C-${i}`)));
  // The two stores did write over each other's reads: conflicts happened and were retried.
  expect(runs).toBeGreaterThan(additions);
}

export function kvStoreSuite(name: string, make: () => Promise<KvStore> | KvStore, options: KvStoreSuiteOptions): void {
  describe(`KvStore on ${name}`, () => {
    if (!options.compareAndSet) {
      it(`[${name}] offers no compare-and-set`, async () => {
        expect((await make()).replaceIf).toBeUndefined();
      });
    } else {
      it(`[${name}] replaceIf writes only over the expected string, or an absent key for null`, async () => {
        const store = await make();
        const replaceIf = store.replaceIf!.bind(store);
        expect(await replaceIf("u1", "{}", '{"a":1}')).toBe(false); // absent, a value expected
        expect(await store.get("u1")).toBeNull();
        expect(await replaceIf("u1", null, '{"a":"Zoë"}')).toBe(true); // absent, absent expected
        expect(await store.get("u1")).toBe('{"a":"Zoë"}');
        expect(await replaceIf("u1", null, '{"a":2}')).toBe(false); // present, absent expected
        expect(await replaceIf("u1", '{"a":"Zoe"}', '{"a":3}')).toBe(false); // another string
        expect(await replaceIf("u1", '{"a":"Zoë"} ', '{"a":3}')).toBe(false); // not exactly it
        expect(await store.get("u1")).toBe('{"a":"Zoë"}');
        expect(await replaceIf("u1", '{"a":"Zoë"}', '{"a":4}')).toBe(true); // exactly the stored string
        expect(await store.get("u1")).toBe('{"a":4}');
        expect(await replaceIf("u1", '{"a":4}', "")).toBe(true);
        expect(await replaceIf("u1", "", '{"a":5}')).toBe(true); // the empty string is a value, not absence
        expect(await store.get("u1")).toBe('{"a":5}');
        expect(await store.delete("u1")).toBe(true);
        expect(await replaceIf("u1", '{"a":5}', '{"a":6}')).toBe(false);
        expect(await store.get("u1")).toBeNull();
      });
    }

    if (options.makePair !== undefined) {
      const makePair = options.makePair;
      it(`[${name}] two stores on the same keys lose none of 100 concurrent user-record updates`, async () => {
        await expectNoLostRecordUpdates(await makePair());
      }, 60_000);
    }


    it(`[${name}] put, get, delete, list`, async () => {
      const store = await make();
      expect(await store.get("u1")).toBeNull();
      await store.put("u1", JSON.stringify({ uid: "u1", firstName: "Zoë" }));
      await store.put("u2", "{}");
      expect(JSON.parse((await store.get("u1"))!)).toEqual({ uid: "u1", firstName: "Zoë" });
      expect(await store.list("")).toEqual(["u1", "u2"]);
      expect(await store.delete("u1")).toBe(true);
      expect(await store.delete("u1")).toBe(false);
      expect(await store.get("u1")).toBeNull();
    });

    it(`[${name}] keeps a record under a 255-byte user id`, async () => {
      const store = await make();
      const uid = storageKeys.user(SEGMENT);
      await store.put(uid, '{"uid":"long"}');
      expect(await store.get(uid)).toBe('{"uid":"long"}');
      expect(await store.list("")).toEqual([uid]);
      expect(await store.delete(uid)).toBe(true);
      expect(await store.get(uid)).toBeNull();
    });
  });
}
