/**
 * Envelope versions: new writes wrap their data key with AES-256-GCM (version 2); envelopes of
 * version 1 (AES-KW), as the code before sealed them (tests/fixtures/encryption), read back
 * forever with either suite, and a rotation turns them into version 2 without touching a
 * body. A version 2 envelope whose wrapped key, wrap IV or wrap tag was altered is refused as
 * an integrity failure. Runs under Node, Bun and Deno, with node:crypto and Web Crypto.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createStorage } from "unstorage";
import { createBlobStore, createKvStore } from "../../../src/core/storage/unstorage-stores.ts";
import { type DataKeyJwk, encryptedBlobStore, encryptedKvStore, Keyring, rotateKeys, webCryptoSuite } from "../../../src/core/encryption/mod.ts";
import { decodeBase64Url } from "../../../src/core/encoding/base64url.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { nodeCipherSuite } from "../../../src/adapters/server/node-cipher.ts";
import { dataKey } from "../../helpers/encryption.ts";

interface Fixture {
  key: DataKeyJwk;
  blobs: { key: string; plaintext: string; appendLog?: boolean; stored: string }[];
  records: { key: string; plaintext: string; stored: string }[];
}
const fixture = JSON.parse(readFileSync(new URL("../../fixtures/encryption/v1-envelopes.json", import.meta.url), "utf8")) as Fixture;
const suites = { "node:crypto": nodeCipherSuite, "Web Crypto": webCryptoSuite } as const;
const decoder = new TextDecoder();
const VERSION_AT = 6;

/** Raw stores holding the version 1 fixture as it was stored. */
async function v1Stores() {
  const raw = createBlobStore(createStorage());
  const log = createBlobStore(createStorage());
  const kv = createKvStore(createStorage());
  for (const blob of fixture.blobs) await (blob.appendLog ? log : raw).put(blob.key, Buffer.from(blob.stored, "base64"));
  for (const record of fixture.records) await kv.put(record.key, record.stored);
  return { raw, log, kv };
}

/** Every fixture object read through encrypted stores with `keyring` equals its plaintext. */
async function readsBack(stores: Awaited<ReturnType<typeof v1Stores>>, keyring: Keyring): Promise<void> {
  for (const blob of fixture.blobs) {
    const store = encryptedBlobStore(blob.appendLog ? stores.log : stores.raw, keyring, { appendLog: blob.appendLog });
    expect(decoder.decode((await store.get(blob.key))!)).toBe(blob.plaintext);
  }
  for (const record of fixture.records) expect(await encryptedKvStore(stores.kv, keyring).get(record.key)).toBe(record.plaintext);
}

/** The version bytes of every envelope a stored value holds (sealed items and records are base64url inside). */
function versionsOf(stored: Uint8Array | string): number[] {
  const text = typeof stored === "string" ? stored : decoder.decode(stored);
  if (typeof stored !== "string" && stored[0] === 0) return [stored[VERSION_AT]!];
  const envelopes = [...text.matchAll(/"fa-enc":"([^"]+)"|^fa-enc:(.+)$/g)].map((match) => decodeBase64Url(match[1] ?? match[2]!)!);
  return envelopes.map((envelope) => envelope[VERSION_AT]!);
}

/** Where an envelope's base IV starts: past the magic and version, the kid and the wrapped key. */
function headerLength(envelope: Uint8Array): number {
  const wrappedLengthAt = VERSION_AT + 2 + envelope[VERSION_AT + 1]!;
  return wrappedLengthAt + 1 + envelope[wrappedLengthAt]!;
}

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  const err = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(err).toBeInstanceOf(ServiceError);
  expect((err as ServiceError).kind).toBe("integrity-failed");
  return err as ServiceError;
}

describe("envelope versions", () => {
  it("the fixture holds version 1 envelopes: data keys wrapped with AES-KW (40 bytes)", async () => {
    const { raw, log, kv } = await v1Stores();
    for (const blob of fixture.blobs) expect(versionsOf((await (blob.appendLog ? log : raw).get(blob.key))!).every((v) => v === 1)).toBe(true);
    expect(versionsOf((await kv.get("u1"))!)).toEqual([1]);
  });

  for (const [name, suite] of Object.entries(suites)) {
    it(`[${name}] version 1 envelopes written by the code before read back: objects, one in chunks, audit items, records`, async () => {
      await readsBack(await v1Stores(), new Keyring([fixture.key], suite()));
      // Under another current key too: the old key still decrypts.
      await readsBack(await v1Stores(), new Keyring([dataKey("newer"), fixture.key], suite()));
    });

    it(`[${name}] new writes are version 2: the data key wrapped with AES-256-GCM (60 bytes: IV, key, tag)`, async () => {
      const raw = createBlobStore(createStorage());
      await encryptedBlobStore(raw, new Keyring([dataKey("k1")], suite())).put("u1/C-1/data.json", new TextEncoder().encode('{"a":1}'));
      const stored = (await raw.get("u1/C-1/data.json"))!;
      expect(stored[VERSION_AT]).toBe(2);
      const kidLength = stored[VERSION_AT + 1]!;
      expect(stored[VERSION_AT + 2 + kidLength]).toBe(60);
    });

    it(`[${name}] a version 2 envelope with one bit flipped in its wrapped key, wrap IV or wrap tag is refused as an integrity failure`, async () => {
      const k1 = dataKey("k1");
      const raw = createBlobStore(createStorage());
      const body = new TextEncoder().encode(JSON.stringify({ marker: "v2-tamper", pad: "x".repeat(2000) }));
      await encryptedBlobStore(raw, new Keyring([k1], suite())).put("u1/C-1/data.json", body);
      const stored = (await raw.get("u1/C-1/data.json"))!;
      const wrappedAt = VERSION_AT + 2 + stored[VERSION_AT + 1]! + 1;
      // The wrap's IV (0-11), the wrapped key (12-43) and its tag (44-59).
      for (const offset of [0, 11, 12, 30, 43, 44, 59]) {
        const altered = stored.slice();
        altered[wrappedAt + offset]! ^= 0x10;
        await raw.put("u1/C-1/data.json", altered);
        // A fresh keyring each time: no data key or plaintext kept from a read before.
        const err = await refusal(encryptedBlobStore(raw, new Keyring([k1], suite())).get("u1/C-1/data.json"));
        expect(err.message).toMatch(/u1\/C-1\/data.json cannot be decrypted: .*altered in the store/);
      }
      await raw.put("u1/C-1/data.json", stored);
      expect(await encryptedBlobStore(raw, new Keyring([k1], suite())).get("u1/C-1/data.json")).toEqual(body);
    });

    it(`[${name}] a rotation re-wraps version 1 envelopes into version 2 (bodies as they were), then has nothing left to do; everything reads back`, async () => {
      for (const keys of [[fixture.key], [dataKey("rotated-to"), fixture.key]]) {
        const stores = await v1Stores();
        const keyring = new Keyring(keys, suite());
        const maintained = { blobs: [{ name: "data", store: stores.raw }, { name: "audit", store: stores.log, appendLog: true }], kvs: [{ name: "users", store: stores.kv }] };
        const first = await rotateKeys(maintained, keyring);
        expect(first.changed).toBe(first.total);
        for (const blob of fixture.blobs) {
          const stored = (await (blob.appendLog ? stores.log : stores.raw).get(blob.key))!;
          expect(versionsOf(stored).every((v) => v === 2)).toBe(true);
          // Only the header changed: the body (and its IV, chunk size and length) is the one sealed before.
          const before = Buffer.from(blob.stored, "base64");
          if (!blob.appendLog) expect(Buffer.from(stored.subarray(headerLength(stored))).equals(before.subarray(headerLength(before)))).toBe(true);
        }
        expect(versionsOf((await stores.kv.get("u1"))!)).toEqual([2]);
        expect((await rotateKeys(maintained, keyring)).changed).toBe(0);
        // Read back with a fresh keyring of each suite, with only the current key.
        for (const other of Object.values(suites)) await readsBack(stores, new Keyring([keys[0]!], other()));
      }
    });
  }
});
