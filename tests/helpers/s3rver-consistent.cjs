// s3rver with read-after-write consistency, as S3 and R2 have it. s3rver answers a PUT before
// its write stream has flushed the object (lib/stores/filesystem.js putObject resolves on
// `end()`), so a GET right after can read the previous object; under load the service's
// in-process appends then saw stale days. Here an object is written to a temporary file and
// renamed into place before the PUT is answered. Everything else is s3rver as published.
"use strict";
const path = require("node:path");
const crypto = require("node:crypto");
const fsp = require("node:fs/promises");
const { createWriteStream } = require("node:fs");
const s3rverDir = path.dirname(require.resolve("s3rver/package.json"));
const FilesystemStore = require(path.join(s3rverDir, "lib/stores/filesystem.js"));

FilesystemStore.prototype.putObject = async function putObject(object) {
  const objectPath = this.getResourcePath(object.bucket, object.key, "object");
  await fsp.mkdir(path.dirname(objectPath), { recursive: true });
  const temporary = `${objectPath}.${process.pid}-${crypto.randomUUID()}.partial`;
  const md5 = crypto.createHash("md5");
  let size = 0;
  await new Promise((resolve, reject) => {
    const out = createWriteStream(temporary);
    out.on("error", reject).on("close", resolve);
    if (Buffer.isBuffer(object.content)) {
      md5.update(object.content);
      size = object.content.length;
      out.end(object.content);
    } else {
      object.content.on("data", (chunk) => {
        md5.update(chunk);
        size += chunk.length;
      });
      object.content.on("error", reject);
      object.content.pipe(out);
    }
  });
  await fsp.rename(temporary, objectPath);
  const digest = md5.digest("hex");
  await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
};

require(path.join(s3rverDir, "bin/s3rver.js"));
