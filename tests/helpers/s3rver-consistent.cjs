// s3rver with read-after-write consistency, as S3 and R2 have it. s3rver answers a PUT before
// its write stream has flushed the object (lib/stores/filesystem.js putObject resolves on
// `end()`), so a GET right after can read the previous object; under load the service's
// in-process appends then saw stale days. Here an object is written to a temporary file and
// renamed into place before the PUT is answered, and long segments fit (below). Everything
// else is s3rver as published.
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

// S3 holds keys of 1024 bytes whatever their segments; s3rver keeps each segment as a file or
// folder name (plus `._S3rver_metadata.json`), so a segment over ~230 bytes would not fit a
// file name. Segments over 100 bytes are kept as folders of at most 100 bytes, each ended by
// U+0001 (never in a key), and joined again when listing; short keys are stored as before.
const PIECE_BYTES = 100;
const PIECE_END = "\u0001";
const splitSegment = (segment) => {
  if (Buffer.byteLength(segment) <= PIECE_BYTES) return segment;
  const pieces = [""];
  for (const char of segment) {
    if (Buffer.byteLength(pieces[pieces.length - 1] + char) > PIECE_BYTES) pieces.push("");
    pieces[pieces.length - 1] += char;
  }
  return pieces.join(`${PIECE_END}/`);
};
const { encodeKeyPath, decodeKeyPath } = FilesystemStore;
FilesystemStore.encodeKeyPath = (key) => encodeKeyPath(key.split("/").map(splitSegment).join("/"));
FilesystemStore.decodeKeyPath = (keyPath) => decodeKeyPath(keyPath).split(`${PIECE_END}/`).join("");

require(path.join(s3rverDir, "bin/s3rver.js"));
