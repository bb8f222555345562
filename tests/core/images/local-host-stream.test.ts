/**
 * The local image host's streamed upload (a case import streams each image from its package):
 * the image is stored and served as an upload of its bytes is, on a store that writes streams
 * (files) and one that joins them (memory); a stream that breaks off leaves no image.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { createLocalImageHost } from "../../../src/core/images/local-host.ts";
import { createBlobStore } from "../../../src/core/storage/unstorage-stores.ts";
import { createFileBlobStore } from "../../../src/adapters/server/files/file-ports.ts";
import { copiedStream } from "../../../src/core/storage/byte-stream.ts";
import { storageKeys } from "../../../src/core/storage/keys.ts";
import type { BlobStore } from "../../../src/core/ports.ts";
import { fixture } from "../../helpers/images.ts";
import { fixedClock } from "../../helpers/service.ts";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const stores: [string, () => Promise<BlobStore>][] = [
  ["files", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fa-host-stream-"));
    dirs.push(dir);
    return createFileBlobStore(dir);
  }],
  ["memory", () => Promise.resolve(createBlobStore(createStorage({ driver: memoryDriver() })))],
];

describe("local image host: uploadStream", () => {
  for (const [name, make] of stores) {
    it(`[${name}] stores a streamed image with its metadata and serves its bytes; a stream that breaks off leaves no image`, async () => {
      const store = await make();
      const host = createLocalImageHost({ store, signingKey: "k".repeat(32), deliveryBase: "http://localhost/image/delivery", clock: fixedClock("2026-11-22T12:00:00.000Z"), urlLifetimeSeconds: 60 });
      const png = fixture("sample.png");
      const hosted = await host.uploadStream({ size: png.length, body: copiedStream(png, 100), filename: "a.png", contentType: "image/png", owner: "u1", width: 1, height: 1 });
      expect(await host.ownerOf!(hosted.id)).toBe("u1");
      const signed = new URL(await host.signedUrl(hosted.variants[0]!));
      const served = await host.serve(hosted.id, "public", signed.searchParams, undefined);
      expect(served.headers.get("Content-Length")).toBe(String(png.length));
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(png);
      const meta = JSON.parse(new TextDecoder().decode((await store.get(`${storageKeys.image(hosted.id)}.json`))!));
      expect(meta).toMatchObject({ size: png.length, filename: "a.png", contentType: "image/png", width: 1, height: 1 });

      const before = await store.list("images/");
      const broken = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(png.slice(0, 10));
          controller.error(new Error("the package is damaged"));
        },
      });
      await expect(host.uploadStream({ size: png.length, body: broken, filename: "b.png", contentType: "image/png" })).rejects.toThrow();
      expect(await store.list("images/")).toEqual(before);
    });
  }
});
