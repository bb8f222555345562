/**
 * @module
 * The ports on one S3 bucket (STORAGE=s3): each store under its own key prefix.
 */
import { systemClock } from "../../core/ports.ts";
import type { ServicePorts } from "../../core/service/service.ts";
import { createS3BlobStore, createS3KvStore, probeConditionalWrites, type S3Location } from "./s3-store.ts";

/** `https://host/bucket` and the credentials, as a location. */
export function s3LocationFromUrl(url: string, region: string, accessKeyId: string, secretAccessKey: string): S3Location {
  const parsed = new URL(url);
  const bucket = decodeURIComponent(parsed.pathname.replace(/^\/|\/$/g, ""));
  return { endpoint: parsed.origin, bucket, region, accessKeyId, secretAccessKey };
}

/** Ports on the bucket, and whether the service honours conditional writes. */
export async function createS3Ports(location: S3Location): Promise<{ ports: ServicePorts; conditionalWrites: boolean }> {
  const at = (prefix: string): S3Location => ({ ...location, prefix });
  const conditionalWrites = await probeConditionalWrites(at(""));
  return {
    ports: {
      // Record histories' arrays in blocks: appending a version moves one block, not the history.
      data: createS3BlobStore(at("data/"), { historyBlocks: { rememberWrites: conditionalWrites } }),
      // Audit days in blocks: an append moves one block, not the day; the block a process
      // wrote is written again unread only where a stale version makes that write fail.
      audit: createS3BlobStore(at("audit/"), { arrayBlocks: { rememberWrites: conditionalWrites } }),
      images: createS3BlobStore(at("images/")),
      users: createS3KvStore(at("users/")),
      clock: systemClock,
    },
    conditionalWrites,
  };
}
