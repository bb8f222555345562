import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import { createBlobStore } from "../../../src/core/storage/unstorage-stores.ts";
import { encryptedBlobStore, Keyring } from "../../../src/core/encryption/mod.ts";
import { CHUNK_BYTES } from "../../../src/core/encryption/envelope.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { decodeBase64Url, encodeBase64Url } from "../../../src/core/encoding/base64url.ts";
import { dataKey, keySetText } from "../../helpers/encryption.ts";
import { KEYS, testService } from "../../helpers/service.ts";
import { filteredPng } from "../pdf/images.ts";
import { uploadForm } from "../../helpers/images.ts";
import { encryptPorts } from "../../../src/core/service/encrypted-ports.ts";

const random = (length: number) => {
  const out = new Uint8Array(length);
  for (let at = 0; at < length; at += 65536) crypto.getRandomValues(out.subarray(at, Math.min(length, at + 65536)));
  return out;
};

function stores() {
  const raw = createBlobStore(createStorage());
  return { raw, sealed: encryptedBlobStore(raw, new Keyring([dataKey("k1")])) };
}

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).kind).toBe("integrity-failed");
    return err as ServiceError;
  }
  throw new Error("not refused");
}

describe("envelopes", () => {
  it("a large object is sealed in 64 KiB chunks and streamed back one chunk at a time", async () => {
    const { raw, sealed } = stores();
    const body = random(3 * CHUNK_BYTES + 123);
    await sealed.put("images/big", body);
    expect((await raw.get("images/big"))!.length).toBeLessThan(body.length + 200);
    expect(await sealed.get("images/big")).toEqual(body);
    const streamed = (await sealed.getStream("images/big"))!;
    expect(streamed.size).toBe(body.length);
    const pieces: Uint8Array[] = [];
    const reader = streamed.body.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) pieces.push(read.value);
    expect(pieces.map((piece) => piece.length)).toEqual([CHUNK_BYTES, CHUNK_BYTES, CHUNK_BYTES, 123]);
    const joined = new Uint8Array(body.length);
    pieces.forEach((piece, index) => joined.set(piece, index * CHUNK_BYTES));
    expect(joined).toEqual(body);
  });

  it("a plaintext stream in pieces of any size is sealed as put seals it, and one of another length than announced fails", async () => {
    const { raw, sealed } = stores();
    const image = random(3 * CHUNK_BYTES + 123);
    const sizes = [1, CHUNK_BYTES, 5, CHUNK_BYTES - 6, 2 * CHUNK_BYTES];
    const pieces = (value: Uint8Array) => {
      const out: Uint8Array[] = [];
      let at = 0;
      for (const size of sizes) {
        if (at < value.length) out.push(value.slice(at, at + size));
        at += size;
      }
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = out.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(next);
        },
      });
    };
    await sealed.putStream("images/a", image.length, pieces(image));
    expect(await sealed.get("images/a")).toEqual(image);
    // The envelope a chunk-by-chunk put makes is the one a whole seal makes: same length, opened alike.
    await sealed.put("images/b", image);
    expect((await raw.get("images/a"))!.length).toBe((await raw.get("images/b"))!.length);
    await expect(sealed.putStream("images/c", image.length + 1, pieces(image))).rejects.toThrow(/ended after/);
    await expect(sealed.putStream("images/c", image.length - 1, pieces(image))).rejects.toThrow(/more than/);
    expect(await raw.has("images/c")).toBe(false);
  });

  it("refuses an altered byte, a cut or extended object, reordered chunks and hostile headers, never answering garbage", async () => {
    const { raw, sealed } = stores();
    const body = random(2 * CHUNK_BYTES + 10);
    await sealed.put("k", body);
    const stored = (await raw.get("k"))!;
    const altered = stored.slice();
    altered[altered.length - 40]! ^= 1;
    await raw.put("k", altered);
    expect((await refusal(sealed.get("k"))).message).toMatch(/^Stored object k failed its integrity check: it was not written under this key/);
    await raw.put("k", stored.slice(0, stored.length - 26));
    expect((await refusal(sealed.get("k"))).message).toMatch(/its length does not match its encryption header/);
    await raw.put("k", new Uint8Array([...stored, 0]));
    await refusal(sealed.get("k"));
    // Chunks 0 and 1 swapped (each 64 KiB + a 16-byte tag), header kept.
    const header = stored.length - (body.length + 3 * 16);
    const size = CHUNK_BYTES + 16;
    const reordered = stored.slice();
    reordered.set(stored.subarray(header + size, header + 2 * size), header);
    reordered.set(stored.subarray(header, header + size), header + size);
    await raw.put("k", reordered);
    await refusal(sealed.get("k"));
    // Only the magic, then nothing; a chunk size of 0; an absurd plaintext length.
    await raw.put("k", stored.slice(0, 8));
    expect((await refusal(sealed.get("k"))).message).toMatch(/cut short/);
    const zeroChunk = stored.slice();
    new DataView(zeroChunk.buffer).setUint32(header - 12, 0);
    await raw.put("k", zeroChunk);
    expect((await refusal(sealed.get("k"))).message).toMatch(/impossible chunk size/);
    const huge = stored.slice();
    new DataView(huge.buffer).setUint32(header - 8, 0xffffffff);
    await raw.put("k", huge);
    await refusal(sealed.get("k"));
  });

  it("an object moved to another key is refused; plaintext stored before stays readable", async () => {
    const { raw, sealed } = stores();
    await sealed.put("u1/C-1/data.json", new TextEncoder().encode('{"a":1}'));
    await raw.put("u1/C-2/data.json", (await raw.get("u1/C-1/data.json"))!);
    expect((await refusal(sealed.get("u1/C-2/data.json"))).details).toEqual({ key: "u1/C-2/data.json" });
    await raw.put("u1/C-3/data.json", new TextEncoder().encode('{"legacy":true}'));
    expect(new TextDecoder().decode((await sealed.get("u1/C-3/data.json"))!)).toBe('{"legacy":true}');
  });

  it("audit appends seal one item each: the day's earlier bytes stay as they were", async () => {
    const { raw, sealed } = stores();
    await sealed.appendToJsonArray("audit-trails/u1-2026-11-22.json", { n: 1 });
    const first = (await raw.get("audit-trails/u1-2026-11-22.json"))!;
    expect(await sealed.appendToJsonArray("audit-trails/u1-2026-11-22.json", { n: 2 })).toBe(2);
    const second = (await raw.get("audit-trails/u1-2026-11-22.json"))!;
    // The first item's line is untouched: only ",\n{item}\n]" replaced the closing "\n]".
    expect(second.subarray(0, first.length - 2)).toEqual(first.subarray(0, first.length - 2));
    expect(JSON.parse(new TextDecoder().decode(second))).toHaveLength(2);
    expect(JSON.parse(new TextDecoder().decode((await sealed.get("audit-trails/u1-2026-11-22.json"))!))).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it("base64url round-trips every length and refuses what is not base64url", () => {
    for (let length = 0; length < 70; length++) {
      const bytes = random(length);
      expect(decodeBase64Url(encodeBase64Url(bytes))).toEqual(bytes);
    }
    expect(decodeBase64Url("ab+c")).toBeNull();
    expect(decodeBase64Url("a")).toBeNull();
    expect(decodeBase64Url("ab==")).toBeNull();
  });
});

describe("encryption at rest through the workers", () => {
  it("a 256 KB image (five chunks) is uploaded and delivered through an encrypted store, delivered as a stream", async () => {
    const keyring = new Keyring([dataKey("k1")]);
    const { ports } = testService();
    const encrypted = encryptPorts(ports, keyring);
    const { app } = testService({ PUBLIC_URL: "https://lab.example" }, encrypted);
    const png = filteredPng(256, 256, 4, random(256 * 256 * 4));
    expect(png.length).toBeGreaterThan(4 * 65536);
    const bearer = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };
    const uploaded = await app.request("/image/", { method: "POST", body: uploadForm(png, "big.png"), headers: bearer });
    expect(uploaded.status).toBe(200);
    const { result } = (await uploaded.json()) as { result: { id: string; variants: string[] } };
    const stored = (await ports.images.get(`images/${result.id}`))!;
    expect(stored.subarray(0, 6)).toEqual(new Uint8Array([0, 0x46, 0x41, 0x45, 0x4e, 0x43]));
    const signed = new URL(await (await app.request(`/image/${encodeURIComponent(result.variants[0]!)}`, { headers: bearer })).text());
    const delivered = await app.request(`${signed.pathname}${signed.search}`);
    expect(delivered.status).toBe(200);
    expect(delivered.headers.get("Content-Length")).toBe(String(png.length));
    expect(new Uint8Array(await delivered.arrayBuffer())).toEqual(png);
  });

  it("the keys worker never returns DATA_ENCRYPTION_KEYS, even when KEYS_EXPOSED lists it", async () => {
    const keys = keySetText(dataKey("k1"));
    const { app, config } = testService({ DATA_ENCRYPTION_KEYS: keys, KEYS_EXPOSED: "DATA_ENCRYPTION_KEYS,ACCOUNT_HASH" });
    expect(config.keysExposed).toEqual(["ACCOUNT_HASH"]);
    const response = await app.request("/keys/DATA_ENCRYPTION_KEYS", { headers: { "X-Custom-Auth-Key": KEYS.KEYS_AUTH } });
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain(JSON.parse(keys).keys[0].k);
  });
});
