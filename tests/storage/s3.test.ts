import { expect, it } from "vitest";
import { createS3BlobStore, createS3KvStore, probeConditionalWrites, S3_UNAVAILABLE, type S3Location } from "../../src/adapters/s3/s3-store.ts";
import { useS3 } from "../helpers/s3-server.ts";
import { blobStoreSuite, kvStoreSuite } from "./suite.ts";
import { historySuite } from "./history-suite.ts";

const at = useS3();
let n = 0;
const location = (): S3Location => at(`t${n++}/`);

blobStoreSuite("S3 (s3rver)", () => createS3BlobStore(location()));
// s3rver ignores If-Match (below), so no pair of processes here: the compare-and-set's answers only.
kvStoreSuite("S3 (s3rver)", () => createS3KvStore(location()), { compareAndSet: true });

it("[S3 (s3rver)] lists every page (max-keys 2, 7 keys)", async () => {
  const store = createS3BlobStore({ ...location(), listPageSize: 2 });
  const keys = Array.from({ length: 7 }, (_, i) => `u1/C-${i}/data.json`);
  for (const key of keys) await store.put(key, new Uint8Array([123, 125]));
  await store.put("u2/C-1/data.json", new Uint8Array([123, 125]));
  expect(await store.list("u1/")).toEqual(keys);
}, 60_000);

it("[S3 (s3rver)] the probe reports that s3rver ignores conditional writes", async () => {
  // s3rver predates S3's conditional writes: appends on it are lossless within one process
  // only, and `serve` says so at start. A service that honours If-None-Match reports true.
  expect(await probeConditionalWrites(location())).toBe(false);
});

// The audit store's form: JSON arrays in blocks (of 3 items here, so every append case crosses blocks).
blobStoreSuite("S3 (s3rver), arrays in blocks of 3", () => createS3BlobStore(location(), { arrayBlocks: { items: 3 } }), { history: false });

it("[S3] a service that does not answer, or cannot be reached, is a 500 naming the store within the wait, not a request held for good", async () => {
  const { createServer } = await import("node:http");
  const { closedPort } = await import("../helpers/http-server.ts");
  const silent = createServer(() => undefined); // takes the request, never answers
  await new Promise<void>((ready) => silent.listen(0, "127.0.0.1", ready));
  const errors: unknown[] = [];
  const logged = console.error;
  console.error = (...args: unknown[]) => errors.push(args.join(" "));
  try {
    const base = { bucket: "b", region: "us-east-1", accessKeyId: "k", secretAccessKey: "s", answerWaitMs: 200 };
    const started = Date.now();
    const stalled = await createS3BlobStore({ ...base, endpoint: `http://127.0.0.1:${(silent.address() as { port: number }).port}` }).get("u1/C-1/data.json").catch((err: unknown) => err);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(stalled).toMatchObject({ code: "SERVER_ERROR", message: S3_UNAVAILABLE });
    const refused = await createS3KvStore({ ...base, endpoint: `http://127.0.0.1:${await closedPort()}` }).get("u1").catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: "SERVER_ERROR", message: S3_UNAVAILABLE });
    expect(errors.join("\n")).toMatch(/s3: GET had no answer in time/);
  } finally {
    console.error = logged;
    silent.closeAllConnections();
    await new Promise((closed) => silent.close(closed));
  }
});
// The data store's form: record histories' arrays in blocks of 3 (every history case crosses blocks), documents one object each.
historySuite("S3 (s3rver), history arrays in blocks of 3", () => createS3BlobStore(location(), { historyBlocks: { items: 3, rememberWrites: false } }));
