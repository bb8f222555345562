// The data worker deployed alone.
import { dataWorkerOnBindings, createCloudflareWorker } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker(dataWorkerOnBindings);
