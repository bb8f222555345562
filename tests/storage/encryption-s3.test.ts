import { describe } from "vitest";
import { createS3BlobStore, createS3KvStore } from "../../src/adapters/s3/s3-store.ts";
import { systemClock } from "../../src/core/ports.ts";
import { useS3 } from "../helpers/s3-server.ts";
import { encryptionSuite } from "./encryption-suite.ts";

const at = useS3();
let n = 0;

describe("encryption at rest on S3 (s3rver)", () => {
  const prefixes = new WeakMap<object, string>();
  encryptionSuite("S3 (s3rver)", {
    ports: async () => {
      const prefix = `enc${n++}/`;
      const ports = {
        data: createS3BlobStore(at(`${prefix}data/`)),
        // Audit days in blocks of 2 entries, so sealed appends, rotation and sealing cross blocks.
        audit: createS3BlobStore(at(`${prefix}audit/`), { arrayBlocks: { items: 2 } }),
        images: createS3BlobStore(at(`${prefix}images/`)),
        users: createS3KvStore(at(`${prefix}users/`)),
        clock: systemClock,
      };
      prefixes.set(ports.data, prefix);
      return ports;
    },
    // Every object under the prefix, fetched from the bucket as it is stored.
    dump: async (ports) => {
      const bucket = createS3BlobStore(at(prefixes.get(ports.data)!));
      return Promise.all((await bucket.list("")).map(async (key) => (await bucket.get(key))!));
    },
  }, 120_000);
});
