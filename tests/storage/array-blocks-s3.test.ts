// Audit days in blocks on S3 (s3rver): the array-block cases, with raw access as a bucket admin has it.
import { afterAll, beforeAll } from "vitest";
import { s3Backend, type S3Location } from "../../src/adapters/s3/s3-store.ts";
import { startS3 } from "../helpers/s3-server.ts";
import { arrayBlockSuite } from "./array-blocks-suite.ts";

let s3: Awaited<ReturnType<typeof startS3>>;
let n = 0;
beforeAll(async () => {
  s3 = await startS3();
}, 20_000);
afterAll(async () => {
  await s3?.stop();
});

arrayBlockSuite("S3 (s3rver)", () => {
  const location: S3Location = {
    endpoint: s3.endpoint,
    bucket: s3.bucket,
    region: "us-east-1",
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    prefix: `blocks${n++}/`,
  };
  const backend = s3Backend(location);
  return {
    backend,
    read: async (key) => (await backend.get(key))?.bytes ?? null,
    write: (key, bytes) => backend.put(key, bytes),
    remove: async (key) => {
      await backend.delete(key);
    },
    keys: async (prefix) => (await backend.list(prefix)).sort(),
  };
  // s3rver ignores If-Match and If-None-Match: two stores' appends over it may overwrite each
  // other (only one process's are lossless), so the cases with two stores run on R2 (workerd).
}, { conditionalWrites: false });
