// All seven workers in one Cloudflare Worker.
import { serviceOnBindings, createCloudflareWorker } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker(serviceOnBindings);
