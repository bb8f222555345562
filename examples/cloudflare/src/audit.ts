// The audit worker deployed alone.
import { createCloudflareWorker } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker("audit");
