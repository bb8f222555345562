// The keys worker deployed alone.
import { keysWorkerOnBindings, createCloudflareWorker } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker(keysWorkerOnBindings);
