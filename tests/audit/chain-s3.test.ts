import { afterAll, beforeAll } from "vitest";
import { createS3BlobStore, s3Backend, type S3Location } from "../../src/adapters/s3/s3-store.ts";
import { startS3 } from "../helpers/s3-server.ts";
import { auditChainSuite } from "./chain-suite.ts";

let s3: Awaited<ReturnType<typeof startS3>>;
let n = 0;
beforeAll(async () => {
  s3 = await startS3();
}, 20_000);
afterAll(async () => {
  await s3?.stop();
});

// Tampering writes the objects in the bucket with plain S3 requests, as a bucket admin would.
// s3rver honours no conditional writes, so appends are lossless within one process here.
auditChainSuite("S3 (s3rver)", () => {
  const location: S3Location = {
    endpoint: s3.endpoint,
    bucket: s3.bucket,
    region: "us-east-1",
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    prefix: `chain${n++}/`,
  };
  const bucket = s3Backend(location);
  return {
    store: createS3BlobStore(location, { arrayBlocks: {} }),
    raw: {
      read: async (key) => (await bucket.get(key))?.bytes ?? null,
      write: (key, bytes) => bucket.put(key, bytes),
      remove: async (key) => {
        await bucket.delete(key);
      },
    },
  };
}, { writers: 32, appends: 50 });
