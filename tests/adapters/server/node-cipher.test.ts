/**
 * The node:crypto suite `serve` seals with is the same cipher as Web Crypto, byte for byte:
 * what one seals the other opens (bodies, items, records, re-wrapped keys; version 1
 * envelopes: tests/adapters/server/envelope-versions.test.ts), and tampering is refused by both. Runs under Node, Bun and Deno, each with its own node:crypto.
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import { createBlobStore, createKvStore } from "../../../src/core/storage/unstorage-stores.ts";
import { encryptedBlobStore, encryptedKvStore, Keyring, rewrapValue, webCryptoSuite } from "../../../src/core/encryption/mod.ts";
import { nodeCipherSuite, serverCipherSuite } from "../../../src/adapters/server/node-cipher.ts";
import { CHUNK_BYTES } from "../../../src/core/encryption/envelope.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { dataKey } from "../../helpers/encryption.ts";

const old = dataKey("old");
const fresh = dataKey("new");
const body = Uint8Array.from({ length: 2 * CHUNK_BYTES + 77 }, (_, i) => (i * 31) % 251);

describe("node:crypto cipher suite", () => {
  /** The data key a wrapping holds, as Web Crypto unwraps it (RFC 7518 §4.7: IV, ciphertext, tag). */
  const webUnwrap = async (kek: Uint8Array, wrapped: Uint8Array): Promise<Uint8Array> => {
    const key = await crypto.subtle.importKey("raw", new Uint8Array(kek), "AES-GCM", false, ["unwrapKey"]);
    const params = { name: "AES-GCM", iv: wrapped.slice(0, 12), tagLength: 128 };
    const unwrapped = await crypto.subtle.unwrapKey("raw", wrapped.slice(12), key, params, "AES-GCM", true, ["decrypt"]);
    return new Uint8Array(await crypto.subtle.exportKey("raw", unwrapped));
  };

  it("is chosen by serve on this runtime, and wraps data keys as Web Crypto unwraps them", async () => {
    const suite = await serverCipherSuite();
    const kek = { kid: "k", bytes: crypto.getRandomValues(new Uint8Array(32)) };
    const { key, wrapped } = await nodeCipherSuite().newDataKey(kek);
    expect(wrapped.length).toBe(60);
    expect(await webUnwrap(kek.bytes, wrapped)).toEqual(new Uint8Array(key));
    // Node, Bun and Deno all pass the self-check, so serve seals with node:crypto (data keys as bytes, not CryptoKeys).
    expect((await suite.newDataKey(kek)).key).toBeInstanceOf(Uint8Array);
  });

  it("hands out data keys made ahead in batches: each new, with its own wrap IV, wrapped under the KEK it was asked for", async () => {
    const suite = nodeCipherSuite();
    const keks = [1, 2].map((n) => ({ kid: `k${n}`, bytes: crypto.getRandomValues(new Uint8Array(32)) }));
    const seen = new Set<string>();
    const ivs = new Set<string>();
    // More keys than one batch holds, from two KEKs in turn.
    for (let i = 0; i < 600; i++) {
      const which = i % 2;
      const { key, wrapped } = await suite.newDataKey(keks[which]!);
      const hex = Buffer.from(key).toString("hex");
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
      ivs.add(Buffer.from(wrapped.subarray(0, 12)).toString("hex"));
      expect(await webUnwrap(keks[which]!.bytes, wrapped)).toEqual(new Uint8Array(key));
      // The node suite unwraps it too, and not under the other KEK.
      expect(new Uint8Array(await suite.unwrap(keks[which]!, wrapped, "gcm"))).toEqual(new Uint8Array(key));
      await expect(suite.unwrap(keks[1 - which]!, wrapped, "gcm")).rejects.toThrow();
    }
    expect(ivs.size).toBe(600);
  });

  it("opens a document at once (no promise), keeps it from its second read as Web Crypto's suite does, and still refuses a swapped one", async () => {
    const inner = nodeCipherSuite();
    let decrypted = 0;
    let unwrapped = 0;
    const suite = {
      ...inner,
      unwrapNow: (...args: Parameters<NonNullable<typeof inner.unwrapNow>>) => (unwrapped++, inner.unwrapNow!(...args)),
      decryptNow: (...args: Parameters<NonNullable<typeof inner.decryptNow>>) => (decrypted++, inner.decryptNow!(...args)),
    };
    const raw = createBlobStore(createStorage());
    const sealed = encryptedBlobStore(raw, new Keyring([old], suite));
    const doc = (n: number) => new TextEncoder().encode(JSON.stringify({ caseNumber: `C-${n}`, pad: "x".repeat(2000) }));
    for (const n of [1, 2]) await sealed.put(`u1/C-${n}/data.json`, doc(n));
    // Read once: decrypted, not kept; read again: decrypted and kept; after that served from memory.
    for (let i = 0; i < 4; i++) expect(await sealed.get("u1/C-1/data.json")).toEqual(doc(1));
    expect([unwrapped, decrypted]).toEqual([1, 2]);
    await raw.put("u1/C-1/data.json", (await raw.get("u1/C-2/data.json"))!);
    await expect(sealed.get("u1/C-1/data.json")).rejects.toThrow(/u1\/C-1\/data.json failed its integrity check/);
  });

  for (const [sealer, opener] of [["node", "web"], ["web", "node"]] as const) {
    it(`what the ${sealer} suite seals the ${opener} suite opens: objects, audit items, records and re-wrapped keys`, async () => {
      const suites = { node: nodeCipherSuite(), web: webCryptoSuite() };
      const raw = createBlobStore(createStorage());
      const rawKv = createKvStore(createStorage());
      const writer = new Keyring([old], suites[sealer]);
      await encryptedBlobStore(raw, writer).put("images/x", body);
      await encryptedBlobStore(raw, writer, { appendLog: true }).appendToJsonArray("audit-trails/u1-2026-11-22.json", { n: 1 });
      await encryptedKvStore(rawKv, writer).put("u1", '{"email":"a@lab.example"}');
      const reader = new Keyring([old], suites[opener]);
      expect(await encryptedBlobStore(raw, reader).get("images/x")).toEqual(body);
      expect(new TextDecoder().decode((await encryptedBlobStore(raw, reader).get("audit-trails/u1-2026-11-22.json"))!)).toBe('[\n{"n":1}\n]');
      expect(await encryptedKvStore(rawKv, reader).get("u1")).toBe('{"email":"a@lab.example"}');
      // Rotation by one suite, read by the other with the new key only.
      const rotated = (await rewrapValue(new Keyring([fresh, old], suites[sealer]), "images/x", (await raw.get("images/x"))!))!;
      await raw.put("images/x", rotated);
      expect(await encryptedBlobStore(raw, new Keyring([fresh], suites[opener])).get("images/x")).toEqual(body);
      // Tampered: refused as an integrity failure, not an exception of the cipher.
      rotated[rotated.length - 1]! ^= 1;
      await raw.put("images/x", rotated);
      await expect(encryptedBlobStore(raw, new Keyring([fresh], suites[opener])).get("images/x")).rejects.toBeInstanceOf(ServiceError);
      await expect(encryptedBlobStore(raw, new Keyring([dataKey("new")], suites[opener])).get("images/x")).rejects.toThrow(/is not the key it was encrypted with/);
    });
  }
});
