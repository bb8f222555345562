/**
 * @module
 * A `BlobStore` on any S3-compatible service (AWS S3, R2's S3 API, MinIO...), over `fetch`
 * signed with aws4fetch. unstorage's S3 driver lists a bucket without prefix or paging
 * (1,000 keys at most) and has no conditional writes, so this speaks the S3 API directly:
 * ListObjectsV2 with continuation, and writes conditioned on `If-Match`/`If-None-Match`.
 * Whether the server honours those conditions is probed once (`probeConditionalWrites`):
 * only then are appends lossless across processes; otherwise within one process.
 */
import { AwsClient } from "aws4fetch";
import { ServiceError } from "../../core/errors.ts";
import type { BlobStore, KvStore } from "../../core/ports.ts";
import { exactLength } from "../../core/storage/byte-stream.ts";
import { createVersionedBlobStore, createVersionedKvStore, type VersionedBackend } from "../../core/storage/versioned-store.ts";
import { type ArrayBlockOptions, createArrayBlockStore } from "../../core/storage/array-blocks.ts";
import { createSomeArraysInBlocksStore } from "../../core/storage/some-arrays-in-blocks.ts";
import { isHistoryArrayKey } from "../../core/history/history-keys.ts";

/** Where the objects live. */
export interface S3Location {
  /** e.g. `https://s3.eu-central-1.amazonaws.com` or `http://127.0.0.1:9000` */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Key prefix of this store inside the bucket, e.g. `data/`. */
  prefix?: string;
  /** Keys per list request (S3's `max-keys`, default 1000). */
  listPageSize?: number;
  /** Wait for an answer's headers, in ms (default 10 s, plus a second per MiB sent). */
  answerWaitMs?: number;
}

const encodeKey = (key: string): string => key.split("/").map(encodeURIComponent).join("/");
const XML_NAMED: Readonly<Record<string, string>> = { lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" };
// Servers escape a key's ' and " as they like: &apos;, or numeric (&#39; MinIO, &#x27; s3rver).
const xmlText = (text: string): string =>
  text.replace(/&(?:#x([0-9a-fA-F]{1,6})|#([0-9]{1,7})|(lt|gt|quot|apos|amp));/g, (whole, hex?: string, decimal?: string, name?: string) => {
    if (name !== undefined) return XML_NAMED[name]!;
    const code = hex !== undefined ? parseInt(hex, 16) : Number(decimal);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });

/** Thrown when the S3 service answers with an unexpected status. */
export class S3Error extends Error {
  constructor(readonly status: number, operation: string) {
    super(`S3 ${operation} failed with HTTP ${status}`);
    this.name = "S3Error";
  }
}

/** What a client sees while the S3 service does not answer. */
export const S3_UNAVAILABLE = ServiceError.storeNotAnswering("S3").message;

/** Wait for an answer's headers: 10 s, plus a second per MiB of a body sent (a 25 MiB image on a slow link). */
const ANSWER_WAIT_MS = 10_000;
const ANSWER_WAIT_MS_PER_MIB = 1_000;

/**
 * The service's answer to one request, its headers within a bound (a stopped or partitioned
 * service held requests for good: fetch has no timeout of its own), or the 500 naming the store
 * when it cannot be reached. The body is read without a bound once the headers came.
 */
async function answerWithin(client: AwsClient, url: string, init: RequestInit, operation: string, size: number, waitMs = ANSWER_WAIT_MS): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), waitMs + Math.ceil(size / (1024 * 1024)) * ANSWER_WAIT_MS_PER_MIB);
  try {
    return await client.fetch(url, { ...init, signal: controller.signal });
  } catch (err) {
    console.error(`s3: ${operation} ${controller.signal.aborted ? "had no answer in time" : `failed: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`}`);
    throw ServiceError.storeNotAnswering("S3");
  } finally {
    clearTimeout(timer);
  }
}

/** The compare-and-swap backend over one bucket (and prefix). */
export function s3Backend(location: S3Location): VersionedBackend {
  const client = new AwsClient({
    service: "s3",
    region: location.region,
    accessKeyId: location.accessKeyId,
    secretAccessKey: location.secretAccessKey,
  });
  const bucketUrl = `${location.endpoint.replace(/\/$/, "")}/${encodeURIComponent(location.bucket)}`;
  const prefix = location.prefix ?? "";
  const objectUrl = (key: string) => `${bucketUrl}/${encodeKey(prefix + key)}`;

  async function send(url: string, init: RequestInit, operation: string, ok: number[], bodyBytes = init.body instanceof Uint8Array ? init.body.length : 0): Promise<Response> {
    const response = await answerWithin(client, url, init, operation, bodyBytes, location.answerWaitMs);
    if (!ok.includes(response.status)) {
      await response.body?.cancel();
      throw new S3Error(response.status, operation);
    }
    return response;
  }

  async function putIfVersion(key: string, value: Uint8Array, expected: string | null): Promise<string | null> {
    const headers: Record<string, string> = expected === null ? { "If-None-Match": "*" } : { "If-Match": expected };
    const response = await send(objectUrl(key), { method: "PUT", body: new Uint8Array(value), headers }, "PUT", [200, 409, 412]);
    await response.body?.cancel();
    return response.status === 200 ? response.headers.get("ETag") ?? "" : null;
  }

  return {
    async get(key) {
      const response = await send(objectUrl(key), { method: "GET" }, "GET", [200, 404]);
      if (response.status === 404) {
        await response.body?.cancel();
        return null;
      }
      return { bytes: new Uint8Array(await response.arrayBuffer()), version: response.headers.get("ETag") ?? "" };
    },
    async put(key, value) {
      await send(objectUrl(key), { method: "PUT", body: new Uint8Array(value) }, "PUT", [200]);
    },
    async putStream(key, size, body) {
      // A stream's hash is not known before it is sent: the payload goes unsigned, its length
      // and every header signed. The body is cut off with an error when it does not hold `size`
      // bytes, since not every runtime's fetch holds a streamed body to its Content-Length.
      const headers = { "Content-Length": String(size), "X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD" };
      const response = await send(objectUrl(key), { method: "PUT", body: exactLength(body, size), headers, duplex: "half" } as RequestInit, "PUT", [200], size);
      await response.body?.cancel();
    },
    putIf: async (key, value, expected) => (await putIfVersion(key, value, expected)) !== null,
    putIfVersion,
    async delete(key) {
      const head = await send(objectUrl(key), { method: "HEAD" }, "HEAD", [200, 404]);
      if (head.status === 404) return false;
      await send(objectUrl(key), { method: "DELETE" }, "DELETE", [200, 204]);
      return true;
    },
    async has(key) {
      return (await send(objectUrl(key), { method: "HEAD" }, "HEAD", [200, 404])).status === 200;
    },
    async list(keyPrefix) {
      const keys: string[] = [];
      // Pages follow `start-after` (the last key seen), which every S3 implementation
      // supports; some do not resume from continuation tokens.
      let after: string | undefined;
      for (;;) {
        const query = new URLSearchParams({
          "list-type": "2",
          prefix: prefix + keyPrefix,
          "max-keys": String(location.listPageSize ?? 1000),
        });
        if (after !== undefined) query.set("start-after", after);
        const xml = await (await send(`${bucketUrl}?${query}`, { method: "GET" }, "LIST", [200])).text();
        const page = [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((match) => xmlText(match[1]!));
        keys.push(...page.map((key) => key.slice(prefix.length)));
        if (!/<IsTruncated>true<\/IsTruncated>/.test(xml) || page.length === 0) return keys;
        after = page[page.length - 1];
      }
    },
  };
}

/** Options of {@link createS3BlobStore}. */
export interface S3BlobStoreOptions {
  /**
   * Keep JSON arrays (audit days) in blocks of a bounded number of items, so an append moves
   * one block rather than the day (docs/storage.md#audit-days). For the audit store only.
   */
  arrayBlocks?: ArrayBlockOptions;
  /**
   * Keep the record histories' arrays in blocks, every other key one object, so appending a
   * version moves one block rather than the history (docs/storage.md#record-history). For the
   * data store; ignored with `arrayBlocks`.
   */
  historyBlocks?: ArrayBlockOptions;
}

/** A `BlobStore` on an S3 bucket. */
export function createS3BlobStore(location: S3Location, options: S3BlobStoreOptions = {}): BlobStore {
  const backend = s3Backend(location);
  if (options.arrayBlocks !== undefined) return createArrayBlockStore(backend, options.arrayBlocks);
  if (options.historyBlocks !== undefined) return createSomeArraysInBlocksStore(backend, isHistoryArrayKey, options.historyBlocks);
  return createVersionedBlobStore(backend);
}

/**
 * True when the service honours conditional writes: it refuses a second create-only write of
 * one key (If-None-Match: *) and a write naming another version (If-Match). Writes and
 * removes one probe object.
 */
export async function probeConditionalWrites(location: S3Location): Promise<boolean> {
  const backend = s3Backend(location);
  const key = `.conditional-write-probe-${crypto.randomUUID()}`;
  try {
    await backend.putIf(key, new Uint8Array([1]), null);
    // Both conditions are needed: If-None-Match creates a day's next block, If-Match rewrites
    // its last one (some services honour the first and ignore the second).
    if (await backend.putIf(key, new Uint8Array([2]), null)) return false;
    return !(await backend.putIf(key, new Uint8Array([3]), '"not-the-current-etag"'));
  } finally {
    await backend.delete(key).catch(() => false);
  }
}

/** A `KvStore` on an S3 bucket (one small object per key). */
export function createS3KvStore(location: S3Location): KvStore {
  return createVersionedKvStore(s3Backend(location));
}
