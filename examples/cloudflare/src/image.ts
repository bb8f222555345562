// The image worker deployed alone (Cloudflare Images with IMAGE_HOST=cloudflare).
import { imageWorkerOnBindings, createCloudflareWorker } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker(imageWorkerOnBindings);
