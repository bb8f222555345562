import { createS3BlobStore, s3Backend } from "../../src/adapters/s3/s3-store.ts";
import { useS3 } from "../helpers/s3-server.ts";
import { auditChainSuite } from "./chain-suite.ts";

const at = useS3();
let n = 0;

// Tampering writes the objects in the bucket with plain S3 requests, as a bucket admin would.
// s3rver honours no conditional writes, so appends are lossless within one process here, and
// (as the service's probe decides on such a server) a block's write is not remembered: a write
// under a version s3rver does not check would overwrite what was put there behind the store.
auditChainSuite("S3 (s3rver)", () => {
  const location = at(`chain${n++}/`);
  const bucket = s3Backend(location);
  return {
    store: createS3BlobStore(location, { arrayBlocks: { rememberWrites: false } }),
    raw: {
      read: async (key) => (await bucket.get(key))?.bytes ?? null,
      write: (key, bytes) => bucket.put(key, bytes),
      remove: async (key) => {
        await bucket.delete(key);
      },
    },
  };
}, { writers: 32, appends: 50 });
