// The keys worker deployed alone.
import { createCloudflareWorker } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker("keys");
