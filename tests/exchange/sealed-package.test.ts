/**
 * Sealed packages (docs/exchange.md#sealed-packages): round trips for both key types, every
 * refusal a 400 ServiceError naming its reason, no unauthenticated plaintext handed out, and
 * packages made by a small independent implementation (Web Crypto and jose only, written from
 * the documentation) opened, and ours opened by it.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { base64url, calculateJwkThumbprint, CompactEncrypt, compactDecrypt, importJWK, type JWK } from "jose";
import {
  exchangeKeySet,
  type OpeningKey,
  openingKeyOf,
  openSealedPackage,
  recipientKeyOf,
  sealPackage,
} from "../../src/core/exchange/mod.ts";
import { ServiceError } from "../../src/core/errors.ts";
import { peakRss, resetPeakRss } from "./zip-bombs.ts";

const MIB = 1024 * 1024;

async function keyPair(kind: "EC" | "RSA"): Promise<{ publicJwk: JWK; privateJwk: JWK }> {
  const pair = kind === "EC"
    ? await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])
    : await crypto.subtle.generateKey({ name: "RSA-OAEP", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["encrypt", "decrypt"]);
  return {
    publicJwk: await crypto.subtle.exportKey("jwk", pair.publicKey) as JWK,
    privateJwk: await crypto.subtle.exportKey("jwk", pair.privateKey) as JWK,
  };
}

const EC = await keyPair("EC");
const RSA = await keyPair("RSA");
const OTHER_EC = await keyPair("EC");

const streamOf = (bytes: Uint8Array, piece = 700): ReadableStream<Uint8Array> => {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) controller.close();
      else controller.enqueue(bytes.slice(at, at += piece));
    },
  });
};
const bytesOf = async (stream: ReadableStream<Uint8Array>): Promise<Uint8Array> => new Uint8Array(await new Response(stream).arrayBuffer());

async function sealed(data: Uint8Array, publicJwk: JWK, chunkBytes = 1024): Promise<Uint8Array> {
  return bytesOf(await sealPackage(streamOf(data), await recipientKeyOf(publicJwk), { chunkBytes }));
}

/** What the opener handed out before it failed, and the failure. */
async function openAll(bytes: Uint8Array, privateJwk: JWK): Promise<{ received: Uint8Array[]; error: unknown }> {
  const received: Uint8Array[] = [];
  try {
    const opened = await openSealedPackage(streamOf(bytes), await openingKeyOf(privateJwk));
    for await (const chunk of opened.body as unknown as AsyncIterable<Uint8Array>) received.push(chunk);
    return { received, error: undefined };
  } catch (error) {
    return { received, error };
  }
}

function expectRefusal(error: unknown, message: RegExp): ServiceError {
  expect(error).toBeInstanceOf(ServiceError);
  const refusal = error as ServiceError;
  expect(refusal.code).toBe("VALIDATION_ERROR");
  expect(refusal.kind).toBe("invalid");
  expect(refusal.message).toMatch(message);
  return refusal;
}

/** Where the chunks start: after the 13-byte prefix and the header. */
const chunksAt = (bytes: Uint8Array): number => 13 + new DataView(bytes.buffer, bytes.byteOffset).getUint32(9);

describe("sealed packages", () => {
  for (const [name, keys] of [["EC P-256 (ECDH-ES+A256KW)", EC], ["RSA-2048 (RSA-OAEP-256)", RSA]] as const) {
    it(`${name}: every size round-trips, chunk boundaries included`, async () => {
      for (const size of [0, 1, 1023, 1024, 1025, 2048, 5000]) {
        const data = crypto.getRandomValues(new Uint8Array(size));
        const bytes = await sealed(data, keys.publicJwk);
        expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe("FASEALED");
        const { received, error } = await openAll(bytes, keys.privateJwk);
        expect(error).toBeUndefined();
        expect(new Uint8Array(await new Blob(received as BlobPart[]).arrayBuffer())).toEqual(data);
        // Full chunks, then the last (never an empty one after a full chunk).
        expect(bytes.length - chunksAt(bytes)).toBe(Math.max(1, Math.ceil(size / 1024)) * 16 + size);
      }
    });
  }

  it("the header names the recipient's RFC 7638 thumbprint and wraps the key for it", async () => {
    const bytes = await sealed(new Uint8Array(10), EC.publicJwk);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(13, chunksAt(bytes))));
    expect(header).toMatchObject({ recipient: await calculateJwkThumbprint(EC.publicJwk), chunkBytes: 1024, contentType: "application/zip" });
    expect(JSON.parse(new TextDecoder().decode(base64url.decode(header.key.split(".")[0])))).toMatchObject({ alg: "ECDH-ES+A256KW", enc: "A256GCM" });
  });

  it("one byte changed in a chunk: refused at that chunk, and nothing of it handed out", async () => {
    const data = crypto.getRandomValues(new Uint8Array(3000));
    const bytes = await sealed(data, EC.publicJwk);
    bytes[chunksAt(bytes) + 1040 + 100]! ^= 1;
    const { received, error } = await openAll(bytes, EC.privateJwk);
    expectRefusal(error, /^Sealed package refused: chunk 1 fails its authentication/);
    expect(received).toEqual([data.subarray(0, 1024)]);
  });

  it("the last chunk cut off, or cut short: refused, never a clean end", async () => {
    const data = crypto.getRandomValues(new Uint8Array(3000));
    const bytes = await sealed(data, EC.publicJwk);
    const lastAt = chunksAt(bytes) + 2 * 1040;
    const withoutLast = await openAll(bytes.subarray(0, lastAt), EC.privateJwk);
    expectRefusal(withoutLast.error, /^Sealed package refused: chunk 1 fails its authentication as the last chunk: the package was cut/);
    expect(withoutLast.received).toHaveLength(1);
    const short = await openAll(bytes.subarray(0, bytes.length - 1), EC.privateJwk);
    expectRefusal(short.error, /chunk 2 fails its authentication as the last chunk/);
    expect(short.received).toHaveLength(2);
    const tagCut = await openAll(bytes.subarray(0, lastAt + 5), EC.privateJwk);
    expectRefusal(tagCut.error, /it ends after chunk 1 without its last chunk \(cut\)/);
    const noChunks = await openAll(bytes.subarray(0, chunksAt(bytes)), EC.privateJwk);
    expectRefusal(noChunks.error, /it has no chunks after its header \(cut\)/);
  });

  it("two chunks swapped, or a chunk repeated: refused", async () => {
    const bytes = await sealed(crypto.getRandomValues(new Uint8Array(3000)), EC.publicJwk);
    const at = chunksAt(bytes);
    const swapped = bytes.slice();
    swapped.set(bytes.subarray(at + 1040, at + 2080), at);
    swapped.set(bytes.subarray(at, at + 1040), at + 1040);
    const { received, error } = await openAll(swapped, EC.privateJwk);
    expectRefusal(error, /chunk 0 fails its authentication: it was altered or moved/);
    expect(received).toEqual([]);
    const repeated = new Uint8Array([...bytes.subarray(0, at + 1040), ...bytes.subarray(at)]);
    expectRefusal((await openAll(repeated, EC.privateJwk)).error, /chunk 1 fails its authentication/);
  });

  it("a chunk of another package sealed with the same key is refused (every package has its own content key)", async () => {
    const data = crypto.getRandomValues(new Uint8Array(3000));
    const one = await sealed(data, EC.publicJwk);
    const two = await sealed(data, EC.publicJwk);
    const mixed = one.slice();
    mixed.set(two.subarray(chunksAt(two) + 1040, chunksAt(two) + 2080), chunksAt(one) + 1040);
    expectRefusal((await openAll(mixed, EC.privateJwk)).error, /chunk 1 fails its authentication/);
  });

  it("a header changed but still valid (the content type) is refused at chunk 0: the chunks bind the header's digest", async () => {
    const bytes = await sealed(new Uint8Array(100), EC.publicJwk);
    const text = new TextDecoder().decode(bytes);
    const changed = new TextEncoder().encode(text.slice(0, chunksAt(bytes)).replace("application/zip", "application/zap"));
    const altered = new Uint8Array([...changed, ...bytes.subarray(chunksAt(bytes))]);
    expect(altered.length).toBe(bytes.length);
    const { received, error } = await openAll(altered, EC.privateJwk);
    expectRefusal(error, /chunk 0 fails its authentication as the last chunk/);
    expect(received).toEqual([]);
  });

  it("the wrong recipient's key: refused naming the thumbprint the package was sealed for", async () => {
    const bytes = await sealed(new Uint8Array(100), EC.publicJwk);
    const sealedFor = await calculateJwkThumbprint(EC.publicJwk);
    for (const other of [OTHER_EC, RSA]) {
      const { error } = await openAll(bytes, other.privateJwk);
      const refusal = expectRefusal(error, new RegExp(`it was sealed for the key ${sealedFor}, not for this service's key ${await calculateJwkThumbprint(other.publicJwk)}`));
      expect(refusal.details).toEqual({ sealedFor, thumbprint: await calculateJwkThumbprint(other.publicJwk) });
    }
  });

  it("a header naming our key but wrapping the content key for another: refused, nothing handed out", async () => {
    const ours = await sealed(new Uint8Array(100), EC.publicJwk);
    const theirs = await sealed(new Uint8Array(100), OTHER_EC.publicJwk);
    const header = JSON.parse(new TextDecoder().decode(ours.subarray(13, chunksAt(ours))));
    header.key = JSON.parse(new TextDecoder().decode(theirs.subarray(13, chunksAt(theirs)))).key;
    const forged = frame(1, new TextEncoder().encode(JSON.stringify(header)), ours.subarray(chunksAt(ours)));
    const { received, error } = await openAll(forged, EC.privateJwk);
    expectRefusal(error, /its content key does not open with this service's key/);
    expect(received).toEqual([]);
  });

  it("garbage, another version, a broken or hostile header: each refused with its reason", async () => {
    const good = JSON.parse(new TextDecoder().decode((await sealed(new Uint8Array(1), EC.publicJwk)).subarray(13, -17)));
    const json = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));
    const cases: [Uint8Array, RegExp][] = [
      [new Uint8Array(0), /does not start with the sealed-package magic/],
      [crypto.getRandomValues(new Uint8Array(5000)), /does not start with the sealed-package magic/],
      [new TextEncoder().encode("PK\u0003\u0004 a zip"), /does not start with the sealed-package magic/],
      [new TextEncoder().encode("FASEALED"), /it ends within its prefix/],
      [frame(2, json(good)), /format version 2 is not supported \(this service reads version 1\)/],
      [frame(1, new TextEncoder().encode("{not json")), /its header is not UTF-8 JSON/],
      [frame(1, new Uint8Array([0x22, 0xff, 0xfe, 0x22])), /its header is not UTF-8 JSON/],
      [frame(1, json([1, 2])), /its header is not valid/],
      [frame(1, json({ ...good, chunkBytes: 2 ** 40 })), /its header is not valid: chunkBytes/],
      [frame(1, json({ ...good, chunkBytes: 1.5 })), /its header is not valid: chunkBytes/],
      [frame(1, json({ ...good, chunkBytes: 0 })), /its header is not valid: chunkBytes/],
      [frame(1, json({ ...good, recipient: "x".repeat(5000) })), /its header is not valid: recipient/],
      [frame(1, json({ ...good, key: "a.b.c.d.e" })), /its content key does not open/],
      [frame(1, json({ ...good, key: undefined })), /its header is not valid: key/],
      [frame(1, json(good)).subarray(0, 40), /it ends within its header/],
    ];
    for (const [bytes, reason] of cases) expectRefusal((await openAll(bytes, EC.privateJwk)).error, reason);
  });

  it("a declared header of 4 GiB is refused from the prefix, without reading on", async () => {
    const prefix = new Uint8Array([...new TextEncoder().encode("FASEALED"), 1, 0xff, 0xff, 0xff, 0xff]);
    let pulled = 0;
    // An endless source: an opener that believed the length would read for ever.
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(pulled++ === 0 ? prefix : new Uint8Array(64 * 1024));
      },
    }, { highWaterMark: 0 });
    const error = await openSealedPackage(endless, await openingKeyOf(EC.privateJwk)).then(() => undefined, (err: unknown) => err);
    expectRefusal(error, /it declares a header of 4294967295 bytes; 2 to 16384 are accepted/);
    expect(pulled).toBeLessThanOrEqual(2);
  });

  it("recipient keys that cannot seal are refused with a 400 naming why", async () => {
    const p384 = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-384" }, true, ["deriveBits"])).publicKey);
    const rsa1024 = await crypto.subtle.exportKey(
      "jwk",
      (await crypto.subtle.generateKey({ name: "RSA-OAEP", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["encrypt", "decrypt"])).publicKey,
    );
    const offCurve = { ...EC.publicJwk, y: EC.publicJwk.x };
    const cases: [unknown, RegExp][] = [
      [EC.privateJwk, /must be a public key; it has a private member "d"/],
      [p384, /an EC key must be on P-256/],
      [rsa1024, /an RSA key must have 2048 to 8192 bits \(it has 1024\)/],
      [{ kty: "oct", k: "AAAA" }, /must be an EC P-256 or RSA key/],
      [{ ...EC.publicJwk, use: "sig" }, /a sealing key is for "enc"/],
      [{ ...EC.publicJwk, x: "short" }, /needs "x" and "y" of 32 bytes/],
      [offCurve, /is not a point on P-256/],
      ["a string", /must be a JWK/],
      [null, /must be a JWK/],
    ];
    for (const [key, reason] of cases) {
      const error = await recipientKeyOf(key).then(() => undefined, (err: unknown) => err);
      expect(expectRefusal(error, reason).details).toEqual({ field: "recipient" });
    }
  });

  it("memory stays bounded: 256 MiB sealed and opened as one stream", async () => {
    const size = 256 * MIB;
    const piece = Uint8Array.from({ length: MIB }, (_, at) => (at * 31) & 0xff);
    let produced = 0;
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (produced >= size) controller.close();
        else {
          produced += piece.length;
          controller.enqueue(piece.slice());
        }
      },
    }, { highWaterMark: 0 });
    const measured = resetPeakRss();
    const before = peakRss();
    const opened = await openSealedPackage(await sealPackage(source, await recipientKeyOf(EC.publicJwk)), await openingKeyOf(EC.privateJwk));
    let total = 0;
    for await (const chunk of opened.body as unknown as AsyncIterable<Uint8Array>) total += chunk.length;
    expect(total).toBe(size);
    const after = peakRss();
    // What stays is the collector's slack (about 50 MB on Node, 80 on Deno, the same for 512 MiB): one
    // buffered copy would be the whole size.
    if (measured && before !== null && after !== null) expect(after - before).toBeLessThan(size / 2);
  }, 60_000);

  it("the exchange JWKS holds the public halves only, each with kid, alg and use", async () => {
    const signing = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"])).privateKey) as JWK;
    for (const opening of [EC, RSA]) {
      const set = await exchangeKeySet({ signingKey: { ...signing, kid: "lab-1" }, openingKey: await openingKeyOf(opening.privateJwk) });
      expect(set.keys).toEqual([
        { kty: "EC", crv: "P-256", x: signing.x, y: signing.y, kid: "lab-1", alg: "ES256", use: "sig" },
        { ...opening.publicJwk.kty === "EC"
          ? { kty: "EC", crv: "P-256", x: opening.publicJwk.x, y: opening.publicJwk.y }
          : { kty: "RSA", n: opening.publicJwk.n, e: opening.publicJwk.e },
          kid: await calculateJwkThumbprint(opening.publicJwk), alg: opening.publicJwk.kty === "EC" ? "ECDH-ES+A256KW" : "RSA-OAEP-256", use: "enc" },
      ]);
      for (const key of set.keys) for (const member of ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]) expect(key).not.toHaveProperty(member);
    }
    // A shared-secret signing key has no public half: it is never listed.
    expect(await exchangeKeySet({ signingKey: { kty: "oct", k: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA" } })).toEqual({ keys: [] });
    expect(await exchangeKeySet({})).toEqual({ keys: [] });
  });
});

/** Magic, a version byte, the header length, the header and what follows. */
function frame(version: number, header: Uint8Array, rest: Uint8Array = new Uint8Array(0)): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(13 + header.length + rest.length);
  out.set(new TextEncoder().encode("FASEALED"), 0);
  out[8] = version;
  new DataView(out.buffer).setUint32(9, header.length);
  out.set(header, 13);
  out.set(rest, 13 + header.length);
  return out;
}

/**
 * An independent implementation of the format, written from docs/exchange.md with Web Crypto
 * and jose only: whole buffers, no streaming.
 */
const independent = {
  nonce(index: number, last: boolean): Uint8Array<ArrayBuffer> {
    const nonce = new Uint8Array(12);
    new DataView(nonce.buffer).setBigUint64(3, BigInt(index));
    nonce[11] = last ? 1 : 0;
    return nonce;
  },
  aad(digest: Uint8Array, index: number, last: boolean): Uint8Array<ArrayBuffer> {
    const aad = new Uint8Array(41);
    aad.set(digest);
    new DataView(aad.buffer).setBigUint64(32, BigInt(index));
    aad[40] = last ? 1 : 0;
    return aad;
  },
  async seal(data: Uint8Array, publicJwk: JWK, chunkBytes: number): Promise<Uint8Array> {
    const alg = publicJwk.kty === "EC" ? "ECDH-ES+A256KW" : "RSA-OAEP-256";
    const recipient = await calculateJwkThumbprint(publicJwk);
    const contentKey = crypto.getRandomValues(new Uint8Array(32));
    const key = await new CompactEncrypt(contentKey).setProtectedHeader({ alg, enc: "A256GCM" }).encrypt(await importJWK(publicJwk, alg));
    const head = frame(1, new TextEncoder().encode(JSON.stringify({ contentType: "application/zip", chunkBytes, key, recipient })));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", head));
    const aes = await crypto.subtle.importKey("raw", contentKey, "AES-GCM", false, ["encrypt"]);
    const parts: Uint8Array[] = [head];
    const count = Math.max(1, Math.ceil(data.length / chunkBytes));
    for (let index = 0; index < count; index++) {
      const last = index === count - 1;
      const plain = data.slice(index * chunkBytes, (index + 1) * chunkBytes);
      parts.push(new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv: this.nonce(index, last), additionalData: this.aad(digest, index, last) }, aes, plain)));
    }
    return new Uint8Array(await new Blob(parts as BlobPart[]).arrayBuffer());
  },
  async open(bytes: Uint8Array, privateJwk: JWK): Promise<Uint8Array> {
    const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(9);
    const head = new Uint8Array(bytes.slice(0, 13 + length));
    const header = JSON.parse(new TextDecoder().decode(head.subarray(13)));
    const alg = privateJwk.kty === "EC" ? "ECDH-ES+A256KW" : "RSA-OAEP-256";
    const { plaintext: contentKey } = await compactDecrypt(header.key, await importJWK(privateJwk, alg));
    const aes = await crypto.subtle.importKey("raw", new Uint8Array(contentKey), "AES-GCM", false, ["decrypt"]);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", head));
    const body = new Uint8Array(bytes.slice(13 + length));
    const sealedChunk = header.chunkBytes + 16;
    const out: Uint8Array[] = [];
    for (let index = 0, at = 0; at < body.length; index++, at += sealedChunk) {
      const last = at + sealedChunk >= body.length;
      out.push(new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv: this.nonce(index, last), additionalData: this.aad(digest, index, last) }, aes, body.slice(at, at + sealedChunk))));
    }
    return new Uint8Array(await new Blob(out as BlobPart[]).arrayBuffer());
  },
};

describe("sealed packages against an independent implementation of docs/exchange.md", () => {
  for (const [name, keys] of [["EC", EC], ["RSA", RSA]] as const) {
    it(`${name}: ours opens theirs, and theirs opens ours`, async () => {
      for (const size of [0, 100, 64, 65, 640]) {
        const data = crypto.getRandomValues(new Uint8Array(size));
        const theirs = await independent.seal(data, keys.publicJwk, 64);
        const { received, error } = await openAll(theirs, keys.privateJwk);
        expect(error).toBeUndefined();
        expect(new Uint8Array(await new Blob(received as BlobPart[]).arrayBuffer())).toEqual(data);
        expect(await independent.open(await sealed(data, keys.publicJwk, 64), keys.privateJwk)).toEqual(data);
      }
    });
  }
});

describe("the worked example of docs/exchange.md#worked-example", () => {
  const doc = readFileSync(new URL("../../docs/exchange.md", import.meta.url), "utf8");
  const block = (name: string): string => {
    const match = new RegExp(`<!-- sealed-example:${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
    if (match === null) throw new Error(`docs/exchange.md has no sealed-example:${name} block`);
    return match[1]!;
  };
  const hex = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  const privateJwk = JSON.parse(block("private-jwk")) as JWK;
  const pkg = base64url.decode(block("package").replace(/\s+/g, ""));
  const plaintext = new TextEncoder().encode(`${block("plaintext")}`);

  it("opens with this code to the plaintext shown", async () => {
    expect(pkg.length).toBe(700);
    expect(plaintext.length).toBe(100);
    const { received, error } = await openAll(pkg, privateJwk);
    expect(error).toBeUndefined();
    expect(new Uint8Array(await new Blob(received as BlobPart[]).arrayBuffer())).toEqual(plaintext);
  });

  it("decodes step by step as the text says, with Web Crypto and jose only", async () => {
    expect(hex(pkg.subarray(0, 13))).toMatch(/^46415345414c454401[0-9a-f]{8}$/);
    const length = new DataView(pkg.buffer, pkg.byteOffset).getUint32(9);
    expect(doc).toContain(`\`${hex(pkg.subarray(0, 13))}\`: the magic, version 1, a header of ${length} bytes`);
    const head = new Uint8Array(pkg.slice(0, 13 + length));
    const header = JSON.parse(new TextDecoder().decode(head.subarray(13)));
    expect(header).toEqual(JSON.parse(block("header")));
    expect(header.recipient).toBe(await calculateJwkThumbprint(privateJwk));
    const { plaintext: contentKey, protectedHeader } = await compactDecrypt(header.key, await importJWK(privateJwk, "ECDH-ES+A256KW"));
    expect(protectedHeader).toMatchObject({ alg: "ECDH-ES+A256KW", enc: "A256GCM", kid: header.recipient });
    expect(hex(contentKey)).toBe(block("content-key"));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", head));
    expect(hex(digest)).toBe(block("header-digest"));
    const aes = await crypto.subtle.importKey("raw", new Uint8Array(contentKey), "AES-GCM", false, ["decrypt"]);
    const chunks = [
      { from: 568, to: 648, nonce: "000000000000000000000000", tail: "000000000000000000" },
      { from: 648, to: 700, nonce: "000000000000000000000101", tail: "000000000000000101" },
    ];
    const out: Uint8Array[] = [];
    for (const [index, chunk] of chunks.entries()) {
      expect(doc).toContain(`nonce \`${chunk.nonce}\``);
      expect(doc).toContain(`the digest then \`${chunk.tail}\``);
      const last = index === chunks.length - 1;
      expect(hex(independent.nonce(index, last))).toBe(chunk.nonce);
      expect(hex(independent.aad(digest, index, last))).toBe(hex(digest) + chunk.tail);
      const iv = Uint8Array.from(chunk.nonce.match(/../g)!, (byte) => parseInt(byte, 16));
      const additionalData = Uint8Array.from((hex(digest) + chunk.tail).match(/../g)!, (byte) => parseInt(byte, 16));
      out.push(new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData }, aes, pkg.slice(chunk.from, chunk.to))));
    }
    expect(new Uint8Array(await new Blob(out as BlobPart[]).arrayBuffer())).toEqual(plaintext);
  });
});

export type { OpeningKey };
