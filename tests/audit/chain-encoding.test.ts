/**
 * A chained append writes the entry's JSON once and builds the head's text around it; the bytes
 * stored must stay exactly those of JSON.stringify over the entry and head as they were built
 * before (client fields, receivedAt, seq, prevHash, hash; the head's facts, entry, until and
 * signature), for any entry: unicode, escapes, numbers, nesting, a member named __proto__.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createStorage } from "unstorage";
import { createBlobStore } from "../../src/core/storage/unstorage-stores.ts";
import { appendAuditEntry, readAuditTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { type AuditHead, entryHash, type HeadSigner, headFacts } from "../../src/core/audit/chain.ts";
import type { BlobStore } from "../../src/core/ports.ts";
import type { ValidationAuditEntry } from "../../src/core/schemas/audit.ts";

const DAY = "2026-11-22";
const clock = { now: () => new Date(`${DAY}T12:00:00Z`) };
const decoder = new TextDecoder();
// Not a real JWS: only the head's bytes are checked here, so the text has characters to escape.
const signer: HeadSigner = { sign: (payload) => Promise.resolve(`sig"\\\u2028${payload.length}`) };

/** Appends `entry`, then checks the day's last line and the head against JSON.stringify of the entry and head built member by member, with spreads. */
async function appendAndCompare(store: BlobStore, entry: Record<string, unknown>, withSigner: boolean): Promise<void> {
  await appendAuditEntry(store, clock, "u1", entry as ValidationAuditEntry, withSigner ? { signer } : {});
  const headText = decoder.decode((await store.get("audit-heads/u1.json"))!);
  const head = JSON.parse(headText) as AuditHead;
  const expected = { ...entry, receivedAt: clock.now().toISOString(), seq: head.seq, prevHash: head.entry.prevHash } as Record<string, unknown>;
  expected.hash = entryHash(expected);
  expect(head.hash).toBe(expected.hash);
  const day = decoder.decode((await store.get(`audit-trails/u1-${DAY}.json`))!).split("\n");
  expect(day[day.length - 2]!.replace(/^,?/, "").replace(/,$/, "")).toBe(JSON.stringify(expected));
  const signature = head.signature === undefined ? {} : { signature: head.signature };
  expect(withSigner).toBe(head.signature !== undefined);
  // The day's byte count (not signed) sits between `until` and the signature.
  expect(head.dayBytes).toEqual(expect.any(Number));
  expect(headText).toBe(JSON.stringify({ ...headFacts(head), entry: expected, until: head.until, dayBytes: head.dayBytes, ...signature }));
}

const base = {
  timestamp: `${DAY}T12:00:00.000Z`,
  userId: "u1",
  userEmail: "examiner@lab.example",
  action: "annotation-edit",
  result: "success",
};

describe("chained append: the stored bytes", () => {
  it("are JSON.stringify of the entry and head, for entries with escapes, unicode, numbers and odd member names", async () => {
    // Signed and unsigned heads each on a trail of their own: an append never signs over an unsigned head.
    const signed = createBlobStore(createStorage());
    const unsigned = createBlobStore(createStorage());
    const odd = [
      { ...base, details: { validationErrors: ["\u0000\u001f\"\\/\u2028\u2029", "\ud800 lone", "😀 ✓ Überprüfung"], n: -0, big: 1e21, small: 5e-324, x: 0.1 } },
      { details: { z: 1, a: [{ b: null, a: true }], "": "empty name", "10": "ten", "9": "nine" }, ...base, userEmail: "é@\u00e9.example" },
      JSON.parse(`{"timestamp":"${DAY}T12:00:00.000Z","__proto__":{"x":1},"userId":"u1","details":{"__proto__":[1]},"action":"validate","result":"warning","userEmail":""}`) as Record<string, unknown>,
      { ...base, details: {}, receivedAt: "set by the client, replaced" },
    ];
    for (const entry of odd) {
      await appendAndCompare(signed, entry, true);
      await appendAndCompare(unsigned, entry, false);
    }
    for (const store of [signed, unsigned]) {
      const result = await verifyAuditTrail(await readAuditTrail(store, "u1", [DAY]));
      expect(result).toMatchObject({ valid: true, entries: odd.length });
    }
  });

  it("are JSON.stringify of the entry and head for generated details", async () => {
    const stores = [createBlobStore(createStorage()), createBlobStore(createStorage())];
    const appended = [0, 0];
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string({ unit: "binary" }), fc.jsonValue()), fc.boolean(), async (details, withSigner) => {
        await appendAndCompare(stores[Number(withSigner)]!, { ...base, details }, withSigner);
        appended[Number(withSigner)]!++;
      }),
      { numRuns: 150 },
    );
    for (const [i, store] of stores.entries()) {
      const result = await verifyAuditTrail(await readAuditTrail(store, "u1", [DAY]));
      expect(result).toMatchObject({ valid: true, entries: appended[i] });
    }
  });

  it("a head replaced behind the process's back by one of the same length is read as stored, not as the head it wrote", async () => {
    const store = createBlobStore(createStorage());
    for (let n = 0; n < 2; n++) await appendAuditEntry(store, clock, "u1", { ...base, details: { n } } as ValidationAuditEntry);
    const text = decoder.decode((await store.get("audit-heads/u1.json"))!);
    expect(text).toContain('"index":1,');
    // One byte changed, deep in the text: the next append must take index 7 from it.
    await store.put("audit-heads/u1.json", new TextEncoder().encode(text.replace('"index":1,', '"index":7,')));
    await appendAuditEntry(store, clock, "u1", { ...base, details: { n: 2 } } as ValidationAuditEntry);
    const head = JSON.parse(decoder.decode((await store.get("audit-heads/u1.json"))!)) as AuditHead;
    expect(head).toMatchObject({ seq: 3, index: 8 });
  });
});
