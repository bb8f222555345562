import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import { createBlobStore } from "../../../src/core/storage/unstorage-stores.ts";
import { type CipherSuite, encryptedBlobStore, Keyring, OPENED_OBJECTS_BYTES, webCryptoSuite } from "../../../src/core/encryption/mod.ts";
import { dataKey } from "../../helpers/encryption.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Web Crypto's suite, counting the decryptions it is asked for. */
function countingSuite(): { suite: CipherSuite; decrypted: () => number } {
  const inner = webCryptoSuite() as CipherSuite;
  let count = 0;
  return {
    suite: { ...inner, decrypt: (...args) => (count++, inner.decrypt(...args)) },
    decrypted: () => count,
  };
}

function storeWith(openedObjectsBytes?: number) {
  const counting = countingSuite();
  const keyring = new Keyring([dataKey("k1")], counting.suite, openedObjectsBytes === undefined ? {} : { openedObjectsBytes });
  const raw = createBlobStore(createStorage());
  return { raw, keyring, sealed: encryptedBlobStore(raw, keyring), decrypted: counting.decrypted };
}

const documentOf = (i: number, length = 1000) => encoder.encode(JSON.stringify({ caseNumber: `C-${i}`, pad: "x".repeat(length) }));

describe("opened objects kept in memory", () => {
  it("an unchanged document read again is not decrypted again (from its third read); a changed one is, and reads back new", async () => {
    const { raw, sealed, decrypted } = storeWith();
    await sealed.put("u1/C-1/data.json", documentOf(1));
    // Kept from its second read on.
    expect(await sealed.get("u1/C-1/data.json")).toEqual(documentOf(1));
    expect(await sealed.get("u1/C-1/data.json")).toEqual(documentOf(1));
    expect(decrypted()).toBe(2);
    for (let i = 0; i < 5; i++) expect(await sealed.get("u1/C-1/data.json")).toEqual(documentOf(1));
    expect(decrypted()).toBe(2);
    // What a reader does with what it was given does not change what the next reader gets.
    (await sealed.get("u1/C-1/data.json"))!.fill(0);
    expect(await sealed.get("u1/C-1/data.json")).toEqual(documentOf(1));
    // Another document's envelope put under its key in the store: opened (and refused), not served from memory.
    await sealed.put("u1/C-2/data.json", documentOf(2));
    await raw.put("u1/C-1/data.json", (await raw.get("u1/C-2/data.json"))!);
    await expect(sealed.get("u1/C-1/data.json")).rejects.toThrow(/u1\/C-1\/data.json failed its integrity check/);
    await sealed.put("u1/C-1/data.json", documentOf(3));
    expect(await sealed.get("u1/C-1/data.json")).toEqual(documentOf(3));
    expect(decrypted()).toBe(4);
  });

  it("holds no more bytes than its bound, whatever is read, and keeps what is read again", async () => {
    const limit = 64 * 1024;
    const { sealed, keyring, decrypted } = storeWith(limit);
    expect(keyring.opened.limit).toBe(limit);
    for (let i = 0; i < 100; i++) await sealed.put(`u1/C-${i}/data.json`, documentOf(i));
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 100; i++) {
        expect(await sealed.get(`u1/C-${i}/data.json`)).toEqual(documentOf(i));
        // One document read between every other: it stays kept while the rest come and go.
        expect(await sealed.get("u1/C-0/data.json")).toEqual(documentOf(0));
        expect(keyring.opened.bytes).toBeLessThanOrEqual(limit);
      }
    }
    expect(keyring.opened.size).toBeGreaterThan(10);
    // 200 reads of 100 documents that do not all fit: each decrypted every time, but C-0 only twice.
    expect(decrypted()).toBe(200 - 2 + 2);
  });

  it("keeps nothing with a bound of 0, and no object larger than a sixteenth of its bound", async () => {
    const off = storeWith(0);
    await off.sealed.put("u1/C-1/data.json", documentOf(1));
    for (let i = 0; i < 3; i++) expect(decoder.decode((await off.sealed.get("u1/C-1/data.json"))!)).toContain("C-1");
    expect(off.decrypted()).toBe(3);
    expect(off.keyring.opened.bytes).toBe(0);
    const small = storeWith(16 * 1024);
    await small.sealed.put("u1/C-1/data.json", documentOf(1, 2000));
    await small.sealed.get("u1/C-1/data.json");
    await small.sealed.get("u1/C-1/data.json");
    expect(small.keyring.opened.size).toBe(0);
    expect(new Keyring([dataKey("k1")]).opened.limit).toBe(OPENED_OBJECTS_BYTES);
  });
});
