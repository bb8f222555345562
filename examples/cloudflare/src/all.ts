// All seven workers in one Cloudflare Worker.
import { createCloudflareWorker } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker("all");
