// Audit days in blocks on S3 (s3rver): the array-block cases, with raw access as a bucket admin has it.
import { s3Backend } from "../../src/adapters/s3/s3-store.ts";
import { useS3 } from "../helpers/s3-server.ts";
import { arrayBlockSuite } from "./array-blocks-suite.ts";

const at = useS3();
let n = 0;

arrayBlockSuite("S3 (s3rver)", () => {
  const location = at(`blocks${n++}/`);
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
  // Five blocks of 128, as on R2: each append is a request to s3rver (about 14 ms under load),
  // and 1,500 made this file the slowest of `npm test` on Node and Deno.
}, { conditionalWrites: false, appends: 640 });
